"""Program facts of one file, read by every rule and fix: what a name holds at a point (def-use
by bisect), constant strings, integers and paths, the AOTI sites (compile, export, package,
load) and every call of a loaded model, however it travels (a local, `self.<attr>`, a module
global set lazily under `global`, the return value of a helper).

Built once per analysis (`Context.facts`), from the tree-sitter tree only. Names imported from
other modules of the project evaluate to *references* (`ref()`) inside path strings; the
project resolves them (`project.Project.resolve`), so an artifact path built in one module is
the same key in another.
"""

from __future__ import annotations

import os
import posixpath
from bisect import bisect_left
from functools import cached_property

from aoti_lsp.analysis import tables
from aoti_lsp.analysis.records import record
from aoti_lsp.analysis.names import ALIAS, DEF, IMPORT, LOCAL
from aoti_lsp.analysis.source import absolute
from aoti_lsp.analysis.treesitter import Node

API = tables.api()
OLD_COMPILE, NEW_COMPILE, EXPORT = API["old_compile"], API["new_compile"], API["export"]
OLD_LOAD, NEW_LOAD = API["old_load"], API["new_load"]
SET_DEFAULT, SET_DTYPE, MARK_DYNAMIC = set(API["set_default_device"]), set(API["set_default_dtype"]), set(API["mark_dynamic"])
LOADS = {**OLD_LOAD, **NEW_LOAD}
OUTPUT_PATH = "aot_inductor.output_path"
PATH_JOIN = {"os.path.join", "posixpath.join", "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"}
PATHLIB = {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"}
MAX_DEPTH = 24
CWD = {"os.getcwd", "pathlib.Path.cwd", "pathlib.PosixPath.cwd"}  # a relative path means the same folder
PRIVATE_DIRS = {"tempfile.mkdtemp", "tempfile.TemporaryDirectory"}  # a folder made for this run: no other program knows its name
PRIVATE = "${private "  # starts the key of a path inside such a folder
REF = "\x00"  # brackets a reference to a constant of another module inside a path string

# a binding made inside one of these (relative to the use) may not have run
_BRANCHES = {"if_statement", "elif_clause", "else_clause", "for_statement", "while_statement", "try_statement",
             "except_clause", "match_statement", "case_clause", "block"}
_ALWAYS = {"function_definition", "class_definition", "with_statement", "module", "finally_clause"}
_SCOPES = ("function_definition", "class_definition", "module")  # where _conditional stops
_PATH_OF_ONE = ("os.path.dirname", "os.path.abspath", "os.path.realpath", "os.fspath")  # _str_value: a path of its argument
_PATH_METHODS = (b"joinpath", b"resolve", b"absolute")  # _str_value: the pathlib methods it reads


# -- small tree helpers ---------------------------------------------------------------------------
def unwrap(node: Node | None) -> Node | None:
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def bind(call: Node, params: tuple[str, ...]) -> tuple[dict[str, Node], bool]:
    """A call's arguments by parameter name (values); False when *args/**kwargs hide some."""
    out: dict[str, Node] = {}
    args = call.child_by_field_name("arguments")
    complete = True
    if args is None or args.type != "argument_list":
        return out, False
    i = 0
    for a in args.named_children:
        if a.type == "comment":
            continue
        if a.type in ("list_splat", "dictionary_splat"):
            complete = False
        elif a.type == "keyword_argument":
            name, value = a.child_by_field_name("name"), a.child_by_field_name("value")
            if name is not None and value is not None:
                out[name.text.decode()] = value
        else:
            if i < len(params):
                out[params[i]] = a
            i += 1
    return out, complete


def static_export(call: Node) -> bool:
    """An export call that says no dimension is dynamic: no `dynamic_shapes` (nor the old
    `constraints`), or None, and no *args/**kwargs that could hold one. torch.export then keeps
    every size of the example (`range_constraints {}`, measured): its package reads the example's
    sizes whatever a call passes (AOTI201's message; the migration of `ep.module()`)."""
    bound, complete = bind(call, ())
    return complete and all(unwrap(bound[k]).type == "none" for k in ("dynamic_shapes", "constraints") if k in bound)


def argument_of(value: Node) -> Node:
    """The whole argument holding `value` (the keyword_argument for `k=v`)."""
    return value.parent if value.parent is not None and value.parent.type == "keyword_argument" else value


_PLAIN_PREFIXES = (b"", b"r", b"R", b"u", b"U")


def _plain_body(node: Node, start: Node) -> str | None:
    """The value of a literal with nothing to unescape or translate (no backslash, no "\\r", no
    quote inside), read off its text: what ast.literal_eval would say, without compiling it.
    None: let literal_eval decide."""
    text, opening = node.text, start.text
    quote = opening.lstrip(b"rRuU")
    if opening[:len(opening) - len(quote)] not in _PLAIN_PREFIXES or quote not in (b'"', b"'", b'"""', b"'''") \
            or len(text) < len(opening) + len(quote) or not text.endswith(quote) or node.has_error:
        return None
    body = text[len(opening):len(text) - len(quote)]
    if b"\\" in body or b"\r" in body or b"\x00" in body or quote[:1] in body or (len(quote) == 1 and b"\n" in body):
        return None
    return body.decode()


def string_value(node: Node | None) -> str | None:
    """A plain (non-f, non-bytes) string literal's value."""
    if node is None:
        return None
    if node.type == "concatenated_string":
        parts = [string_value(c) for c in node.named_children]
        return None if any(p is None for p in parts) else "".join(parts)
    if node.type != "string":
        return None
    start = node.named_child(0)
    if start is None or start.type != "string_start":
        return None
    prefix = start.text
    if b"f" in prefix or b"F" in prefix or b"b" in prefix or b"B" in prefix:
        return None
    plain = _plain_body(node, start)
    if plain is not None:
        return plain
    import ast  # a string with escapes only (~2 ms to import: most runs never need it)

    try:
        value = ast.literal_eval(node.text.decode())
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def is_fstring(node: Node) -> bool:
    start = node.named_children[0] if node.type == "string" and node.named_children else None
    return start is not None and start.type == "string_start" and "f" in start.text.decode().lower()


def ref(target: str, folder: str) -> str:
    """A reference to `target` (`pkg.paths.TOWER`, `.paths.TOWER`) imported by a file in `folder`."""
    return f"{REF}{folder}|{target}{REF}"


def has_ref(value: str) -> bool:
    return REF in value


def normalize(value: str) -> str | None:
    """The key of a path: normalised, unless a reference it holds must be resolved first."""
    if not value:
        return None
    if has_ref(value):
        return value
    key = posixpath.normpath(value)
    return key if key not in (".", "") else None


@record("call", "qualname", "model", "args", "kwargs", "dynamic", "path_node", "export", "dynamic_known")
class CompileSite:
    """`export`: the torch.export.export call (new API); `dynamic_known` False: an fx.GraphModule
    (torch._inductor.aot_compile), dims unknown."""

    def __init__(self, call: Node, qualname: str, model: Node | None = None, args: Node | None = None,
                 kwargs: Node | None = None, dynamic: Node | None = None, path_node: Node | None = None,
                 export: Node | None = None, dynamic_known: bool = True):
        self.call = call
        self.qualname = qualname
        self.model = model
        self.args = args
        self.kwargs = kwargs
        self.dynamic = dynamic
        self.path_node = path_node
        self.export = export
        self.dynamic_known = dynamic_known


@record("call", "qualname", "path_node", "device_node", "index_node", "index_arg")
class LoadSite:
    """`device_node`: the device argument (old API); `index_node`: device_index (new API);
    `index_arg`: the whole argument (keyword_argument or positional)."""

    def __init__(self, call: Node, qualname: str, path_node: Node | None = None, device_node: Node | None = None,
                 index_node: Node | None = None, index_arg: Node | None = None):
        self.call = call
        self.qualname = qualname
        self.path_node = path_node
        self.device_node = device_node
        self.index_node = index_node
        self.index_arg = index_arg

    @property
    def old(self) -> bool:
        return self.qualname in OLD_LOAD


class Facts:
    def __init__(self, ctx):
        self.ctx = ctx
        self.src = ctx.source
        self.names = ctx.names
        self._compile_names_found = False

    # -- calls of interest ------------------------------------------------------------------
    @cached_property
    def calls(self) -> list[tuple[Node, str]]:
        """(call, qualified name) of every AOTI API call of the file, found from where a final
        name (or an alias of one) is spelt: the cost follows the mentions, not the file size."""
        wanted = {*OLD_COMPILE, *NEW_COMPILE, *EXPORT, *OLD_LOAD, *NEW_LOAD, *SET_DEFAULT, *SET_DTYPE, *MARK_DYNAMIC}
        return self.ctx.calls_to(wanted)

    def calls_of(self, qualnames) -> list[tuple[Node, str]]:
        key = frozenset(qualnames)
        found = self._calls_of.get(key)
        if found is None:
            found = self._calls_of[key] = [(c, q) for c, q in self.calls if q in key]
        return found

    @cached_property
    def _calls_of(self) -> dict[frozenset, list[tuple[Node, str]]]:
        return {}

    def qualname(self, call: Node) -> str | None:
        func = call.child_by_field_name("function")
        return self.names.resolve(func) if func is not None and func.type in ("identifier", "attribute") else None

    @cached_property
    def compiles(self) -> list[CompileSite]:
        return [s for s in (self._compile_site(c, q) for c, q in self.calls_of({*OLD_COMPILE, *NEW_COMPILE})) if s]

    @cached_property
    def loads(self) -> list[LoadSite]:
        out = []
        for call, q in self.calls_of(LOADS):
            bound, _ = bind(call, LOADS[q])
            site = LoadSite(call, q, bound.get("so_path", bound.get("path")))
            if q in OLD_LOAD:
                site.device_node = bound.get("device")
            else:
                site.index_node = bound.get("device_index")
                site.index_arg = argument_of(site.index_node) if site.index_node is not None else None
            out.append(site)
        return out

    def compile_of(self, call: Node) -> CompileSite | None:
        """The compile site of a compile call (by id: a lookup, not a scan of every compile)."""
        return self._compile_by_call.get(call.id)

    @cached_property
    def _compile_by_call(self) -> dict[int, CompileSite]:
        return _by_call(self.compiles)

    def load_of(self, call: Node) -> LoadSite | None:
        """The load site of a load call (by id: a lookup, not a scan of every load)."""
        return self._load_by_call.get(call.id)

    @cached_property
    def _load_by_call(self) -> dict[int, LoadSite]:
        return _by_call(self.loads)

    def _compile_site(self, call: Node, q: str) -> CompileSite | None:
        if q in OLD_COMPILE:
            params = OLD_COMPILE[q]
            bound, _ = bind(call, params)
            site = CompileSite(call, q, bound.get(params[0]), bound.get("args"), bound.get("kwargs"),
                               bound.get("dynamic_shapes"), dynamic_known=q == "torch._export.aot_compile")
            options = self.deref(bound.get("options"), call.start_byte)
            if options is not None and options.type == "dictionary":
                for pair in options.named_children:
                    if pair.type == "pair" and string_value(pair.child_by_field_name("key")) == OUTPUT_PATH:
                        site.path_node = pair.child_by_field_name("value")
            return site
        bound, _ = bind(call, NEW_COMPILE[q])
        site = CompileSite(call, q, path_node=bound.get("package_path"))
        export = self.deref(bound.get("exported_program"), call.start_byte)
        if export is not None and export.type == "call" and self.qualname(export) in EXPORT:
            eb, _ = bind(export, EXPORT["torch.export.export"])
            site.export = export
            site.model, site.args, site.kwargs = eb.get("mod"), eb.get("args"), eb.get("kwargs")
            site.dynamic = eb.get("dynamic_shapes")
        return site

    # -- def-use ----------------------------------------------------------------------------
    def annotation(self, binding) -> Node | None:
        """The one name or `a.B` a parameter `binding` is annotated with (`model: ExportedProgram`),
        or None: not a parameter, not annotated, or a subscript or string."""
        ident = self.src.tree.root_node.descendant_for_byte_range(binding.at, binding.at + len(binding.name.encode()))
        param = ident.parent if ident is not None and ident.type == "identifier" else None
        if param is None or param.type not in ("typed_parameter", "typed_default_parameter") \
                or param.parent is None or param.parent.type != "parameters":
            return None
        annotation = param.child_by_field_name("type")
        inner = annotation.named_children[0] if annotation is not None and annotation.named_child_count == 1 else None
        return inner if inner is not None and inner.type in ("identifier", "attribute") else None

    def binding_value(self, ident: Node, at: int) -> tuple[Node, object] | None:
        """The value a name holds at `at`, when a single straight-line assignment provides it."""
        key = (ident.id, min(at, ident.start_byte))  # all that the answer depends on
        if key not in self._binding_values:
            self._binding_values[key] = self._binding_value(ident, at)
        return self._binding_values[key]

    @cached_property
    def _binding_values(self) -> dict[tuple[int, int], tuple[Node, object] | None]:
        return {}

    @cached_property
    def _module_bindings(self) -> set[int]:
        """ids of the module scope's bindings (all read when names.py starts)."""
        return {id(b) for found in self.names.module.bindings.values() for b in found}

    def _binding_value(self, ident: Node, at: int) -> tuple[Node, object] | None:
        name = ident.text.decode()
        scope = self.names.scope_of(ident)
        binding = self.names.lookup(name, min(at, ident.start_byte), scope)
        if binding is None or binding.kind not in (LOCAL, ALIAS):
            return None
        value = binding.value if binding.value is not None else self._unpacked(binding, name)
        if value is None:
            return None
        module = self.names.module.bindings.get(name, [])
        in_module = id(binding) in self._module_bindings
        if in_module and scope is not self.names.module and len(module) > 1 and not _called_here(scope, self.names.module):
            return None  # which module-level value a function sees depends on when it is called
        if binding.at >= min(at, ident.start_byte) and (in_module == (scope is self.names.module)):
            return None  # used before it is assigned
        if self._conditional(value, ident):
            return None
        return value, binding

    def _unpacked(self, binding, name: str) -> Node | None:
        """`B, D = 2, 10`: the element of a literal right-hand side that `name` receives;
        `with tempfile.TemporaryDirectory() as d`: the call (d is the folder it makes)."""
        node = self.src.tree.root_node.descendant_for_byte_range(binding.at, binding.at)
        while node is not None and node.type != "with_statement" and node.start_byte == binding.at:
            node = node.parent
        if node is not None and node.type == "with_statement" and node.start_byte == binding.at:
            return self._with_value(node, name)
        node = self.src.tree.root_node.descendant_for_byte_range(binding.at, binding.at)
        while node is not None and not (node.type == "assignment" and node.start_byte == binding.at):
            node = node.parent if node.parent is not None and node.parent.start_byte == binding.at else None
        if node is None:
            return None
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None or left.type not in ("pattern_list", "tuple_pattern", "list_pattern"):
            return None
        right = unwrap(right)
        if right.type not in ("expression_list", "tuple", "list"):
            return None
        targets = [c for c in left.named_children if c.type != "comment"]
        values = [c for c in right.named_children if c.type != "comment"]
        if len(targets) != len(values) or any(t.type != "identifier" for t in targets):
            return None
        return next((v for t, v in zip(targets, values) if t.text.decode() == name), None)

    def _with_value(self, stmt: Node, name: str) -> Node | None:
        for item in stmt.named_children[0].named_children if stmt.named_children else ():
            value = item.child_by_field_name("value") if item.type == "with_item" else None
            if value is None or value.type != "as_pattern":
                continue
            target = value.child_by_field_name("alias")
            call = unwrap(value.named_children[0]) if value.named_children else None
            if target is not None and target.text.decode() == name and call is not None and call.type == "call" \
                    and self.qualname(call) == "tempfile.TemporaryDirectory":
                return call
        return None

    def _conditional(self, value: Node, use: Node) -> bool:
        """Whether `value` may not have run by `use`: it sits in a lambda or comprehension, or in a
        branch that does not also hold `use`. The branches around a value are found once (a
        value is read by many uses: ~9,000 asks of ~5,700 values in a dense file)."""
        found = self._branches_around.get(value.id)
        if found is None:
            found = self._branches_around[value.id] = _branches_around(value)
        spans, lambda_ = found
        at = use.start_byte
        for start, end in spans:
            if not (start <= at < end):
                return True
        return lambda_

    @cached_property
    def _branches_around(self) -> dict[int, tuple[tuple[tuple[int, int], ...], bool]]:
        return {}

    def deref(self, node: Node | None, at: int, depth: int = 0) -> Node | None:
        """Follow simple name bindings to the expression they hold."""
        node = unwrap(node)
        while node is not None and node.type == "identifier" and depth < MAX_DEPTH:
            found = self.binding_value(node, at)
            if found is None:
                return node
            node, binding = unwrap(found[0]), found[1]
            at = binding.at
            depth += 1
        return node

    def parameter_default(self, ident: Node) -> Node | None:
        """`path` inside `def load(path=OUT)`, never rebound there: its default (callers that
        pass another value are not followed)."""
        scope = self.names.scope_of(ident)
        if scope.kind != "function":
            return None
        found = scope.bindings.get(ident.text.decode(), [])
        if len(found) != 1:
            return None
        params = scope.node.child_by_field_name("parameters")
        for p in params.named_children if params is not None else ():
            if p.type in ("default_parameter", "typed_default_parameter") \
                    and p.child_by_field_name("name").text == ident.text:
                return p.child_by_field_name("value")
        return None

    def option(self, node: Node) -> tuple[str, Node] | None:
        """(`--out-dir`, its default's expression) where `node` is `args.out_dir` and this file
        declares that command-line option once (argparse's `add_argument`, its dest as argparse
        derives it, or `dest=`) with a `default=`: the value a run without the option gets (a
        run given it gets another)."""
        obj = node.child_by_field_name("object") if node.type == "attribute" else None
        if obj is None or obj.type != "identifier":
            return None
        found = self._options.get(node.child_by_field_name("attribute").text.decode(), ())
        return found[0] if len(found) == 1 and found[0][1] is not None else None

    @cached_property
    def _options(self) -> dict[str, list[tuple[str, Node | None]]]:
        """dest -> (flag, default) of each `add_argument` call of the file, read once (a path's
        tail, its option's name and a loader's command line all ask); none without `parse_args`."""
        out: dict[str, list] = {}
        if not self.idents("parse_args"):
            return out
        for ident in self.idents("add_argument"):
            attr = ident.parent
            call = attr.parent if attr is not None and attr.type == "attribute" else None
            if call is None or call.type != "call" or call.child_by_field_name("function") != attr:
                continue
            args = call.child_by_field_name("arguments").named_children
            names = [v for a in args if a.type == "string" and (v := self.str_value(a, call.start_byte)) is not None]
            keywords = {a.child_by_field_name("name").text: a.child_by_field_name("value")
                        for a in args if a.type == "keyword_argument"}
            given = keywords.get(b"dest")
            longs = [n for n in names if n.startswith("--")]
            flag = longs[0] if longs else names[0] if names else None
            dest = self.str_value(given, call.start_byte) if given is not None else \
                flag.lstrip("-").replace("-", "_") if flag else None
            if dest is not None:
                out.setdefault(dest, []).append((flag or dest, keywords.get(b"default")))
        return out

    # -- constants --------------------------------------------------------------------------
    def int_value(self, node: Node | None, at: int, depth: int = 0) -> int | None:
        node = self.deref(node, at, depth)
        if node is None:
            return None
        if node.type == "integer":
            try:
                return int(node.text.decode().replace("_", ""), 0)
            except ValueError:
                return None
        if node.type == "unary_operator" and node.child_by_field_name("operator").type == "-":
            v = self.int_value(node.child_by_field_name("argument"), at, depth + 1)
            return -v if v is not None else None
        return None

    def str_value(self, node: Node | None, at: int, depth: int = 0) -> str | None:
        """A string constant: literal, constant name, f-string / `+` / `os.path.join` / pathlib of
        constants, a parameter's default; a name imported from another module is a `ref()`."""
        if node is None:
            return None
        # a path is asked about by the summary, each rule and the fixes, and the value of a
        # name by every path built from it (the depth is in the key: it bounds the answer)
        key = (node.id, at, depth)
        if key not in self._str_values:
            self._str_values[key] = self._str_value(node, at, depth)
        return self._str_values[key]

    @cached_property
    def _str_values(self) -> dict[tuple[int, int, int], str | None]:
        return {}

    def _str_value(self, node: Node | None, at: int, depth: int) -> str | None:
        if depth > MAX_DEPTH:
            return None
        node = unwrap(node)
        if node is None:
            return None
        if node.type == "identifier":
            if node.text == b"__file__":
                return self.this_file()
            found = self.binding_value(node, at)
            if found is not None:
                value = self.str_value(found[0], found[1].at, depth + 1)
                return value if value is not None else self._symbol(node.text.decode(), found[1])
            default = self.parameter_default(node)
            if default is not None:
                return self.str_value(default, default.start_byte, depth + 1)
            return self.imported(node)
        if node.type == "string" and is_fstring(node):
            parts = []
            for child in node.named_children:
                if child.type in ("string_start", "string_end"):
                    continue
                if child.type == "string_content":
                    if b"\\" in child.text or b"{{" in child.text or b"}}" in child.text:
                        return None
                    parts.append(child.text.decode())
                elif child.type == "interpolation" and child.named_child_count == 1:
                    inner = child.child_by_field_name("expression")
                    v = self.str_value(inner, at, depth + 1)
                    if v is None:
                        iv = self.int_value(inner, at, depth + 1)
                        v = str(iv) if iv is not None else None
                    if v is None:
                        return None
                    parts.append(v)
                else:
                    return None
            return "".join(parts)
        if node.type in ("string", "concatenated_string"):
            return string_value(node)
        if node.type == "binary_operator":
            op = node.child_by_field_name("operator").type
            left = self.str_value(node.child_by_field_name("left"), at, depth + 1)
            right = self.str_value(node.child_by_field_name("right"), at, depth + 1)
            if left is None or right is None:
                return None
            if op == "+":
                return left + right
            if op == "/" and self.is_path(node.child_by_field_name("left"), at):
                return _join(left, right)
            return None
        if node.type == "subscript":
            return self._env_name(node, None)
        if node.type == "attribute":
            if node.child_by_field_name("attribute").text == b"name":  # TemporaryDirectory().name
                d = self.deref(node.child_by_field_name("object"), at)
                if d is not None and d.type == "call" and self.qualname(d) == "tempfile.TemporaryDirectory":
                    return self._private(d)
            if node.child_by_field_name("attribute").text == b"parent":
                v = self.str_value(node.child_by_field_name("object"), at, depth + 1)
                return _dirname(v) if v and self.is_path(node.child_by_field_name("object"), at) else None
            return self.imported(node)
        if node.type == "call":
            q = self.qualname(node)
            env = self._env_name(node, q)
            if env is not None:
                return env
            if q in CWD and not node.child_by_field_name("arguments").named_child_count:
                return "."
            if q in PRIVATE_DIRS:
                return self._private(node)
            returned = self._returned_by(node)
            if returned is not None:
                return self.str_value(returned, returned.start_byte, depth + 1)
            func = node.child_by_field_name("function")
            if not (q in PATH_JOIN or q in _PATH_OF_ONE or func.text == b"str" or (
                    func.type == "attribute" and func.child_by_field_name("attribute").text in _PATH_METHODS)):
                return None  # no branch below gives a value: its arguments are not read (a compile's call)
            args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
            if any(a.type in ("keyword_argument", "list_splat", "dictionary_splat") for a in args):
                return None
            values = [self.str_value(a, at, depth + 1) for a in args]
            if any(v is None for v in values):
                return None
            if q in PATH_JOIN and values:
                return _join(*values)
            if q == "os.path.dirname" and len(values) == 1:
                return _dirname(values[0])
            if q in ("os.path.abspath", "os.path.realpath") and len(values) == 1:
                return values[0]  # a relative path is the same file: both resolve against the cwd
            if q == "os.fspath" or (node.child_by_field_name("function").text == b"str"
                                    and self.names.resolve(node.child_by_field_name("function")) is None):
                return values[0] if len(values) == 1 else None
            if func.type == "attribute" and self.is_path(func.child_by_field_name("object"), at):
                method = func.child_by_field_name("attribute").text.decode()
                base = self.str_value(func.child_by_field_name("object"), at, depth + 1)
                if base is None:
                    return None
                if method == "joinpath":
                    return _join(base, *values)
                if method in ("resolve", "absolute") and not values and base.startswith("/"):
                    return base
            return None
        return None

    def _private(self, call: Node) -> str | None:
        """The folder a `tempfile.mkdtemp()` / `TemporaryDirectory()` call makes: a key of its own
        (this file, this call), so no other module's path can ever equal a path inside it."""
        here = self.this_file()
        return f"{PRIVATE}{here}@{call.start_byte}}}" if here is not None else None

    def _symbol(self, name: str, binding) -> str | None:
        """A module constant whose value is only known at run time (`os.path.join(sys.argv[1],
        "m.so")`) but that ends in a literal: the constant itself is the artifact's identity,
        the same in every module that imports it."""
        here = self.this_file()
        module = self.names.module.bindings.get(name, [])
        if here is None or len(module) != 1 or module[0] is not binding or binding.value is None:
            return None
        if not isinstance(self.tail(binding.value, binding.at), tuple):
            return None
        return f"@{here}:{name}"

    def _returned_by(self, call: Node) -> Node | None:
        """`artifact_path()` of `def artifact_path(): return os.path.join(D, "m.pt2")` in this file:
        the returned expression (one level; a function taking arguments is not followed)."""
        func = call.child_by_field_name("function")
        args = call.child_by_field_name("arguments")
        if func is None or func.type != "identifier" or args is None or args.named_child_count:
            return None
        b = self.names.lookup(func.text.decode(), call.start_byte, self.names.scope_of(call))
        if b is None or b.kind != DEF or b.stmt is None:
            return None
        params = b.stmt.child_by_field_name("parameters")
        body = b.stmt.child_by_field_name("body")
        if params is None or params.named_child_count or body is None:
            return None
        statements = [c for c in body.named_children if c.type not in ("comment", "expression_statement")
                      or not (c.named_children and c.named_children[0].type == "string")]  # docstring
        if len(statements) != 1 or statements[0].type != "return_statement" or not statements[0].named_children:
            return None
        return statements[0].named_children[0]

    def _env_name(self, node: Node, q: str | None) -> str | None:
        """`os.environ.get("DIR", d)` / `os.getenv("DIR")` / `os.environ["DIR"]`: the same symbol
        (`${DIR}`) wherever it is read, so that two modules building a path from it agree."""
        if node.type == "subscript":
            value = node.child_by_field_name("value")
            subs = node.children_by_field_name("subscript")
            if value is not None and self.names.resolve(value) == "os.environ" and len(subs) == 1:
                name = string_value(subs[0])
                return f"${{{name}}}" if name else None
            return None
        if q not in ("os.environ.get", "os.getenv"):
            return None
        args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
        name = string_value(args[0]) if args and args[0].type == "string" else None
        return f"${{{name}}}" if name else None

    def tail(self, node: Node | None, at: int, depth: int = 0):
        """Where the end of a path value is spelt: (start, end) of the string text it ends with
        in this file, or the reference (`ref()`) of another module's constant it ends with.
        None when the value does not end in a literal (a run-time value, a call)."""
        node = unwrap(node)
        if node is None or depth > MAX_DEPTH:
            return None
        if node.type == "identifier":
            found = self.binding_value(node, at)
            if found is not None:
                return self.tail(found[0], found[1].at, depth + 1)
            default = self.parameter_default(node)
            if default is not None:
                return self.tail(default, default.start_byte, depth + 1)
            return self.imported(node)
        if node.type == "attribute":
            found = self.imported(node)
            if found is None and (option := self.option(node)) is not None:  # `args.out`: its default's end
                return self.tail(option[1], option[1].start_byte, depth + 1)
            return found
        if node.type == "string":
            parts = [c for c in node.named_children if c.type not in ("string_start", "string_end")]
            if parts and parts[-1].type == "string_content":
                return (parts[-1].start_byte, parts[-1].end_byte)
            return None
        if node.type == "concatenated_string":
            return self.tail(node.named_children[-1], at, depth + 1) if node.named_children else None
        if node.type == "binary_operator":
            return self.tail(node.child_by_field_name("right"), at, depth + 1)
        if node.type == "call":
            args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
            q = self.qualname(node)
            func = node.child_by_field_name("function")
            joins = q in PATH_JOIN or (func.type == "attribute" and func.child_by_field_name("attribute").text == b"joinpath")
            if joins and args and args[-1].type not in ("keyword_argument", "list_splat", "dictionary_splat"):
                return self.tail(args[-1], at, depth + 1)
            if (q in ("os.fspath", "os.path.abspath", "os.path.realpath") or func.text == b"str") and len(args) == 1:
                return self.tail(args[0], at, depth + 1)
            returned = self._returned_by(node)
            if returned is not None:
                return self.tail(returned, returned.start_byte, depth + 1)
        return None

    def imported(self, node: Node) -> str | None:
        """A name or `module.NAME` imported from a module that may be the project's: a reference."""
        binding = None
        if node.type == "identifier":
            binding = self.names.lookup(node.text.decode(), node.start_byte, self.names.scope_of(node))
            if binding is None or binding.kind != IMPORT:
                return None
        target = self.names.resolve(node)
        here = self.this_file()
        if target is None or here is None or "." not in target.lstrip("."):
            return None
        if binding is None and target.split(".")[0] in ("os", "sys", "torch", "pathlib", "posixpath"):
            return None  # os.sep, sys.prefix...: not a constant of the project
        return ref(target, posixpath.dirname(here))

    def is_path(self, node: Node | None, at: int, depth: int = 0) -> bool:
        """A pathlib expression (so that `/` joins and `.parent` is a directory)."""
        node = self.deref(node, at)
        if node is None or depth > 8:
            return False
        if node.type == "call":
            if self.qualname(node) in PATHLIB:
                return True
            func = node.child_by_field_name("function")
            return func.type == "attribute" and self.is_path(func.child_by_field_name("object"), at, depth + 1)
        if node.type == "binary_operator":
            return self.is_path(node.child_by_field_name("left"), at, depth + 1)
        if node.type == "attribute":
            return self.is_path(node.child_by_field_name("object"), at, depth + 1)
        return False

    def this_file(self) -> str | None:
        return self._this_file

    @cached_property
    def _this_file(self) -> str | None:
        """Asked once per site (~7,000 times in a dense file): the path made absolute once."""
        path = self.src.path
        if not path or path.startswith("<"):
            return None
        return absolute(path).replace(os.sep, "/")

    def path_key(self, node: Node | None, at: int) -> str | None:
        """The artifact key of a path expression (it may hold references to other modules);
        the summaries and every rule ask it of the same paths: normalised once per analysis."""
        if node is None:
            return None
        key = (node.id, at)
        found = self._path_keys.get(key, self._path_keys)
        if found is self._path_keys:
            value = self.str_value(node, at)
            found = self._path_keys[key] = normalize(value) if value else None
        return found

    @cached_property
    def _path_keys(self) -> dict[tuple[int, int], str | None]:
        return {}

    def resolve_key(self, key: str | None) -> str | None:
        """`path_key` with references to other modules' constants resolved through the project."""
        if key is None or not has_ref(key):
            return key
        project = getattr(self.ctx, "project", None)
        return project.resolve(key) if project is not None else None

    @cached_property
    def tails(self) -> dict[str, object]:
        """Module constants -> where their value's end is spelt (`tail()`), for renames."""
        out = {}
        for name in self.constants:
            b = self.names.module.bindings[name][0]
            t = self.tail(b.value, b.at)
            if t is not None:
                out[name] = t
        return out

    @cached_property
    def constants(self) -> dict[str, str]:
        """Module-level names bound once to a string constant: what other modules import."""
        out = {}
        for name, bindings in self.names.module.bindings.items():
            if len(bindings) != 1 or bindings[0].kind not in (LOCAL, ALIAS) or bindings[0].value is None:
                continue
            value = bindings[0].value
            if value.type not in ("string", "concatenated_string", "binary_operator", "call", "identifier", "attribute"):
                continue
            v = self.str_value(value, bindings[0].at)
            if v is None:
                v = self._symbol(name, bindings[0])
            if v is not None:
                out[name] = v
        return out

    def summary(self) -> dict:
        """What other files need: constants, and the artifact path of each compile and load
        (unresolved: references to other modules are resolved by the project)."""
        compiles = [(k, s.call.start_byte, s.call.end_byte, s.qualname) for s in self.compiles
                    if s.path_node is not None and (k := self.path_key(s.path_node, s.call.start_byte))]
        loads = [(k, s.call.start_byte, s.call.end_byte, s.qualname) for s in self.loads
                 if s.path_node is not None and (k := self.path_key(s.path_node, s.call.start_byte))]
        out = {}
        for name, value in (("constants", self.constants), ("tails", self.tails), ("compiles", compiles),
                            ("loads", loads), ("returned_loads", self.returned_loads)):
            if value:
                out[name] = value
        return out

    @cached_property
    def returned_loads(self) -> list[tuple[str, int, int, str]]:
        """(reference to an imported function, load start, end, qualname) of each load whose path is
        what that function returns (`so = build(...)`, `aot_load(so)` with `from build import build`):
        the project links it to the compile the function's `return` gives back."""
        out = []
        for load in self.loads:
            value = self.deref(load.path_node, load.call.start_byte) if load.path_node is not None else None
            func = value.child_by_field_name("function") if value is not None and value.type == "call" else None
            target = self.imported(func) if func is not None and func.type in ("identifier", "attribute") else None
            if target is not None:
                out.append((target, load.call.start_byte, load.call.end_byte, load.qualname))
        return out

    def returning_function(self, ret: Node) -> str | None:
        """The name of the module-level function a `return` statement belongs to."""
        func = ret.parent
        while func is not None and func.type not in ("function_definition", "lambda", "class_definition", "module"):
            func = func.parent
        if func is None or func.type != "function_definition" or func.parent is None:
            return None
        holder = func.parent.parent if func.parent.type == "decorated_definition" else func.parent
        return func.child_by_field_name("name").text.decode() if holder is not None and holder.type == "module" else None

    # -- runners: the values a load call returns, and their calls -----------------------------
    @cached_property
    def _runners(self) -> dict[int, list[Node]]:
        """load call id -> the calls of the model it returns, found once for the whole file."""
        out: dict[int, list[Node]] = {}
        self.src.find_words(_assigned_name(load.call) for load in self.loads)  # what _flows follows first
        for load in self.loads:
            calls: list[Node] = []
            for value in self._flows(load.call, 0, set()):
                calls.extend(self._called(value))
            out[load.call.id] = sorted({c.id: c for c in calls}.values(), key=lambda n: n.start_byte)
        return out

    def runner_calls(self, load: LoadSite) -> list[Node]:
        """Calls of the loaded model: `runner = load(...); runner(x)`, `self.runner(x)` from any
        method, a lazily set module global, a helper's return value, `load(...)(x)`."""
        return self._runners.get(load.call.id, [])

    def flows(self, value: Node) -> tuple[Node, ...]:
        """Expressions that evaluate to `value`'s result (_flows), found once per value: a
        migration plan and the loads of a compile's value ask about the same calls."""
        found = self._flows_of.get(value.id)
        if found is None:
            found = self._flows_of[value.id] = tuple(self._flows(value, 0, set()))
        return found

    @cached_property
    def _flows_of(self) -> dict[int, tuple[Node, ...]]:
        return {}

    def loads_of_value(self, call: Node) -> list[LoadSite]:
        """The loads whose path is the value `call` returns (`so = aot_compile(...)`, `aot_load(so)`,
        also through a helper's return or an attribute)."""
        by_node, by_value = self._loads_by_path
        self._find_compile_names()
        found = {id(l): l for v in self.flows(call) for l in by_node.get(v.id, ())}
        found.update((id(l), l) for l in by_value.get(call.id, ()))
        return sorted(found.values(), key=lambda l: l.call.start_byte)

    def maybe_values(self, ident: Node) -> list[tuple[Node, object]] | None:
        """What a name read may hold where no single assignment decides: the latest binding
        before it in its own scope, and the earlier ones a branch may leave in place
        (`so = argv or None`, then `if so is None: so = aot_compile(...)`), latest first, as
        (value, binding). None where one of them is not a plain assignment (a parameter, a
        loop target, an import): then the read may hold anything."""
        name = ident.text.decode()
        found, n = self.names.scope_of(ident).before(name, ident.start_byte)
        out = []
        for binding in reversed(found[:n]):
            if binding.kind not in (LOCAL, ALIAS) or binding.value is None:
                return None
            out.append((unwrap(binding.value), binding))
            if not self._conditional(binding.value, ident):
                break  # it always runs before the read: earlier values are gone
        return out or None

    def maybe_loads_of_value(self, call: Node) -> list[tuple[LoadSite, list[Node]]]:
        """Loads whose path may hold `call`'s value but may also hold another (a merge of
        branches that `loads_of_value`, by single assignments, does not follow): (the load,
        the other values its path may hold, but `None`: no path at all)."""
        name = _assigned_name(call)
        if not name:
            return []
        assign = call.parent
        while assign.type == "parenthesized_expression":
            assign = assign.parent
        found = self._maybe_loads.get(assign.start_byte)
        if not found:
            return []
        sure = {id(load) for load in self.loads_of_value(call)}
        out = []
        for load, values in found:
            if id(load) not in sure:
                others = [w for v, b in values if b.at != assign.start_byte for w in _branches(v)]
                out.append((load, [v for v in others if not _is_none(v)]))
        return out

    @cached_property
    def _maybe_loads(self) -> dict[int, list[tuple[LoadSite, list]]]:
        """Loads whose path is a name no single assignment decides, by each assignment that may
        reach it: (the load, maybe_values of its path). One pass over the loads (a compile's
        question, asked of each load, cost a dense file 15 s)."""
        out: dict[int, list] = {}
        for load in self.loads:
            node = unwrap(load.path_node)
            if node is None or node.type != "identifier" or self.binding_value(node, load.call.start_byte) is not None:
                continue
            values = self.maybe_values(node)
            for _, binding in values or ():
                out.setdefault(binding.at, []).append((load, values))
        return out

    @cached_property
    def _loads_by_path(self) -> tuple[dict[int, list[LoadSite]], dict[int, list[LoadSite]]]:
        """(path node id -> loads, id of the call a path is bound to -> loads): one pass over the loads."""
        by_node: dict[int, list[LoadSite]] = {}
        by_value: dict[int, list[LoadSite]] = {}
        for load in self.loads:
            node = unwrap(load.path_node)
            if node is None:
                continue
            by_node.setdefault(node.id, []).append(load)
            target = self.deref(node, load.call.start_byte)
            if target is not None and target.type == "call":
                by_value.setdefault(target.id, []).append(load)
        return by_node, by_value

    def _find_compile_names(self) -> None:
        """The names compile calls' values are assigned to, found in the text together
        (Source.find_words), once."""
        if not self._compile_names_found:
            self._compile_names_found = True
            self.src.find_words(_assigned_name(site.call) for site in self.compiles)

    def calls_of_function(self, ret: Node) -> list[Node]:
        return self._calls_of_function(ret)

    def _flows(self, value: Node, depth: int, seen: set[int]) -> list[Node]:
        """Expressions that evaluate to `value`'s result: itself, uses of the names it is
        assigned to, calls of functions returning it (one level)."""
        if depth > 4 or value.id in seen:
            return []
        seen.add(value.id)
        out = [value]
        parent = value.parent
        while parent is not None and parent.type == "parenthesized_expression":
            parent = parent.parent
        if parent is None:
            return out
        if parent.type == "assignment" and unwrap(parent.child_by_field_name("right")) == value:
            for use in self._uses_of_target(parent.child_by_field_name("left"), value):
                out += self._flows(use, depth + 1, seen)
        elif parent.type == "argument_list" and parent.parent is not None and self.path_of(parent.parent) == value:
            out += self._flows(parent.parent, depth + 1, seen)  # `aot_load(str(so), ...)`: the same file
        elif parent.type == "return_statement":
            for call in self._calls_of_function(parent):
                out += self._flows(call, depth + 1, seen)
        return out

    def path_of(self, call: Node) -> Node | None:
        """The argument of `str(p)`, `os.fspath(p)`, `os.path.abspath(p)` or `os.path.realpath(p)`:
        a path naming the same file as `p` (a relative one resolves against the same working
        folder). None for any other call."""
        if call.type != "call":
            return None
        args = call.child_by_field_name("arguments")
        items = [a for a in args.named_children if a.type != "comment"] if args is not None else []
        if len(items) != 1 or items[0].type in ("keyword_argument", "list_splat", "dictionary_splat"):
            return None
        func = call.child_by_field_name("function")
        q = self.qualname(call)
        builtin = func is not None and func.type == "identifier" and func.text == b"str" and q is None \
            and self.names.lookup("str", call.start_byte, self.names.scope_of(call)) is None
        return unwrap(items[0]) if builtin or q in ("os.fspath", "os.path.abspath", "os.path.realpath") else None

    def _uses_of_target(self, left: Node, value: Node) -> list[Node]:
        if left.type == "identifier":
            return self._uses_of_name(left, value)
        if left.type == "attribute" and left.child_by_field_name("object").text == b"self":
            return self._uses_of_attribute(left, value)
        return []

    def calls_named(self, name: str) -> list[Node]:
        """The calls of the bare name `name` (`package(...)`, a function of this file), in file order."""
        return [i.parent for i in self.idents(name) if i.parent is not None and i.parent.type == "call"
                and i.parent.child_by_field_name("function") == i]

    def idents(self, name: str, start: int = 0, end: int | None = None) -> list[Node]:
        """Identifier nodes spelling `name` (cached per name, in file order), within [start, end)."""
        found = self._idents.get(name)
        if found is None:
            found = self._idents[name] = list(self.src.identifiers(name))
            self._ident_starts[name] = [n.start_byte for n in found]
        if start == 0 and end is None:
            return found
        starts = self._ident_starts[name]
        return found[bisect_left(starts, start): bisect_left(starts, end if end is not None else len(self.src.data) + 1)]

    @cached_property
    def _idents(self) -> dict[str, list[Node]]:
        return {}

    @cached_property
    def _ident_starts(self) -> dict[str, list[int]]:
        return {}

    def _reads(self, name: str) -> dict[int, list[Node]]:
        """Def-use of one name, in one pass: value node id -> the reads that see it (a read in
        straight-line code after a single assignment; `binding_value` decides)."""
        found = self._reads_cache.get(name)
        if found is None:
            found = {}
            for ident in self.idents(name):
                if _is_target(ident):
                    continue
                value = self.binding_value(ident, ident.start_byte)
                if value is not None:
                    found.setdefault(unwrap(value[0]).id, []).append(ident)
            self._reads_cache[name] = found  # stored whole: a cut summary leaves no partial entry
        return found

    @cached_property
    def _reads_cache(self) -> dict[str, dict[int, list[Node]]]:
        return {}

    def _uses_of_name(self, left: Node, value: Node) -> list[Node]:
        """Reads of the name `left` that see this assignment: by def-use in straight-line code;
        from functions, a module global (also one set under `global` in a function) when every
        other assignment of it is `None` (lazy initialisation)."""
        name = left.text.decode()
        scope = self.names.scope_of(left)
        module = self.names.module
        out = list(self._reads(name).get(value.id, []))
        if scope is not module and name not in scope.globals:
            return out
        assign = left.parent
        tops = module.bindings.get(name, [])
        if any(b.at != assign.start_byte and not (b.kind in (LOCAL, ALIAS) and _is_none(b.value)) for b in tops):
            return out
        if any(a.id != assign.id and not _is_none(a.child_by_field_name("right")) for a in self._global_sets(name)):
            return out
        for ident in self.idents(name):
            where = self.names.scope_of(ident)
            if where is module or _is_target(ident):
                continue
            b = self.names.lookup(name, ident.start_byte, where)
            if b is None or any(b is t for t in tops):
                out.append(ident)
        return sorted(set(out), key=lambda n: n.start_byte)

    def _global_sets(self, name: str) -> list[Node]:
        """Assignments `name = ...` in functions that declare `global name`."""
        out = []
        for ident in self.idents(name):
            if not _is_target(ident) or ident.parent.type != "assignment":
                continue
            scope = self.names.scope_of(ident)
            if scope is not self.names.module and name in scope.globals:
                out.append(ident.parent)
        return out

    def _uses_of_attribute(self, left: Node, value: Node) -> list[Node]:
        """`self.<attr>` read in any method of the class, when every other assignment of it in
        the class is `None` (lazy initialisation)."""
        cls = left.parent
        while cls is not None and cls.type != "class_definition":
            cls = cls.parent
        if cls is None:
            return []
        attr = left.child_by_field_name("attribute")
        reads = []
        for ident in self.idents(attr.text.decode(), cls.start_byte, cls.end_byte):
            node = ident.parent
            if node is None or node.type != "attribute" or node.child_by_field_name("attribute") != ident \
                    or node.child_by_field_name("object").text != b"self":
                continue
            if node.parent is not None and node.parent.type == "assignment" and node.parent.child_by_field_name("left") == node:
                right = unwrap(node.parent.child_by_field_name("right"))
                if right != value and not _is_none(right):
                    return []  # set to something else too
                continue
            reads.append(node)
        return reads

    def _calls_of_function(self, ret: Node) -> list[Node]:
        """Calls of the function holding `return ...` (by its name in the file, or `self.name`)."""
        func = ret.parent
        while func is not None and func.type not in ("function_definition", "lambda", "class_definition", "module"):
            func = func.parent
        if func is None or func.type != "function_definition":
            return []
        name = func.child_by_field_name("name").text.decode()
        holder = func.parent.parent if func.parent is not None and func.parent.type == "block" else None
        if holder is not None and holder.type == "decorated_definition":
            holder = holder.parent.parent if holder.parent is not None else None
        method = holder is not None and holder.type == "class_definition"
        out = []
        for ident in (self.idents(name, holder.start_byte, holder.end_byte) if method else self.idents(name)):
            node = ident
            if method:
                node = ident.parent
                if node is None or node.type != "attribute" or node.child_by_field_name("attribute") != ident \
                        or node.child_by_field_name("object").text != b"self":
                    continue
            else:
                b = self.names.lookup(name, ident.start_byte, self.names.scope_of(ident))
                if b is None or b.kind != DEF or b.stmt is None or b.stmt.id != func.id:
                    continue
            call = node.parent
            if call is not None and call.type == "call" and call.child_by_field_name("function") == node:
                out.append(call)
        return out

    @staticmethod
    def _called(value: Node) -> list[Node]:
        parent = value.parent
        while parent is not None and parent.type == "parenthesized_expression":
            value, parent = parent, parent.parent
        if parent is not None and parent.type == "call" and parent.child_by_field_name("function") == value:
            return [parent]
        return []


def _branches_around(value: Node) -> tuple[tuple[tuple[int, int], ...], bool]:
    """(the spans of the branches around `value` up to its scope, innermost first; whether a
    lambda or comprehension stops the climb): `_conditional` without the use."""
    spans = []
    node = value.parent
    while node is not None:
        kind = node.type  # read once a step: each read makes a new string
        if kind in _SCOPES:
            return tuple(spans), False
        if kind == "lambda" or kind.endswith("comprehension"):
            return tuple(spans), True
        parent = node.parent
        if kind in _BRANCHES and (parent is None or parent.type not in _ALWAYS) and not _runs_through(node, parent):
            spans.append((node.start_byte, node.end_byte))
        node = parent
    return tuple(spans), False


def _runs_through(node: Node, parent: Node | None) -> bool:
    """`try: ... finally: ...` with no `except` (or the body of one): what follows it runs only
    after the whole body did (an exception leaves the function), as after a `with`."""
    try_ = node if node.type == "try_statement" else parent if node.type == "block" and parent is not None \
        and parent.type == "try_statement" and parent.child_by_field_name("body") == node else None
    return try_ is not None and not any(c.type in ("except_clause", "except_group_clause") for c in try_.named_children)


def _by_call(sites: list) -> dict:
    """call id -> the first site of that call."""
    out: dict = {}
    for site in sites:
        out.setdefault(site.call.id, site)
    return out


def _assigned_name(value: Node) -> str:
    """`x` of `x = value` (or of `x = (value)`): the name `_flows` follows first; "" if none."""
    parent = value.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is not None and parent.type == "assignment":
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return left.text.decode()
    return ""


def _is_target(ident: Node) -> bool:
    parent = ident.parent
    return parent is not None and parent.type in ("assignment", "augmented_assignment") \
        and parent.child_by_field_name("left") == ident


def _branches(value: Node) -> list[Node]:
    """The values a conditional expression may take (`a if c else b`: a and b), else the value."""
    if value.type != "conditional_expression" or value.named_child_count != 3:
        return [value]
    return _branches(unwrap(value.named_children[0])) + _branches(unwrap(value.named_children[2]))


def _called_here(scope, module) -> bool:
    """A module-level `lambda` handed to a call (`timed(lambda: runner(x))`): run by that call,
    so its names hold what reaches the call, as at the lambda (lookup's answer), not whichever
    binding of them comes last."""
    node = scope.node
    parent = node.parent
    if scope.parent is not module or node.type != "lambda" or parent is None:
        return False
    if parent.type == "keyword_argument":
        parent = parent.parent
    return parent is not None and parent.type == "argument_list"


def _is_none(node: Node | None) -> bool:
    node = unwrap(node)
    return node is not None and node.type == "none"


def _join(*parts: str) -> str:
    """posixpath.join, except that a reference is never dropped by a later absolute part."""
    return posixpath.join(*parts)


def _dirname(value: str) -> str | None:
    if has_ref(value) and value.endswith(REF):
        return None  # the directory of an unresolved reference: only known once resolved
    return posixpath.dirname(value)
