"""Rules: each module in this package defines `RULE`, an instance of a `Rule` subclass.

Adding a rule = a module here + a query in queries/python/ + fixtures in tests/fixtures/<CODE>/.
Nothing in the CLI or the LSP layer changes.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from collections.abc import Iterable

from aoti_lsp.analysis.findings import Finding, Severity

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (~3 ms of a hook run)
if TYPE_CHECKING:
    from typing import ClassVar

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

    def summary_from_text(self, source, config) -> dict | None:
        """The summary, where this rule can give it from the text alone (no parse); None: parse."""
        return None


@lru_cache(maxsize=256)
def minimal(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The tokens that matter for an any-of test: "seq_lengths" adds nothing beside "lengths"."""
    return tuple(t for t in dict.fromkeys(tokens) if not any(o != t and o in t for o in tokens))


@lru_cache(maxsize=None)
def all_rules() -> tuple[Rule, ...]:
    import pkgutil  # the scan: a check imports only its files' rules (rules_for)

    rules = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = _import(f"{__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if rule is not None:
            rules.append(rule)
    codes = [r.code for r in rules]
    if len(codes) != len(set(codes)):
        raise RuntimeError(f"duplicate rule codes: {codes}")
    return tuple(sorted(rules, key=lambda r: r.code))


def rules_for(source, config) -> tuple[Rule, ...]:
    """The rules whose trigger tokens `source` spells (triggers.py), sorted by code, each module
    imported on first use: a file with only AOTI301's tokens imports neither the device nor the
    jagged analysis. Once every rule is imported, all of them (their own `wants` is as cheap as
    this test); every rule where rule options apply (the table does not hold then)."""
    from aoti_lsp.project import triggers

    if all_rules.cache_info().currsize or all(c in _BY_CODE for c in triggers.CODES):
        return all_rules()
    codes = triggers.codes_for(source.has, config)
    if codes is None:
        return all_rules()
    return tuple(rule_by_code(c) for c in codes)


def _import(name: str):
    """importlib.import_module(name) for an absolute name, without the importlib package (it
    imports warnings: ~0.4 ms of a hook run)."""
    __import__(name)
    return sys.modules[name]


def rule_by_code(code: str) -> Rule | None:
    # one look-up per diagnostic made (the editor, every reporter): a dict, filled per code
    code = code.upper()
    found = _BY_CODE.get(code, _MISSING)
    if found is _MISSING:
        found = _BY_CODE[code] = _load(code)
    return found


_MISSING = object()
_BY_CODE: dict[str, Rule | None] = {}


def _load(code: str) -> Rule | None:
    """The rule of `code`, importing only its module (aoti001.py for AOTI001); every rule's
    module is scanned only for a code the table does not know."""
    from aoti_lsp.project import triggers

    if code in triggers.CODES:
        try:
            rule = getattr(_import(f"{__name__}.{code.lower()}"), "RULE", None)
        except ModuleNotFoundError:  # a rule whose module has another name: found by the scan
            rule = None
        if rule is not None and rule.code == code:
            return rule
    return next((r for r in all_rules() if r.code == code), None)
