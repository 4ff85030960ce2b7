"""What a rule sees (Context) and what an analysis returns (Result). Rules import this module,
never the engine that runs them (engine.py imports the rules)."""

from __future__ import annotations

from functools import cached_property

from aoti_lsp.analysis.findings import Finding
from aoti_lsp.analysis.names import Names
from aoti_lsp.analysis.records import record
from aoti_lsp.analysis.source import Source
from aoti_lsp.analysis.treesitter import Node
from aoti_lsp.project.config import Config


@record("findings", "errors", "skipped")
class Result:
    """`errors`: rules that raised (reported, never fatal); `skipped`: why the file was not
    analysed (budget.py), if it was not."""

    def __init__(self, findings: list[Finding] | None = None, errors: list[str] | None = None, skipped: str | None = None):
        self.findings = [] if findings is None else findings
        self.errors = [] if errors is None else errors
        self.skipped = skipped


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
            # a name spelt right before "(" is called, never aliased (`torch._export.aot_load(`):
            # no parents to climb for most mentions; a tree with errors is read in full
            data, whole = self.source.data, not self.source.tree.root_node.has_error
            found = self._alias_cache[final] = [
                a for a in (_alias_made_by(i) for i in self.source.identifiers(final)
                            if not (whole and data[i.end_byte:i.end_byte + 1] == b"(")) if a]
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
    node, up = ident, parent  # each parent read once: a read makes a new Node (~1,000s of names a file)
    while up is not None and up.type == "attribute" and up.child_by_field_name("attribute") == node:
        node, up = up, up.parent
    assign = up
    if assign is not None and assign.type == "assignment" and assign.child_by_field_name("right") == node:
        left = assign.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return left.text.decode()
    return None
