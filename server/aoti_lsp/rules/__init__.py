"""Rules: each module in this package defines `RULE`, an instance of a `Rule` subclass.

Adding a rule = a module here + a query in queries/python/ + fixtures in tests/fixtures/<CODE>/.
Nothing in the CLI or the LSP layer changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar, Iterable

from aoti_lsp.analysis.findings import Finding, Severity

if TYPE_CHECKING:
    from aoti_lsp.analysis.context import Context

DOCS_URL = "https://github.com/aoti-lsp/aoti-lsp/blob/main/docs/rules/{code}.md"


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, shown in docs
    summary: ClassVar[str]  # one line
    severity: ClassVar[Severity] = Severity.WARNING
    deprecated: ClassVar[bool] = False
    triggers: ClassVar[tuple[str, ...]]  # a file holding none of these is never parsed for this rule
    requires_any: ClassVar[tuple[str, ...]] = ()  # ...nor one holding none of these (when set)
    summary_triggers: ClassVar[tuple[str, ...] | None] = None  # for `summarize`; default: triggers
    explanation: ClassVar[str]  # markdown: what goes wrong and why (from aoti-facts)
    fix_explanation: ClassVar[str] = ""
    # Fixit-style examples: they drive tests/test_rule_examples.py and the docs.
    invalid: ClassVar[tuple[str, ...]] = ()
    valid: ClassVar[tuple[str, ...]] = ()

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    def check(self, ctx: "Context") -> Iterable[Finding]:
        raise NotImplementedError

    def triggers_for(self, config) -> tuple[str, ...]:
        """Trigger tokens under a configuration (a rule with configurable names overrides this)."""
        return self.triggers

    def wants(self, source, config) -> bool:
        """Whether `check` can find anything in this source: decided from its text, before parsing."""
        # requires_any first: the rarer group, so most files are settled by fewer look-ups
        return (not self.requires_any or any(map(source.has, minimal(self.requires_any)))) and any(
            map(source.has, minimal(self.triggers_for(config))))

    def relevant(self, source, project) -> bool:
        """A second, cross-file gate, once the project's summaries are known (still no parse)."""
        return True

    def wants_summary(self, source, config) -> bool:
        tokens = self.summary_triggers if self.summary_triggers is not None else self.triggers_for(config)
        return any(map(source.has, minimal(tokens)))


@lru_cache(maxsize=256)
def minimal(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The tokens that matter for an any-of test: "seq_lengths" adds nothing beside "lengths"."""
    return tuple(t for t in dict.fromkeys(tokens) if not any(o != t and o in t for o in tokens))


@lru_cache(maxsize=None)
def all_rules() -> tuple[Rule, ...]:
    rules = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if rule is not None:
            rules.append(rule)
    codes = [r.code for r in rules]
    if len(codes) != len(set(codes)):
        raise RuntimeError(f"duplicate rule codes: {codes}")
    return tuple(sorted(rules, key=lambda r: r.code))


def rule_by_code(code: str) -> Rule | None:
    return _by_code().get(code.upper())


@lru_cache(maxsize=None)
def _by_code() -> dict[str, Rule]:
    # one look-up per diagnostic made (the editor, every reporter): not a scan of every rule
    return {r.code: r for r in all_rules()}
