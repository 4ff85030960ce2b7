"""Name resolution on the tree-sitter tree: what does `te.aot_load` in this scope refer to?

Cheap by construction (no libcst): the module scope is read from module-level statements
only, and a function scope is read only when a call inside it is asked about.
Anything not provably bound to an import is *unknown*, and rules stay silent on unknowns:
local definitions that shadow a name, function parameters, try/except ImportError shims.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import cached_property

from aoti_lsp.analysis.records import record
from aoti_lsp.analysis.source import descendants, whole_words
from aoti_lsp.analysis.treesitter import Node

IMPORT, ALIAS, LOCAL, DEF, SHIM = "import", "alias", "local", "def", "shim"
SCOPE_TYPES = ("function_definition", "lambda", "class_definition")
IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")
# the keywords that open a scope; found by bytes.find, as names are read without `re` (treesitter.py)
_OPENERS = (b"def", b"class", b"lambda")
LOOKUPS = [0]  # binding look-ups made, for the test that def-use stays linear in the uses


@record("name", "kind", "at", "target", "value", "stmt")
class Binding:
    """`at`: the byte offset where the binding happens; `target`: the imported qualified name;
    `value`: the right-hand side of a simple `name = value` assignment; `stmt`: the import / def statement."""

    def __init__(self, name: str, kind: str, at: int, target: str | None = None, value: Node | None = None,
                 stmt: Node | None = None):
        self.name = name
        self.kind = kind
        self.at = at
        self.target = target
        self.value = value
        self.stmt = stmt


@record("node", "kind", "parent", "bindings", "globals", "_offsets", shown=("node", "kind", "parent", "bindings", "globals"))
class Scope:
    """`kind`: module | function | class."""

    def __init__(self, node: Node, kind: str, parent: Scope | None, bindings: dict[str, list[Binding]] | None = None,
                 globals: set[str] | None = None, _offsets: dict[str, list[int]] | None = None):
        self.node = node
        self.kind = kind
        self.parent = parent
        self.bindings = {} if bindings is None else bindings
        self.globals = set() if globals is None else globals
        self._offsets = {} if _offsets is None else _offsets

    def add(self, binding: Binding) -> None:
        self.bindings.setdefault(binding.name, []).append(binding)
        self._offsets.pop(binding.name, None)

    def before(self, name: str, at: int) -> tuple[list[Binding], int]:
        """(the bindings of `name` in offset order, how many of them happen before `at`): a
        bisect over a sorted list, so a use never rescans every binding of its name."""
        found = self.bindings.get(name, [])
        offsets = self._offsets.get(name)
        if offsets is None or len(offsets) != len(found):
            found.sort(key=lambda b: b.at)
            offsets = self._offsets[name] = [b.at for b in found]
        LOOKUPS[0] += 1
        return found, bisect_left(offsets, at)


def dotted_parts(node: Node) -> list[str] | None:
    """`a.b.c` -> ["a", "b", "c"]; None for anything that is not a plain dotted name."""
    if node.type in ("identifier", "attribute"):
        text = node.text
        if _spelt_dotted(text) and not node.has_error:  # spelt as one: its text says, no walk down
            return text.decode().split(".")
    parts: list[str] = []
    while node.type == "attribute":
        attr = node.child_by_field_name("attribute")
        obj = node.child_by_field_name("object")
        if attr is None or obj is None:
            return None
        parts.append(attr.text.decode())
        node = obj
    if node.type != "identifier":
        return None
    parts.append(node.text.decode())
    return parts[::-1]


def _spelt_dotted(text: bytes) -> bool:
    """ASCII names joined by dots, nothing else (no space, comment or bracket inside)."""
    return all(p.replace(b"_", b"a").isalnum() and not p[:1].isdigit() for p in text.split(b"."))


class Names:
    def __init__(self, root: Node):
        self.module = Scope(root, "module", None)
        self._root = root
        self._scopes: dict[int, Scope] = {}
        _read_block(root, self.module)
        # node id -> its scope, its qualified name: rules and facts ask about the same nodes again
        self._scope_of: dict[int, Scope] = {}
        self._resolved: dict[int, str | None] = {}
        self._openers: dict[int, list[tuple[int, int, Node, int, int]]] = {}  # chunk index -> its scopes

    # -- scopes --------------------------------------------------------------------------
    def scope_of(self, node: Node) -> Scope:
        """The innermost scope whose body holds `node` (a def's own name belongs outside).
        Found by byte range among the defs, lambdas and classes of the top-level statement
        holding `node`, not by climbing `.parent`: tree-sitter finds a parent by searching
        down from the root (~2 us a step, ~0.1 s of a dense file's check)."""
        memo = self._scope_of
        found = memo.get(node.id)
        if found is not None:
            return found
        start, end = node.start_byte, node.end_byte
        chunks = self._chunks
        k = bisect_right(chunks[0], start) - 1
        if start == end or k < 0 or end > chunks[1][k]:
            return self._climb(node)  # zero-width, or not inside one top-level statement
        scope = self.module
        for o_start, o_end, opener, n_start, n_end in reversed(self._chunk_openers(k)):
            if o_start > start or o_end < end:
                continue  # starts after it, or ends before it ends: not around it
            if o_start == start and o_end == end:
                if opener.id == node.id:
                    continue  # a def itself belongs to the scope around it
                return self._climb(node)  # a node spanning just what a def spans: ask the tree
            if n_start <= start and end <= n_end:
                continue  # the def's own name
            scope = self._scopes.get(opener.id)  # made already: no need of the scope around it
            if scope is None:
                scope = self._scope(opener, self.scope_of(opener))
            break
        memo[node.id] = scope
        return scope

    def module_function(self, node: Node) -> Node | None:
        """The module-level `def` whose body holds `node` (None inside a class, a lambda or a
        nested def), by its scope: memoised, no climb of `.parent`."""
        scope = self.scope_of(node)
        if scope.node.type != "function_definition" or scope.parent is None or scope.parent.kind != "module":
            return None
        return scope.node

    @cached_property
    def _chunks(self) -> tuple[list[int], list[int], list[Node]]:
        """(start bytes, end bytes, nodes) of the module's top-level statements."""
        children = self._root.children
        return [c.start_byte for c in children], [c.end_byte for c in children], children

    def _chunk_openers(self, k: int) -> list[tuple[int, int, Node, int, int]]:
        """(start, end, node, name start, name end) of each def, lambda and class inside the
        k-th top-level statement, by start: found where their keyword is spelt (one look-up
        and one `.parent` each), not by walking the statement."""
        found = self._openers.get(k)
        if found is None:
            chunk = self._chunks[2][k]
            found = self._openers[k] = []
            text = chunk.text
            base = chunk.start_byte
            for start, end, keyword in whole_words(text, _OPENERS):
                at = base + start
                word = chunk.descendant_for_byte_range(at, base + end)
                if word is None or word.type != keyword.decode():
                    continue  # spelt in a string, a comment or a longer name
                opener = word.parent
                if opener is None or opener.type not in SCOPE_TYPES:
                    continue
                name = opener.child_by_field_name("name")
                n_start, n_end = (name.start_byte, name.end_byte) if name is not None else (-1, -1)
                found.append((opener.start_byte, opener.end_byte, opener, n_start, n_end))
            found.sort(key=lambda o: o[0])
        return found

    def _climb(self, node: Node) -> Scope:
        """scope_of by climbing `.parent`: every ancestor passed keeps its scope too."""
        memo = self._scope_of
        path: list[tuple[int, Node | None]] = []  # (node id, the scope node it opens into, if any)
        scope = self.module
        child, parent = node, node.parent
        while parent is not None:
            opens = parent.type in SCOPE_TYPES and child != parent.child_by_field_name("name")
            path.append((child.id, parent if opens else None))
            known = memo.get(parent.id)
            if known is not None:
                scope = known
                break
            child, parent = parent, parent.parent
        for child_id, opener in reversed(path):
            if opener is not None:
                scope = self._scope(opener, scope)
            memo[child_id] = scope
        memo[node.id] = scope
        return scope

    def _scope(self, node: Node, parent: Scope) -> Scope:
        scope = self._scopes.get(node.id)
        if scope is None:
            scope = self._scopes[node.id] = read_scope(node, parent)
        return scope

    # -- lookup --------------------------------------------------------------------------
    def lookup(self, name: str, at: int, scope: Scope) -> Binding | None:
        first = True
        current: Scope | None = scope
        while current is not None:
            if current.kind == "class" and not first:
                current = current.parent  # class bodies are not visible from nested scopes
                continue
            if name in current.globals and current is not self.module:  # `global x` at module level means nothing
                current = self.module
                first = False
                continue
            found, n = current.before(name, at)
            if n and found[n - 1].value is not None and found[n - 1].value.start_byte <= at < found[n - 1].value.end_byte:
                n -= 1  # read in the value of its own `name = value`: the name is bound after it runs
            if found:
                if n:
                    return found[n - 1]
                if current.kind != "module" or not first:
                    # a function local used before assignment, or a module name read later
                    return found[-1]
                # at module level a use before any binding sees the builtins: fall through
            first = False
            current = current.parent
        return None

    def resolve(self, node: Node, _depth: int = 0) -> str | None:
        """Qualified name of a dotted expression, or None when it is not provably an import."""
        if _depth:
            return self._resolve(node, _depth)
        key = node.id
        if key not in self._resolved:
            self._resolved[key] = self._resolve(node, 0)
        return self._resolved[key]

    def _resolve(self, node: Node, _depth: int) -> str | None:
        parts = dotted_parts(node)
        if parts is None or _depth > 8:
            return None
        binding = self.lookup(parts[0], node.start_byte, self.scope_of(node))
        if binding is None:
            return None
        if binding.kind == IMPORT:
            base = binding.target
        elif binding.kind == ALIAS and binding.value is not None:
            base = self.resolve(binding.value, _depth + 1)
        else:
            return None
        if base is None:
            return None
        return ".".join([base, *parts[1:]])

    def module_aliases(self, qualnames: set[str]) -> set[str]:
        """Module-level names bound to exactly one of `qualnames`: extra tokens a rule must
        look for, since `load(p, "cpu")` never spells aot_load. A module alias (`te` for
        torch._export) needs no token: `te.aot_load(...)` spells the final name itself."""
        return {name for name, target in self._module_targets if target in qualnames}

    @cached_property
    def _module_targets(self) -> list[tuple[str, str]]:
        """(name, qualified name) of each module-level import or alias that resolves: read once
        for every rule's set of names."""
        out = []
        for name, bindings in self.module.bindings.items():
            for b in bindings:
                target = b.target if b.kind == IMPORT else (
                    self.resolve(b.value) if b.kind == ALIAS and b.value is not None else None)
                if target is not None:
                    out.append((name, target))
        return out


# -- reading bindings from statements ------------------------------------------------------
def read_scope(node: Node, parent: Scope | None) -> Scope:
    """The scope a def, lambda or class opens: its parameters and the bindings of its body."""
    scope = Scope(node, "class" if node.type == "class_definition" else "function", parent)
    params = node.child_by_field_name("parameters")
    if params is not None:
        for name in _param_names(params):
            scope.add(Binding(name.text.decode(), LOCAL, name.start_byte))
    body = node.child_by_field_name("body")
    if body is not None and body.type == "block":
        _read_block(body, scope)
    return scope


def _read_block(block: Node, scope: Scope) -> None:
    for stmt in block.named_children:
        _read_statement(stmt, scope)


def _read_statement(stmt: Node, scope: Scope) -> None:
    t = stmt.type
    if t == "import_statement":
        for name in stmt.children_by_field_name("name"):
            if name.type == "aliased_import":
                module = name.child_by_field_name("name").text.decode()
                alias = name.child_by_field_name("alias").text.decode()
                scope.add(Binding(alias, IMPORT, stmt.start_byte, target=module, stmt=stmt))
            else:
                module = name.text.decode()
                top = module.split(".")[0]
                scope.add(Binding(top, IMPORT, stmt.start_byte, target=top, stmt=stmt))
    elif t == "import_from_statement":
        module_node = stmt.child_by_field_name("module_name")
        # a relative import keeps its dots (`.paths.TOWER`): never a torch name, but the
        # project resolves it against the importing file's folder
        module = module_node.text.decode() if module_node is not None else None
        for name in stmt.children_by_field_name("name"):
            if name.type == "aliased_import":
                orig = name.child_by_field_name("name").text.decode()
                local = name.child_by_field_name("alias").text.decode()
            else:
                orig = local = name.text.decode()
            if module is None:
                scope.add(Binding(local, LOCAL, stmt.start_byte))
            else:
                sep = "" if module.endswith(".") else "."
                scope.add(Binding(local, IMPORT, stmt.start_byte, target=f"{module}{sep}{orig}", stmt=stmt))
    elif t == "expression_statement":
        for child in stmt.named_children:
            _read_assignment(child, scope)
    elif t in ("function_definition", "class_definition"):
        name = stmt.child_by_field_name("name")
        if name is not None:
            kind = DEF if t == "function_definition" else LOCAL
            scope.add(Binding(name.text.decode(), kind, stmt.start_byte, stmt=stmt))
    elif t == "decorated_definition":
        inner = stmt.child_by_field_name("definition")
        if inner is not None:
            _read_statement(inner, scope)
    elif t == "global_statement":
        scope.globals.update(c.text.decode() for c in stmt.named_children if c.type == "identifier")
    elif t == "for_statement":
        _bind_targets(stmt.child_by_field_name("left"), scope, stmt.start_byte)
        _read_children_blocks(stmt, scope)
    elif t == "with_statement":
        for item in descendants(stmt, "as_pattern_target", skip=("block", "as_pattern_target")):
            _bind_targets(item, scope, stmt.start_byte)
        _read_children_blocks(stmt, scope)
    elif t == "try_statement":
        _read_try(stmt, scope)
    elif t in ("if_statement", "while_statement", "match_statement", "case_clause"):
        _read_children_blocks(stmt, scope)  # (a match's cases stand in its block)


def _read_children_blocks(stmt: Node, scope: Scope) -> None:
    for child in stmt.named_children:
        if child.type == "block":
            _read_block(child, scope)
        elif child.type.endswith("_clause") or child.type in ("case_clause", "block"):
            _read_children_blocks(child, scope)


def _read_assignment(node: Node, scope: Scope) -> None:
    if node.type == "assignment":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is not None and left.type == "identifier" and right is not None:
            kind = ALIAS if right.type in ("identifier", "attribute") else LOCAL
            scope.add(Binding(left.text.decode(), kind, node.start_byte, value=right))
        else:
            _bind_targets(left, scope, node.start_byte)
        if right is not None and right.type == "assignment":
            _read_assignment(right, scope)
    elif node.type == "augmented_assignment":
        _bind_targets(node.child_by_field_name("left"), scope, node.start_byte)


def _bind_targets(node: Node | None, scope: Scope, at: int) -> None:
    if node is None:
        return
    if node.type == "identifier":
        scope.add(Binding(node.text.decode(), LOCAL, at))
    elif node.type in ("pattern_list", "tuple_pattern", "list_pattern", "as_pattern_target", "list_splat_pattern"):
        for child in node.named_children:
            _bind_targets(child, scope, at)


def _read_try(stmt: Node, scope: Scope) -> None:
    """Read a try statement; names bound both in its body and in an ImportError handler, one
    of them by an import, are a compatibility shim: which import wins is decided at run time, so
    they are unknown. Two plain assignments (a cache probed in the body, rebuilt in the handler)
    are read as any two bindings: a read in either branch sees its own, one after the try neither."""
    body_scope = Scope(stmt, scope.kind, None)
    handler_scope = Scope(stmt, scope.kind, None)
    other_scope = Scope(stmt, scope.kind, None)
    for child in stmt.named_children:
        if child.type == "block":
            _read_block(child, body_scope)
        elif child.type == "except_clause" and _catches_import_error(child):
            _read_children_blocks(child, handler_scope)
        else:
            _read_children_blocks(child, other_scope)
    shimmed = {name for name in set(body_scope.bindings) & set(handler_scope.bindings)
               if any(b.kind == IMPORT for part in (body_scope, handler_scope) for b in part.bindings[name])}
    for part in (body_scope, handler_scope, other_scope):
        scope.globals |= part.globals
        for name, bindings in part.bindings.items():
            for b in bindings:
                if name in shimmed:
                    b = Binding(name, SHIM, b.at, stmt=b.stmt)
                scope.add(b)
    for bindings in scope.bindings.values():
        bindings.sort(key=lambda b: b.at)


def _catches_import_error(clause: Node) -> bool:
    caught = [c for c in clause.named_children if c.type != "block"]
    if not caught:
        return True  # bare except
    text = " ".join(c.text.decode() for c in caught)
    return any(e in text for e in IMPORT_ERRORS)


def _param_names(params: Node):
    for p in params.named_children:
        yield from _names_of(p)


def _names_of(p: Node):
    """The name a parameter binds (none for `*`, `/` or a comment)."""
    if p.type == "identifier":
        yield p
    elif p.type in ("default_parameter", "typed_default_parameter"):
        name = p.child_by_field_name("name")
        if name is not None and name.type == "identifier":
            yield name
    elif p.type in ("typed_parameter", "list_splat_pattern", "dictionary_splat_pattern"):
        for c in p.named_children:
            if c.type == "identifier":
                yield c
                break
            if c.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                yield from _param_names(c)
                break


STARRED = ("list_splat_pattern", "dictionary_splat_pattern", "keyword_separator")


def positional_names(params: Node) -> list[str]:
    """The names a call can give by position (`self` first): those before `*`, `*args` or `**kw`."""
    out = []
    for p in params.named_children:
        if p.type in STARRED or (p.type == "typed_parameter" and any(c.type in STARRED for c in p.named_children)):
            break
        out += [n.text.decode() for n in _names_of(p)]
    return out
