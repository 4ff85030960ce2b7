"""text -> tree -> resolved names -> rule findings. No I/O, no LSP, no torch."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property

from tree_sitter import Node

from aoti_lsp.config import Config
from aoti_lsp.findings import Finding
from aoti_lsp.names import Names
from aoti_lsp.noqa import is_suppressed
from aoti_lsp.rules import Rule, all_rules
from aoti_lsp.source import Source

log = logging.getLogger(__name__)


@dataclass
class Result:
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # rules that raised: reported, never fatal


class Context:
    """What a rule sees: the source, its names, and shared, cached look-ups."""

    def __init__(self, source: Source, config: Config, project=None):
        self.source = source
        self.config = config
        self.project = project  # cross-file facts, when the caller has them
        self._calls: dict[frozenset, list[tuple[Node, str]]] = {}

    @cached_property
    def names(self) -> Names:
        return Names(self.source.tree.root_node)

    def calls_to(self, qualnames: set[str] | frozenset[str]) -> list[tuple[Node, str]]:
        """(call node, qualified name) for every call of one of `qualnames`, however imported
        or aliased; searched only where the final name or a module-level alias is spelt."""
        key = frozenset(qualnames)
        if key not in self._calls:
            tokens = {q.rsplit(".", 1)[-1] for q in key} | self.names.module_aliases(set(key))
            out = []
            for _, caps in self.source.matches("calls", sorted(tokens)):
                call, func = caps["call"][0], caps["func"][0]
                qualname = self.names.resolve(func)
                if qualname in key:
                    out.append((call, qualname))
            self._calls[key] = sorted(out, key=lambda c: c[0].start_byte)
        return self._calls[key]


def analyze(source: Source, config: Config | None = None, rules: tuple[Rule, ...] | None = None, project=None) -> Result:
    config = config or Config()
    result = Result()
    active = [
        r for r in (rules if rules is not None else all_rules())
        if config.enabled(r.code, source.path) and source.contains_any(r.triggers)
    ]
    if not active:
        return result
    ctx = Context(source, config, project)
    for rule in active:
        try:
            for f in rule.check(ctx):
                f.path = source.path
                result.findings.append(f)
        except Exception as exc:  # a broken rule must not take the file (or the server) down
            log.exception("rule %s failed on %s", rule.code, source.path)
            result.errors.append(f"{source.path}: internal error in rule {rule.code}: {exc!r}")
    result.findings = [f for f in result.findings if not _suppressed(source, f)]
    result.findings.sort(key=Finding.sort_key)
    return result


def _suppressed(source: Source, finding: Finding) -> bool:
    line = source.lines.line_of(finding.start)
    text = source.lines.line_bytes(line)
    if b"noqa" not in text.lower():
        return False
    # the marker must be a real comment, not text inside a string
    at = source.lines.starts[line] + text.lower().index(b"noqa")
    node = source.tree.root_node.descendant_for_byte_range(at, at + 1)
    return node is not None and node.type == "comment" and is_suppressed(text, finding.code)
