"""text -> tree -> resolved names -> rule findings. No I/O, no LSP, no torch."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property

from tree_sitter import Node

from aoti_lsp.analysis import budget
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.findings import Finding
from aoti_lsp.analysis.names import Names
from aoti_lsp.analysis.noqa import is_suppressed
from aoti_lsp.rules import Rule, all_rules
from aoti_lsp.analysis.source import Source

log = logging.getLogger(__name__)


@dataclass
class Result:
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # rules that raised: reported, never fatal
    skipped: str | None = None  # why the file was not analysed (budget.py), if it was not


class Context:
    """What a rule sees: the source, its names, and shared, cached look-ups."""

    def __init__(self, source: Source, config: Config, project=None):
        self.source = source
        self.config = config
        self.project = project  # cross-file facts, when the caller has them
        self._calls: dict[frozenset, list[tuple[Node, str]]] = {}
        self._alias_cache: dict[str, list[str]] = {}
        self._token_cache: dict[str, list[tuple[Node, str | None]]] = {}
        # analyses several rules share (devices, jagged), keyed by module: they live and die
        # with this Context (a module-level weak map whose values hold the Context never frees it)
        self.shared: dict = {}
        # what depends on other files (artifact keys resolved through the project, migration
        # plans): made again for each pass that reuses this Context (reuse_context)
        self.lookups: dict = {}

    @cached_property
    def facts(self):
        """The program facts of this file (facts.py), built once for every rule and fix."""
        from aoti_lsp.analysis.facts import Facts

        return Facts(self)

    @cached_property
    def names(self) -> Names:
        return Names(self.source.tree.root_node)

    def calls_to(self, qualnames: set[str] | frozenset[str]) -> list[tuple[Node, str]]:
        """(call node, qualified name) for every call of one of `qualnames`, however imported
        or aliased. Found from where the names are spelt (bytes.find), not by walking the
        tree: the cost follows the number of mentions, not the size of the file."""
        key = frozenset(qualnames)
        if key not in self._calls:
            finals = {q.rsplit(".", 1)[-1] for q in key}
            tokens = set(finals) | self.names.module_aliases(set(key))
            self.source.find_words(tokens)
            for final in finals:  # aliases made inside functions: `from torch._export import aot_load as load`
                tokens.update(self._aliases(final))
            out, seen = [], set()
            for token in tokens:
                for call, qualname in self._token_calls(token):
                    if call.id in seen:
                        continue
                    seen.add(call.id)
                    if qualname in key:
                        out.append((call, qualname))
            self._calls[key] = sorted(out, key=lambda c: c[0].start_byte)
        return self._calls[key]

    def _aliases(self, final: str) -> list[str]:
        found = self._alias_cache.get(final)
        if found is None:
            found = self._alias_cache[final] = [a for a in map(_alias_made_by, self.source.identifiers(final)) if a]
        return found

    def _token_calls(self, token: str) -> list[tuple[Node, str | None]]:
        """(call, its qualified name) of each call whose function's final name is `token`:
        found once, whichever rule's set of names asks first."""
        found = self._token_cache.get(token)
        if found is None:
            found = []
            for ident in self.source.identifiers(token):
                call, func = _call_of(ident)
                if call is not None:
                    found.append((call, self.names.resolve(func)))
            self._token_cache[token] = found  # stored whole: a cut analysis leaves no partial entry
        return found


def _call_of(ident: Node) -> tuple[Node | None, Node]:
    """(the call, its function expression) when `ident` is the final name of what is called."""
    func, parent = ident, ident.parent
    if parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") == ident:
        func, parent = parent, parent.parent
    if parent is not None and parent.type == "call" and parent.child_by_field_name("function") == func:
        return parent, func
    return None, func


def _alias_made_by(ident: Node) -> str | None:
    """`load` in `from m import aot_load as load` or `load = torch._export.aot_load`."""
    parent = ident.parent
    if parent is not None and parent.type == "dotted_name" and parent.parent is not None and parent.parent.type == "aliased_import":
        alias = parent.parent.child_by_field_name("alias")
        return alias.text.decode() if alias is not None else None
    node = ident
    while node.parent is not None and node.parent.type == "attribute" and node.parent.child_by_field_name("attribute") == node:
        node = node.parent
    assign = node.parent
    if assign is not None and assign.type == "assignment" and assign.child_by_field_name("right") == node:
        left = assign.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return left.text.decode()
    return None


def analyze(source: Source, config: Config | None = None, rules: tuple[Rule, ...] | None = None, project=None) -> Result:
    """The findings of one file, within the time budget (budget.py)."""
    try:
        with budget.deadline():
            return _analyze(source, config, rules, project)
    except budget.OverBudget as exc:
        source.context = None  # cut anywhere: the next pass starts afresh, not from half-filled caches
        if budget.armed():
            raise  # an enclosing deadline (a whole fix run) owns it
        return Result(errors=[f"{source.path}: {exc}"], skipped=str(exc))


def _analyze(source: Source, config: Config | None, rules, project) -> Result:
    config = config or Config()
    result = Result()
    active = [
        r for r in (rules if rules is not None else all_rules())
        if config.enabled(r.code, source.path) and r.wants(source, config) and r.relevant(source, project)
    ]
    if not active:
        return result
    ctx = reuse_context(source, config, project)
    for rule in active:
        try:
            for f in rule.check(ctx):
                f.path = source.path
                result.findings.append(f)
        except Exception as exc:  # a broken rule must not take the file (or the server) down
            if _unparsable(exc):  # code nested too deep, or libcst rejects it: the file's limit, not a bug
                result.errors.append(f"{source.path}: note: {rule.code} skipped this file: {_short(exc)}")
                continue
            log.exception("rule %s failed on %s", rule.code, source.path)
            result.errors.append(f"{source.path}: internal error in rule {rule.code}: {exc!r}")
    result.findings = [f for f in result.findings if not _suppressed(source, f)]
    result.findings.sort(key=Finding.sort_key)
    return result


def reuse_context(source: Source, config: Config, project=None) -> Context:
    """The Context of `source`'s last pass (a summary's or a check's: names and facts, what the
    file's own code says) when made under `config`, else a new one; kept on `source` for the
    next pass. `project`: what this pass may read of other files (None: a summary)."""
    ctx = getattr(source, "context", None)
    if ctx is None or ctx.config != config:
        ctx = source.context = Context(source, config, project)
        return ctx
    ctx.project = project
    ctx.lookups = {}
    devices = ctx.shared.get("devices")
    if devices is not None:
        devices.new_analysis()  # its artifact look-ups depend on the project
    return ctx


def _unparsable(exc: BaseException) -> bool:
    # by name: libcst is imported only when a fix is built
    return isinstance(exc, RecursionError) or type(exc).__name__ == "ParserSyntaxError"


def _short(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply to analyse"
    return "libcst cannot parse it: " + str(exc).strip().splitlines()[0][:120]


def _suppressed(source: Source, finding: Finding) -> bool:
    line = source.lines.line_of(finding.start)
    text = source.lines.line_bytes(line)
    if b"noqa" not in text.lower():
        return False
    # the marker must be a real comment, not text inside a string
    at = source.lines.starts[line] + text.lower().index(b"noqa")
    node = source.tree.root_node.descendant_for_byte_range(at, at + 1)
    return node is not None and node.type == "comment" and is_suppressed(text, finding.code)
