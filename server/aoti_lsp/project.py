"""Cross-file facts. Each rule that needs other files defines `summarize(ctx)`, returning a
small picklable value for one file (no tree nodes); the project keeps those per file and
rules read them back through `ctx.project`. Kept cheap: tree-sitter only, no libcst, no torch.

The CLI summarises every candidate file before checking any; the server summarises files of
the workspace when it starts and again whenever one is opened, changed or saved.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from aoti_lsp import budget
from aoti_lsp.config import Config
from aoti_lsp.engine import Context
from aoti_lsp.rules import all_rules
from aoti_lsp.source import Source

log = logging.getLogger(__name__)


def summarizers(config: Config | None = None):
    return [r for r in all_rules() if hasattr(r, "summarize") and (config is None or config.enabled(r.code))]


def summarize(source: Source, config: Config | None = None) -> dict[str, Any]:
    """{rule code: summary} for one file; rules whose triggers are absent are skipped."""
    out: dict[str, Any] = {}
    rules = [r for r in summarizers(config) if r.wants_summary(source, config or Config())]
    if not rules:
        return out
    ctx = Context(source, config or Config())
    try:
        with budget.deadline():  # a summary that never ends must not hang the run (issue 11)
            for rule in rules:
                try:
                    value = rule.summarize(ctx)
                except Exception:
                    log.exception("summary of %s failed for %s", rule.code, source.path)
                    continue
                if value:
                    out[rule.code] = value
    except budget.OverBudget:
        if budget.armed():
            raise
        log.warning("summary of %s: over the time budget, skipped", source.path)
        return {}
    return out


@dataclass
class Project:
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)  # path -> code -> summary
    version: int = 0  # bumps on every change: cheap staleness check for callers

    def update(self, path: str, summary: dict[str, Any]) -> bool:
        """Store a file's summary; True when it changed (dependents need a re-check)."""
        if self.summaries.get(path) == summary:
            return False
        if summary:
            self.summaries[path] = summary
        else:
            self.summaries.pop(path, None)
        self.version += 1
        return True

    def remove(self, path: str) -> bool:
        if self.summaries.pop(path, None) is not None:
            self.version += 1
            return True
        return False

    def of(self, code: str) -> dict[str, Any]:
        """path -> summary of one rule, across the project."""
        return {p: s[code] for p, s in self.summaries.items() if code in s}
