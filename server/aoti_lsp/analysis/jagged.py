"""Empty jagged inputs (AOTI201, AOTI202): which tensors are jagged, where an empty one
breaks, which guards protect it, and which models are exported and called as packages.

Facts (shared/aoti-facts.md, "Empty jagged inputs"; measured with torch 2.13 on CPU):
torch.export traces dynamic dims as >= 2, so `cumsum(lengths)[-1]` segfaults in an AOTI
package when `lengths` is empty, indices computed from the lengths fail with
`index out of bounds` when there are no values, and a guard inside an exported `forward`
(`if lengths.numel() == 0: return ...`) is folded away. A guard is effective in eager and
`torch.compile` code, and in plain Python around a loaded package.

Tree-sitter only, and only over the functions that can matter (a `forward`, a function
given to `aot_compile`). Scope (issue 20, `Model.scope`): code an AOTI package runs, certain
by the artifact graph or possible in a file/project with AOTI evidence; never
`autograd.Function`, eager-only or `torch.compile` code. Complete offsets (a leading zero)
are followed across calls (`Model.complete_params`). Everything unsure stays silent.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from functools import cached_property, lru_cache

from aoti_lsp import lazyre
from aoti_lsp.analysis import tables
from aoti_lsp.analysis.facts import bind, static_export, unwrap
from aoti_lsp.analysis.names import DEF, IMPORT, dotted_parts, positional_names
from aoti_lsp.analysis.records import record, set_field
from aoti_lsp.analysis.source import statement_of
from aoti_lsp.analysis.treesitter import Node

MAKE_FX = "torch.fx.experimental.proxy_tensor.make_fx"

DEFAULT_JAGGED_NAMES = (
    "lengths", "offsets", "seq_lens", "seq_lengths", "*_lengths", "*_offsets", "jagged*", "cu_seqlens",
)
OPTION = "jagged-names"
# offsets with a leading zero (B + 1 entries, never empty): fbgemm's complete cumsum, and
# flash-attn's `cu_seqlens*` (documented as (batch_size + 1,) by its API)
COMPLETE_CUMSUMS = frozenset({"asynchronous_complete_cumsum", "complete_cumsum"})
COMPLETE_BY_NAME = ("cu_seqlens*",)
# what a docstring says of complete offsets: "x_offsets: (B + 1,)", "with a leading zero"
_DOCUMENTED_COMPLETE = lazyre.compile(r"(?i)\(?\s*\w*\s*\+\s*1\s*,?\s*\)?|leading (?:0|zero)|complete (?:cumsum|offsets)")
# the flat data of a jagged pair: jagged too when a lengths/offsets parameter sits beside it
PAIRED_VALUES = ("values", "*_values", "jagged_data")
SUMMARY_CODES = ("AOTI201", "AOTI202")  # both rules read one summary, stored by the first enabled


def summary_owner(config) -> str | None:
    return next((c for c in SUMMARY_CODES if config is None or config.enabled(c)), None)


def scope_names(project) -> tuple[frozenset[str], bool, tuple[str, ...]]:
    """What other files' summaries can put a file's forward in AOTI201/202's scope (Model.scope),
    read without a parse: the class names they export or AOT-compile (a class of the file must
    be named so), whether one AOT-compiles programs it cannot name (any forward may be in them),
    and the files summarised unparsed ("lazy_exports": read when a class is asked about)."""
    def build():
        names, unknown, lazy = set(), False, []
        for code in SUMMARY_CODES:
            for path, summary in project.of(code).items():
                if isinstance(summary, dict):
                    names.update(e[0].rsplit(".", 1)[-1] for e in summary.get("exports", ()))
                    names.update(k.rsplit(".", 1)[-1] for k, _ in summary.get("aoti", ()))
                    unknown = unknown or bool(summary.get("aoti_unknown"))
                    if summary.get("lazy_exports"):
                        lazy.append(path)
        return frozenset(names), unknown, tuple(lazy)
    return project.memo("jagged scope names", build)


def module_stem(path: str) -> str:
    """The module name a file is imported by (its package's, for an `__init__.py`)."""
    folder, name = os.path.split(path)
    stem = os.path.splitext(name)[0]
    return os.path.basename(folder) if stem == "__init__" else stem


def lazy_may_export(project, path: str, key: str, stem: str) -> bool:
    """Whether a file summarised "lazy_exports" may export class `key` of module `stem`, read
    without a parse: such an export names the class as the file imports it (Model._origin,
    _same_module), so the file's imports name the module (`from pkg.models import Model`,
    `import pkg.models`, `from pkg import models`) or come from a package (`from . import Model`),
    and its text calls `key` (`Model(...)`: Model.instance_key's key is what makes the model)."""
    return path in lazy_importers(project, stem) and lazy_calls(project, path, key)


def lazy_calls(project, path: str, key: str) -> bool:
    """Whether a file summarised "lazy_exports" calls `key` (`Model(`), from its text."""
    memo = project.memo("lazy calls", dict)  # a file with a jagged forward asks per class
    if (path, key) not in memo:
        data = project.from_file(path, "text", lambda ctx: ctx.source.data)
        memo[(path, key)] = data is not None and _called(data, key)
    return memo[(path, key)]


def lazy_importers(project, stem: str) -> frozenset[str]:
    """The files summarised "lazy_exports" whose imports may name module `stem` (lazy_may_export).
    Their imports are read once per project version and indexed by word: torch's sources asked
    16,901 times, one file and one class at a time. A check asking depends on every such file
    (one may come to import it)."""
    by_word, relative, paths = project.memo("lazy imports", lambda: _lazy_imports(project))
    for p in paths:
        project.depends_on(p)
    return by_word.get(stem.encode(), frozenset()) | relative


def _lazy_imports(project) -> tuple[dict[bytes, frozenset[str]], frozenset[str], list[str]]:
    by_word: dict[bytes, set[str]] = {}
    relative, paths = set(), []
    for path in scope_names(project)[2]:
        paths.append(os.path.abspath(path))
        found = project.from_file(path, "imports", lambda ctx: _imported(ctx.source.data))
        if found is None:
            continue
        for word in found[0]:
            by_word.setdefault(word, set()).add(path)
        if found[1]:
            relative.add(path)
    return {w: frozenset(ps) for w, ps in by_word.items()}, frozenset(relative), paths


def _imported(data: bytes) -> tuple[frozenset[bytes], bool]:
    """(every word of the file's import statements, whether one imports from a package: `from . import`)."""
    words: set[bytes] = set()
    for m in _IMPORT_STATEMENT.finditer(data):
        words.update(_WORD.findall(m.group(0)))
    return frozenset(words), _PLAIN_IMPORT.search(data) is not None


def _called(data: bytes, word: str) -> bool:
    """`word(` in `data`, `word` a whole word (spaces before the parenthesis allowed): bytes.find,
    then its edges (a regex with \\b has no literal to skip to: 20x slower over pytorch/ao's tests)."""
    w = word.encode()
    at = data.find(w)
    while at >= 0:
        end = at + len(w)
        if (at == 0 or not _WORD_BYTE[data[at - 1]]) and data[end:end + 64].lstrip(b" \t").startswith(b"("):
            return True
        at = data.find(w, end)
    return False


# what qualifies an imported class by its name alone (a package's own name, `from . import M`)
_PLAIN_IMPORT = lazyre.compile(rb"from[ \t]+\.+[ \t]*import\b")  # a literal first: searched fast
# an import statement, a parenthesised list of names with it (a `\` continuation: one more line)
_IMPORT_STATEMENT = lazyre.compile(rb"(?m)^[ \t]*(?:from[ \t]+[.\w]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n]*(?:\\\n[^\n]*)*)"
                                   rb"|import[ \t]+[^\n]*(?:\\\n[^\n]*)*)")
_WORD = lazyre.compile(rb"\w+")
_WORD_BYTE = [chr(b).isalnum() or b == 0x5F or b >= 0x80 for b in range(256)]


_T = tables.section("jagged")
EXPORTERS, PACKAGERS = frozenset(_T["exporters"]), frozenset(_T["packagers"])
LOADERS, COMPILERS = frozenset(_T["loaders"]), frozenset(_T["compilers"])
_SAME_MODULE = set(_T["same_module"])  # methods that return the same module (model = Model().eval())
_ELEMENTWISE, _RESHAPE = set(_T["elementwise"]), set(_T["reshape"])  # derivations that keep a tensor jagged
_NONEMPTY_MAKERS, _REDUCTIONS = set(_T["nonempty_makers"]), set(_T["reductions"])
# index ops: name -> (position of the index argument for the method form, for the torch.f form)
INDEX_OPS = {k: (m, f if f >= 0 else None) for k, (m, f) in _T["index_ops"].items()}


def jagged_patterns(config) -> tuple[str, ...]:
    value = (config.options or {}).get(OPTION) if config is not None else None
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    return DEFAULT_JAGGED_NAMES


def is_jagged_name(name: str, patterns: Iterable[str]) -> bool:
    if isinstance(patterns, tuple):
        return _matches(name, patterns)
    import fnmatch  # here: it imports `re`, which a file with no jagged name needs not (names.py)

    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def patterns_spelt(patterns: Iterable[str], data: bytes) -> bool:
    """Whether every literal piece of some pattern is in `data` (or a pattern has none): else no
    name in `data` is jagged, and no `re` (fnmatch's, a regex's) is needed to say so."""
    for p in patterns:
        if all(x.encode() in data for x in p.replace("?", "*").split("*") if x):
            return True
    return False


@lru_cache(maxsize=65536)
def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    # the same few hundred names asked again on every statement a keystroke reads
    import fnmatch

    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


# -- small tree helpers -----------------------------------------------------------------------
def text(node: Node) -> str:
    return node.text.decode("utf-8")


unparen = unwrap  # facts.py's: one definition of "the expression inside the parentheses"


def _traced_model(make_fx: Node) -> Node | None:
    """The model a `make_fx(f, ...)` call traces."""
    return bind(make_fx, ("f",))[0].get("f")


def call_args(call: Node) -> tuple[list[Node], dict[str, Node], bool]:
    """(positional, keyword, has a *args/**kwargs splat)."""
    pos, kw, splat = [], {}, False
    args = call.child_by_field_name("arguments")
    if args is None or args.type != "argument_list":
        return pos, kw, True
    for a in args.named_children:
        if a.type == "comment":
            continue
        if a.type == "keyword_argument":
            kw[text(a.child_by_field_name("name"))] = a.child_by_field_name("value")
        elif a.type in ("list_splat", "dictionary_splat"):
            splat = True
        else:
            pos.append(a)
    return pos, kw, splat


def int_value(node: Node | None) -> int | None:
    node = unparen(node) if node is not None else None
    if node is None:
        return None
    if node.type == "integer":
        try:
            return int(text(node), 0)
        except ValueError:
            return None
    if node.type == "unary_operator" and node.child_count == 2 and node.children[0].type in ("-", "+"):
        v = int_value(node.children[1])
        return None if v is None else (-v if node.children[0].type == "-" else v)
    return None


def subscripts(node: Node) -> list[Node]:
    return [c for c in node.children_by_field_name("subscript")]


def slice_parts(node: Node) -> tuple[Node | None, Node | None, Node | None] | None:
    """(start, stop, step) of a `slice` node."""
    if node.type != "slice":
        return None
    parts: list[Node | None] = [None, None, None]
    i = 0
    for c in node.children:
        if c.type == ":":
            i += 1
        elif c.is_named and i < 3:
            parts[i] = c
    return parts[0], parts[1], parts[2]


def free_identifiers(node: Node) -> Iterator[Node]:
    """Identifiers of an expression that name values (not attribute names, not keywords)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            parent = n.parent
            if parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") == n:
                continue
            if parent is not None and parent.type == "keyword_argument" and parent.child_by_field_name("name") == n:
                continue
            yield n
        elif n.type in ("lambda", "function_definition", "class_definition"):
            continue
        else:
            stack.extend(reversed(n.children))


def walk(node: Node, skip_nested: bool = True) -> Iterator[Node]:
    """Nodes of a function body, not entering nested functions, classes or lambdas."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if skip_nested and n is not node and n.type in ("function_definition", "class_definition", "lambda", "decorated_definition"):
            continue
        stack.extend(reversed(n.children))


def exits(block: Node | None) -> bool:
    if block is None:
        return False
    stmts = [s for s in block.named_children if s.type != "comment"]
    return bool(stmts) and stmts[-1].type in ("return_statement", "raise_statement", "continue_statement", "break_statement")


# -- emptiness tests: `x.numel() == 0`, `len(x)`, `not x.shape[0]`, `lengths.sum() == 0` -----------
@record("text", "kind", "node", frozen=True, compare=("text", "kind"))
class Tested:
    """`text`: the tensor expression, as written; `kind`: "size", the tensor is non-empty; "sum":
    its sum is non-zero (jagged: some values exist). `node` is not compared."""

    def __init__(self, text: str, kind: str, node: Node | None = None):
        set_field(self, "text", text)
        set_field(self, "kind", kind)
        set_field(self, "node", node)


def _size_subject(node: Node) -> Tested | None:
    """`T.numel()`, `T.nelement()`, `T.shape[0]`, `T.size(0)`, `T.size()[0]`, `len(T)` -> T (size);
    `T.sum()`, `T.sum(0)`, `torch.sum(T)` -> T (sum)."""
    node = unparen(node)
    if node.type == "call":
        func = node.child_by_field_name("function")
        pos, kw, _ = call_args(node)
        if func.type == "identifier" and text(func) == "len" and len(pos) == 1:
            return Tested(text(pos[0]), "size", pos[0])
        if func.type == "attribute":
            obj, name = func.child_by_field_name("object"), text(func.child_by_field_name("attribute"))
            if name in ("numel", "nelement") and not pos:
                return Tested(text(obj), "size", obj)
            if name == "size" and len(pos) == 1 and int_value(pos[0]) == 0:
                return Tested(text(obj), "size", obj)
            if name == "sum" and len(pos) <= 1 and all(int_value(p) == 0 for p in pos) and not kw:
                return Tested(text(obj), "sum", obj)
            if name == "sum" and text(obj) == "torch" and len(pos) == 1:
                return Tested(text(pos[0]), "sum", pos[0])
    if node.type == "subscript":
        subs = subscripts(node)
        value = node.child_by_field_name("value")
        if len(subs) == 1 and int_value(subs[0]) == 0:
            if value.type == "attribute" and text(value.child_by_field_name("attribute")) == "shape":
                return Tested(text(value.child_by_field_name("object")), "size", value.child_by_field_name("object"))
            if value.type == "call":
                f = value.child_by_field_name("function")
                pos, _, _ = call_args(value)
                if f.type == "attribute" and text(f.child_by_field_name("attribute")) == "size" and not pos:
                    return Tested(text(f.child_by_field_name("object")), "size", f.child_by_field_name("object"))
    return None


_ZERO_WHEN_TRUE = {("==", 0), ("<", 1), ("<=", 0)}
_NONZERO_WHEN_TRUE = {(">", 0), ("!=", 0), (">=", 1)}
_FLIP = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


def _atom(node: Node) -> tuple[Tested, bool] | None:
    """(subject, True when the atom being true means the subject is non-empty)."""
    node = unparen(node)
    if node.type == "comparison_operator":
        operands = [c for c in node.named_children]
        ops = [c.type for c in node.children if not c.is_named]
        if len(operands) != 2 or len(ops) != 1:
            return None
        left, right, op = operands[0], operands[1], ops[0]
        if int_value(left) is not None and int_value(right) is None:
            left, right, op = right, left, _FLIP.get(op, op)
        n = int_value(right)
        subject = _size_subject(left)
        if subject is None or n is None:
            return None
        if (op, n) in _ZERO_WHEN_TRUE:
            return subject, False
        if (op, n) in _NONZERO_WHEN_TRUE:
            return subject, True
        return None
    subject = _size_subject(node)
    if subject is not None:
        return subject, True
    return None


def tests_when(cond: Node, value: bool) -> list[Tested]:
    """Tensors known non-empty (or with a non-zero sum) where `cond` evaluated to `value`."""
    cond = unparen(cond)
    if cond.type == "not_operator":
        arg = cond.child_by_field_name("argument")
        return tests_when(arg, not value) if arg is not None else []
    if cond.type == "boolean_operator":
        op = cond.child_by_field_name("operator")
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        op_text = op.type if op is not None else ""
        if (op_text == "or" and not value) or (op_text == "and" and value):
            return tests_when(left, value) + tests_when(right, value)
        return []
    atom = _atom(cond)
    if atom is None:
        return []
    subject, nonempty_when_true = atom
    return [subject] if nonempty_when_true == value else []


def empty_tests(cond: Node) -> list[Tested]:
    """Size-based emptiness tests of a condition (what AOTI202 reports): its atoms joined by
    `and` / `or` / `not`, never a size inside another comparison (`n >= lengths.shape[0]` is
    true for an empty batch: no emptiness test)."""
    cond = unparen(cond)
    if cond.type == "call" and (dotted_parts(cond.child_by_field_name("function")) or [""])[-1] in ("tensor", "as_tensor"):
        pos, _, _ = call_args(cond)  # `torch._assert_async(torch.tensor(lengths.shape[0] > 0))`
        return empty_tests(pos[0]) if len(pos) == 1 else []
    if cond.type == "not_operator":
        arg = cond.child_by_field_name("argument")
        return empty_tests(arg) if arg is not None else []
    if cond.type == "boolean_operator":
        out = empty_tests(cond.child_by_field_name("left"))
        return out + [t for t in empty_tests(cond.child_by_field_name("right")) if t not in out]
    atom = _atom(cond)
    return [atom[0]] if atom is not None and atom[0].kind == "size" else []


def is_check_call(node: Node) -> Node | None:
    """`torch._check(cond)` / `torch._check_with(...)` / `torch._assert_async(cond)`: the condition."""
    if node.type != "call":
        return None
    func = node.child_by_field_name("function")
    parts = dotted_parts(func) if func is not None else None
    if not parts or parts[-1] not in ("_check", "_check_with", "_assert_async"):
        return None
    pos, kw, _ = call_args(node)
    if parts[-1] == "_check_with":
        return pos[1] if len(pos) > 1 else None
    return pos[0] if pos else kw.get("cond")


def known_nonempty(site: Node, stop: Node, memo: dict | None = None) -> list[Tested]:
    """What the code around `site` (inside `stop`, a function or module) has checked before it
    runs: an early exit `if x.numel() == 0: return`, `torch._check(...)`, `assert`, an
    enclosing `if x.numel() > 0:` or `else` branch, a conditional expression, `and`/`or`."""
    out: list[Tested] = []
    child, node = site, site.parent
    while node is not None:
        t = node.type
        if t in ("block", "module"):
            for start, facts in _block_facts(node, memo):
                if start >= child.start_byte:
                    break
                out += facts
        elif t == "if_statement":
            cond = node.child_by_field_name("condition")
            if child == node.child_by_field_name("consequence"):
                out += tests_when(cond, True)
            elif child.type in ("else_clause", "elif_clause"):
                out += tests_when(cond, False)
        elif t == "elif_clause" and child == node.child_by_field_name("consequence"):
            out += tests_when(node.child_by_field_name("condition"), True)
        elif t == "conditional_expression":
            named = [c for c in node.named_children if c.type != "comment"]
            if len(named) == 3:
                if child == named[0]:
                    out += tests_when(named[1], True)
                elif child == named[2]:
                    out += tests_when(named[1], False)
        elif t == "boolean_operator" and child == node.child_by_field_name("right"):
            op = node.child_by_field_name("operator")
            left = node.child_by_field_name("left")
            if op is not None and op.type == "and":
                out += tests_when(left, True)
            elif op is not None and op.type == "or":
                out += tests_when(left, False)
        if node == stop:
            break
        child, node = node, node.parent
    return out


def _block_facts(block: Node, memo: dict | None) -> list[tuple[int, list[Tested]]]:
    """(start, facts) of the statements of a block that establish something, read once per
    block and analysis (`memo`): a module with many calls of a package does not rescan every
    statement before each."""
    found = memo.get(block.id) if memo is not None else None
    if found is None:
        found = [(stmt.start_byte, f) for stmt in block.named_children if (f := _statement_facts(stmt))]
        if memo is not None:
            memo[block.id] = found
    return found


def _statement_facts(stmt: Node) -> list[Tested]:
    if stmt.type == "if_statement" and exits(stmt.child_by_field_name("consequence")):
        return tests_when(stmt.child_by_field_name("condition"), False)
    if stmt.type == "assert_statement" and stmt.named_child_count:
        return tests_when(stmt.named_children[0], True)
    if stmt.type == "expression_statement" and stmt.named_child_count:
        cond = is_check_call(unparen(stmt.named_children[0]))
        if cond is not None:
            return tests_when(cond, True)
    return []


# -- functions that take jagged inputs ------------------------------------------------------------
def parameters(func: Node) -> tuple[list[str], bool]:
    """Parameter names in order (self/cls dropped for methods), and whether *args/**kwargs exist."""
    params = func.child_by_field_name("parameters")
    names: list[str] = []
    splat = False
    if params is None:
        return names, splat
    for p in params.named_children:
        if p.type == "identifier":
            names.append(text(p))
        elif p.type in ("default_parameter", "typed_default_parameter"):
            n = p.child_by_field_name("name")
            if n is not None and n.type == "identifier":
                names.append(text(n))
        elif p.type == "typed_parameter":
            inner = p.named_children[0] if p.named_children else None
            if inner is not None and inner.type == "identifier":
                names.append(text(inner))
            else:
                splat = True
        elif p.type in ("list_splat_pattern", "dictionary_splat_pattern"):
            splat = True
    if _enclosing_class(func) is not None and names and names[0] in ("self", "cls"):
        names = names[1:]
    return names, splat


def _enclosing_class(func: Node) -> Node | None:
    parent = func.parent
    if parent is not None and parent.type == "decorated_definition":
        parent = parent.parent
    if parent is not None and parent.type == "block" and parent.parent is not None and parent.parent.type == "class_definition":
        return parent.parent
    return None


@record("func", "cls", "key", "params", "splat", "compiled")
class Target:
    """A `forward` or a compiled/exported function. `key`: the class name for a forward, else the
    function name (what export calls name); `compiled`: given to torch.compile (guards stay effective)."""

    def __init__(self, func: Node, cls: Node | None, key: str, params: list[str], splat: bool, compiled: bool = False):
        self.func = func
        self.cls = cls
        self.key = key
        self.params = params
        self.splat = splat
        self.compiled = compiled

    @property
    def label(self) -> str:
        return f"{self.key}.forward" if self.cls is not None else f"{self.key}()"

    @property
    def body(self) -> Node:
        return self.func.child_by_field_name("body")


@record("key", "start", "end", "path", "api", "static", frozen=True)
class ExportSite:
    """`path` None: this file; `api`: the exporter's qualified name; `static`: the call gives no
    `dynamic_shapes` (static_export), so its program has every size of the example."""

    def __init__(self, key: str, start: int, end: int, path: str | None, api: str, static: bool = False):
        set_field(self, "key", key)
        set_field(self, "start", start)
        set_field(self, "end", end)
        set_field(self, "path", path)
        set_field(self, "api", api)
        set_field(self, "static", static)


_DEFINITIONS = ("class_definition", "function_definition", "decorated_definition")
CLASS_NAME = lazyre.compile(rb"(?m)^[ \t]*class[ \t]+([A-Za-z_]\w*)")


@record("path", "start", "end", "line", "args", "facts")
class ExternalCall:
    """A call of a package in another file (from that file's summary). `args`: parameter ->
    argument text (None: not a plain name)."""

    def __init__(self, path: str, start: int, end: int, line: int, args: dict[str, str | None], facts: list[Tested]):
        self.path = path
        self.start = start
        self.end = end
        self.line = line
        self.args = args
        self.facts = facts


@record("call", "target", "args")
class CallSite:
    """`args`: forward parameter -> argument expression (None: cannot tell)."""

    def __init__(self, call: Node, target: Target, args: dict[str, Node] | None):
        self.call = call
        self.target = target
        self.args = args


def shared_property(fn):
    """A property of a Model computed once per Context, whichever rule asks first."""
    key = fn.__name__

    def get(self):
        shared = _shared(self.ctx)
        if key not in shared:
            shared[key] = fn(self)
        return shared[key]

    return property(get, doc=fn.__doc__)


def _shared(ctx) -> dict:
    """Facts of one analysis (one Context) that both rules use: computed once."""
    shared = getattr(ctx, "shared", None)
    return shared.setdefault("jagged", {}) if shared is not None else {}


class Model:
    """Exports, packages, loaded runners and their calls, for one file (and what the
    workspace summaries add)."""

    def __init__(self, ctx, code: str):
        self.ctx = ctx
        self.code = code
        self.patterns = jagged_patterns(ctx.config)

    # -- what this file exports -------------------------------------------------------------
    @shared_property
    def export_calls(self) -> list[tuple[Node, str, str]]:
        """(export call, qualname, key of what it exports)."""
        out = []
        calls = self.ctx.calls_to(EXPORTERS)
        # the helpers whose parameter is exported (_given), their callers found in one pass over
        # the text: one scan per helper grew with the sites
        self.ctx.source.find_words({text(f.child_by_field_name("name")) for f in (
            self.ctx.names.module_function(c) for c, _ in calls) if f is not None})
        for call, qualname in calls:
            pos, kw, _ = call_args(call)
            first = pos[0] if pos else kw.get("mod") or kw.get("f")
            key = self.instance_key(first) if first is not None else None
            if key is not None:
                out.append((call, qualname, key))
        return out

    def instance_key(self, node: Node) -> str | None:
        """`Model(...)`, `Model(...).eval()`, a name bound to one of those, or a function name."""
        made = self._maker(node)
        if isinstance(made, str):
            return made
        parts = dotted_parts(made) if made is not None else None
        return parts[-1] if parts else None

    def _maker(self, node: Node, depth: int = 0) -> Node | str | None:
        """What makes the model `node` is: the callee of `Model(...)` (`models.Pool` of
        `models.Pool().eval()`, or of a name bound to it), or the name of a function it names."""
        node = unparen(node)
        if node is None or depth > 6:
            return None
        if node.type == "call":
            func = node.child_by_field_name("function")
            if func.type == "attribute" and text(func.child_by_field_name("attribute")) in _SAME_MODULE:
                return self._maker(func.child_by_field_name("object"), depth + 1)
            traced = self._traced(func)
            if traced is not None:  # `make_fx(Pool(), ...)(*args)`: a graph of Pool's forward
                return self._maker(traced, depth + 1)
            return func
        if node.type == "identifier":
            names = self.ctx.names
            b = names.lookup(text(node), node.start_byte, names.scope_of(node))
            if b is None:
                return None
            if b.kind == DEF:
                return b.name
            if b.value is not None:
                return self._maker(b.value, depth + 1)
            return self._given(node, b, depth) or self._annotated(b)
        return None

    def _annotated(self, b) -> Node | None:
        """The class a parameter is annotated with (`wrapper: _ChunkEncodeForAOT`: NVIDIA/cosmos-
        framework packages what its helper is given), one plain name of the project, not torch's
        (`nn.Module` names no model). Without it, the package is of a program this file cannot
        name, and every forward of the project may be in it (unknown_packages)."""
        inner = self.ctx.facts.annotation(b)
        if inner is None:
            return None
        qualname = self.ctx.names.resolve(inner)
        if qualname is not None and qualname.split(".")[0] in ("torch", "typing", "collections"):
            return None
        return inner if text(inner).rsplit(".", 1)[-1].lstrip("_")[:1].isupper() else None  # a class's name

    def _given(self, node: Node, b, depth: int) -> Node | str | None:
        """`def package(model, args): ep = torch.export.export(model, args) ...`: what the callers of
        `package` in this file pass for the parameter (mattersim's `compile_m3gnet_aoti(m3gnet)`),
        when they all pass one model; None where none does, one cannot be read, or they differ."""
        func = self.ctx.names.module_function(node)
        calls = self.ctx.facts.calls_named(text(func.child_by_field_name("name"))) if func is not None else ()
        if not calls:
            return None
        params = func.child_by_field_name("parameters")
        scope = self.ctx.names.scope_of(node)
        if not (params.start_byte <= b.at < params.end_byte) or len(scope.bindings.get(b.name, ())) != 1:
            return None  # not a parameter, or bound again in the body
        positional = tuple(positional_names(params))
        found, key = None, None
        for call in calls:
            arg = bind(call, positional)[0].get(b.name)
            made = self._maker(arg, depth + 1) if arg is not None else None
            if made is None:
                return None
            this = made if isinstance(made, str) else text(made)
            if key is not None and this != key:
                return None
            found, key = made, this
        return found

    def _traced(self, func: Node) -> Node | None:
        """The model `make_fx(model, ...)` traces, where `func` (a callee) is that call or a name
        bound to it: its graph runs the model's forward, guards traced away (mattersim, nequip and
        aoti_mlip trace with make_fx, then export)."""
        if not self.ctx.source.has("make_fx"):
            return None
        facts = self.ctx.facts
        made = facts.deref(func, func.start_byte)
        if made is None or made.type != "call" or facts.qualname(made) != MAKE_FX:
            return None
        return _traced_model(made)

    def traced(self, target: Target) -> bool:
        """A `make_fx` of this file traces `target`'s class (its graph is what gets exported)."""
        for call, _ in self.ctx.calls_to({MAKE_FX}):
            first = _traced_model(call)
            made = self._maker(first) if first is not None else None
            if made is not None and not isinstance(made, str) and text(made) == target.key:
                return True
        return False

    def qualified(self, key: str, at: int) -> str | None:
        """Where the class an export names comes from: `pkg.models.Model` for an import,
        `models.Model` for a relative one; None when it is defined in this file."""
        names = self.ctx.names
        b = names.lookup(key, at, names.module)
        if b is None:
            return None
        if b.kind == IMPORT:
            return b.target.lstrip(".")
        stmt = b.stmt or self._relative_import(key)
        if stmt is not None and stmt.type == "import_from_statement":
            module = stmt.child_by_field_name("module_name")
            mod = text(module).lstrip(".") if module is not None else ""
            orig = key
            for n in stmt.children_by_field_name("name"):
                if n.type == "aliased_import" and text(n.child_by_field_name("alias")) == key:
                    orig = text(n.child_by_field_name("name"))
            return f"{mod}.{orig}" if mod else orig
        return None

    def _origin(self, key: str, call: Node) -> str | None:
        """`qualified` for the model an export (or package) call takes, also where it is made as
        an attribute of an imported module (`models.Pool()`: `pkg.models.Pool`). The summary,
        aoti_keys and _defined_here ask it of the same calls: found once per analysis."""
        memo = _shared(self.ctx).setdefault("origins", {})
        found = memo.get((key, call.id), memo)
        if found is memo:
            found = memo[(key, call.id)] = self._origin_of(key, call)
        return found

    def _origin_of(self, key: str, call: Node) -> str | None:
        found = self.qualified(key, call.start_byte)
        if found is not None or call.type != "call":
            return found
        pos, kw, _ = call_args(call)
        first = pos[0] if pos else kw.get("mod") or kw.get("f")
        made = self._maker(first) if first is not None else None
        if made is not None and not isinstance(made, str) and made.type == "attribute":
            resolved = self.ctx.names.resolve(made)
            if resolved is not None and resolved.rsplit(".", 1)[-1] == key:
                return resolved
        return None

    def _export_behind(self, package: Node) -> Node | None:
        """The export call whose program an `aoti_compile_and_package` call takes (asked of
        each package by the summary, aoti_keys and the checks: found once per analysis)."""
        memo = _shared(self.ctx).setdefault("export behind", {})
        found = memo.get(package.id, memo)
        if found is memo:
            found = memo[package.id] = self._find_export_behind(package)
        return found

    def _find_export_behind(self, package: Node) -> Node | None:
        pos, kw, _ = call_args(package)
        first = pos[0] if pos else kw.get("exported_program")
        return self._call_behind(first) if first is not None else None

    def _relative_import(self, key: str) -> Node | None:
        """`from .models import Model` (names.py keeps no statement for relative imports)."""
        for stmt in self.ctx.source.tree.root_node.named_children:
            if stmt.type != "import_from_statement":
                continue
            for n in stmt.children_by_field_name("name"):
                local = n.child_by_field_name("alias") if n.type == "aliased_import" else n
                if local is not None and text(local) == key:
                    return stmt
        return None

    @shared_property
    def packages(self) -> list[tuple[Node, str, str | None]]:
        """(aoti_compile_and_package call, key, package_path literal)."""
        out = []
        for call, _ in self.ctx.calls_to(PACKAGERS):
            pos, kw, _ = call_args(call)
            first = pos[0] if pos else kw.get("exported_program")
            key = self._export_key(first) if first is not None else None
            if key is None:
                continue
            out.append((call, key, self.path_value(kw.get("package_path"))))
        return out

    def path_value(self, node: Node | None) -> str | None:
        """The artifact key of a path expression (facts.py: one evaluator for every rule)."""
        return self.ctx.facts.path_key(node, node.start_byte) if node is not None else None

    def resolved(self, key: str | None) -> str | None:
        return self.ctx.facts.resolve_key(key)

    def _call_behind(self, node: Node | None) -> Node | None:
        """The call an expression is, or that a name is bound to through simple assignments."""
        node = self.ctx.facts.deref(node, node.start_byte) if node is not None else None
        return node if node is not None and node.type == "call" else None

    def _export_key(self, node: Node) -> str | None:
        call = self._call_behind(node)
        if call is None:
            return None
        return self._export_keys.get((call.start_byte, call.end_byte))

    @shared_property
    def _export_keys(self) -> dict[tuple[int, int], str]:
        """(start, end) of an export call -> the key it exports (the first, as a scan found it)."""
        out: dict[tuple[int, int], str] = {}
        for c, _, key in self.export_calls:
            out.setdefault((c.start_byte, c.end_byte), key)
        return out

    def export_entries(self) -> list[tuple]:
        """The summary's "exports": (key, where its class comes from, start, end, qualname, static)."""
        return [(key, self._origin(key, call), call.start_byte, call.end_byte, qualname, static_export(call))
                for call, qualname, key in self.export_calls]

    def summary(self) -> dict:
        exports = self.export_entries()
        packages = sorted({(path, key, self._origin(key, self._export_behind(call) or call)) for call, key, path in self.packages if path})
        out = {}
        if exports:
            out["exports"] = exports
        if packages:
            out["packages"] = packages
        calls = self._package_calls()
        if calls:
            out["calls"] = calls
        aoti = sorted((k, q) for k, q in self.aoti_keys if q is not None)  # a class of another file
        complete = self.complete_keywords()
        if complete:
            out["complete_kw"] = complete
        if self.unknown_packages:
            out["aoti_unknown"] = True
        if aoti:
            out["aoti"] = aoti
        return out

    def _package_calls(self) -> list[tuple]:
        """Calls of packages loaded from a literal path, for the files that define the models:
        (path, start, end, line, positional argument texts, keyword argument texts, checks
        made before the call). An argument that is not a plain name or attribute is None."""
        out = []
        for load, literal in self._raw_loads:
            if literal is None:
                continue
            for call in self._calls_of_runner(load):
                pos, kw, splat = call_args(call)
                if splat:
                    continue
                facts = tuple(sorted({(f.text, f.kind) for f in known_nonempty(call, _scope_node(call), _shared(self.ctx).setdefault("blocks", {}))}))
                out.append((literal, call.start_byte, call.end_byte, self.ctx.source.lines.line_of(call.start_byte) + 1,
                            tuple(text(a) if plain_expression(a) else None for a in pos),
                            tuple(sorted((k, text(v) if plain_expression(v) else None) for k, v in kw.items())), facts))
        return out

    def external_calls(self, target: Target) -> list[ExternalCall]:
        """Calls of `target`'s package made in other files of the workspace."""
        summaries = self._project_summaries()
        here = self.ctx.source.path
        ours: set[str] = {self.resolved(path) for _, key, path in self.packages if path and key == target.key}
        for summary in summaries.values():
            for path, key, qual in summary.get("packages", ()):
                if key == target.key and _same_module(qual, key, here):
                    ours.add(self.resolved(path))
        out = []
        for other, summary in sorted(summaries.items()):
            for path, start, end, line, pos, kw, facts in summary.get("calls", ()):
                if self.resolved(path) not in ours or len(pos) > len(target.params) or target.splat:
                    continue
                args = dict(zip(target.params, pos))
                args.update(dict(kw))
                if set(args) - set(target.params):
                    continue
                out.append(ExternalCall(other, start, end, line, args, [Tested(t, k) for t, k in facts]))
        return out

    # -- what the workspace exports ------------------------------------------------------------
    def _project_summaries(self) -> dict[str, dict]:
        project = getattr(self.ctx, "project", None)
        if project is None:
            return {}
        memo = self.ctx.lookups.setdefault("jagged-summaries", {}) if hasattr(self.ctx, "lookups") else {}
        if "all" not in memo:
            memo["all"] = self._read_summaries(project)
        return memo["all"]

    def _read_summaries(self, project) -> dict[str, dict]:
        here = self.ctx.source.path
        out: dict[str, dict] = {}
        for code in SUMMARY_CODES:
            for p, s in project.of(code).items():
                if p != here and isinstance(s, dict):
                    out.setdefault(p, s)
        return out

    def exports_of(self, target: Target) -> list[ExportSite]:
        sites = []
        for call, qualname, key in self.export_calls:
            if key == target.key and self._defined_here(key, call) and self._constructs(call, target):
                sites.append(ExportSite(key, call.start_byte, call.end_byte, None, qualname, static_export(call)))
        for path, summary in sorted(self._project_summaries().items()):
            entries = self._lazy_exports(path, target.key) if summary.get("lazy_exports") else summary.get("exports", ())
            for key, qual, start, end, qualname, static in entries:
                if key == target.key and _same_module(qual, key, self.ctx.source.path):
                    sites.append(ExportSite(key, start, end, path, qualname, static))
        return sites

    def _lazy_exports(self, path: str, key: str) -> list[tuple]:
        """The exports of a file summarised "lazy_exports", parsed only if it may name `key` (Project.from_file:
        once per file version, and a dependency of this file's result)."""
        project = self.ctx.project
        if not lazy_may_export(project, path, key, module_stem(self.ctx.source.path)):
            return []
        code = self.code
        return project.from_file(path, "jagged exports", lambda ctx: Model(ctx, code).export_entries()) or []

    def _compiled_here(self, target: Target) -> bool:
        """An AOT compile of this file compiles `target`'s own class (aoti_keys, told apart from
        another class of the same name: _constructs)."""
        for call, qualname, key in self.export_calls:
            if qualname == "torch._export.aot_compile" and key == target.key and self._constructs(call, target):
                return True
        for call, key, _ in self.packages:
            export = self._export_behind(call) if key == target.key else None
            if export is not None and self._constructs(export, target):
                return True
        return False

    def _constructs(self, export: Node, target: Target) -> bool:
        """The export call's model is `target`'s class. Read only where the file defines two classes
        of that name (a PyTorch issue's reproduction redefines its model): the one bound where the
        model is made."""
        if target.cls is None or self._class_count(target.key) < 2:
            return True
        pos, kw, _ = call_args(export)
        first = pos[0] if pos else kw.get("mod") or kw.get("f")
        made = self._instance_def(first) if first is not None else None
        return made is None or made.start_byte <= target.cls.start_byte < made.end_byte

    def _class_count(self, name: str) -> int:
        """How many `class name` statements the file has (one regex pass per file, whatever the names)."""
        shared = _shared(self.ctx)
        if "class counts" not in shared:
            counts: dict[bytes, int] = {}
            for found in CLASS_NAME.findall(self.ctx.source.data):
                counts[found] = counts.get(found, 0) + 1
            shared["class counts"] = counts
        return shared["class counts"].get(name.encode(), 0)

    def _instance_def(self, node: Node) -> Node | None:
        """The class statement that makes the model `node` is (`Model(...)` or a name bound to one),
        as `Model` is bound where it is made."""
        made = self._maker(node)
        if made is None or isinstance(made, str) or made.type != "identifier":
            return None
        names = self.ctx.names
        b = names.lookup(text(made), made.start_byte, names.scope_of(made))
        return b.stmt if b is not None and b.stmt is not None and b.stmt.type in _DEFINITIONS else None

    def _defined_here(self, key: str, call: Node) -> bool:
        """The exported name is this file's class/function (not an import of another one)."""
        return self._origin(key, call) is None

    # -- targets ---------------------------------------------------------------------------------
    @shared_property
    def compiled_functions(self) -> dict[int, bool]:
        """function node id -> True for torch.compile (guards work), False for aot_compile."""
        out: dict[int, bool] = {}
        names = self.ctx.names
        for call, qualname in self.ctx.calls_to(COMPILERS | {"torch._export.aot_compile"}):
            pos, kw, _ = call_args(call)
            first = pos[0] if pos else kw.get("model") or kw.get("f")
            if first is None or unparen(first).type != "identifier":
                continue
            b = names.lookup(text(first), first.start_byte, names.scope_of(first))
            if b is not None and b.kind == DEF and b.stmt is not None:
                out[b.stmt.id] = qualname in COMPILERS
        return out

    def targets(self) -> list[Target]:
        """Every `forward` method, and the functions given to or decorated with torch.compile /
        aot_compile; found from where those names are spelt, never by walking the file."""
        shared = _shared(self.ctx)
        if "targets" not in shared:
            funcs: dict[int, Node] = {}
            for ident in self.ctx.source.identifiers("forward"):
                func = ident.parent
                if func is not None and func.type == "function_definition" and func.child_by_field_name("name") == ident:
                    funcs[func.id] = func
            for func in self._compiled_defs():
                funcs[func.id] = func
            out: list[Target] = []
            for func in funcs.values():
                name = text(func.child_by_field_name("name"))
                cls = _enclosing_class(func)
                if name == "forward" and cls is not None and self.autograd_function(cls, func):
                    continue  # a training op's wrapper: no AOTI package runs it (scope policy)
                if name == "forward" and cls is not None:
                    params, splat = parameters(func)
                    out.append(Target(func, cls, text(cls.child_by_field_name("name")), params, splat,
                                      compiled=self._decorated_compile(cls)))
                elif cls is None and (func.id in self.compiled_functions or self._decorated_compile(func)):
                    params, splat = parameters(func)
                    out.append(Target(func, None, name, params, splat, compiled=self.compiled_functions.get(func.id, True)))
            shared["targets"] = sorted(out, key=lambda t: t.func.start_byte)
        return shared["targets"]

    def autograd_function(self, cls: Node, func: Node) -> bool:
        """`class F(torch.autograd.Function)` (or `Function` imported from torch.autograd), or a
        static `forward(ctx, ...)`: autograd's protocol, run by training, never exported."""
        bases = cls.child_by_field_name("superclasses")
        for base in bases.named_children if bases is not None else ():
            qual = self.ctx.names.resolve(base) if base.type in ("identifier", "attribute") else None
            if qual in _AUTOGRAD_FUNCTIONS or text(base).endswith("autograd.Function"):
                return True
        params = func.child_by_field_name("parameters")
        first = params.named_children[0] if params is not None and params.named_children else None
        return first is not None and text(first) == "ctx" and _decorators(func) & {"staticmethod"} != set()

    @shared_property
    def evidence(self) -> bool:
        """This file exports, AOT-compiles, packages or loads a package (resolved calls)."""
        return bool(self.ctx.calls_to(EXPORTERS | PACKAGERS | LOADERS))

    @shared_property
    def aoti_keys(self) -> set[tuple[str, str | None]]:
        """(key, where it comes from) of what this file AOT-compiles: the programs given to
        `aoti_compile_and_package`, and `aot_compile` (None: a class of this file)."""
        out = {(key, self._origin(key, self._export_behind(call) or call)) for call, key, _ in self.packages}
        out |= {(key, self._origin(key, call)) for call, qualname, key in self.export_calls
                if qualname == "torch._export.aot_compile"}
        return out

    @shared_property
    def unknown_packages(self) -> bool:
        """This file AOT-compiles a program it cannot name (`aoti_compile_and_package(ep)` of
        an `ep` made elsewhere, e.g. a generic export helper): any model may be in it."""
        # a key spelt in lower case is what a function returned (`symbolic_trace(model)`), not a
        # class (`_Wrapper` is one: a private class)
        known = {(c.start_byte, c.end_byte) for c, key, _ in self.packages if key.lstrip("_")[:1].isupper()}
        return any((c.start_byte, c.end_byte) not in known for c, _ in self.ctx.calls_to(PACKAGERS))

    def scope(self, target: Target) -> str | None:
        """The scope policy of AOTI201/AOTI202 (their pages say it):
        "package": an AOTI package certainly runs this code (the artifact graph: its class or
        function is AOT-compiled in this file or in the project);
        "evidence": a `forward` of a file that exports or loads packages (or of an exported
        class), which an AOTI package may run;
        None: nothing says an AOTI package runs it (eager, torch.compile, training code)."""
        if target.cls is None and not target.compiled:
            return "package"  # given to aot_compile
        if target.compiled:
            return None  # torch.compile keeps guards and specialises sizes 0 and 1: not AOTI
        if (target.key, None) in self.aoti_keys and self._compiled_here(target):
            return "package"
        for summary in self._project_summaries().values():
            for key, qual in summary.get("aoti", ()):
                if key == target.key and _same_module(qual, key, self.ctx.source.path):
                    return "package"
        if self.evidence or self.exports_of(target) or self.unknown_packages:
            return "evidence"
        # a project that AOT-compiles programs it cannot name: its nn.Module forwards may be in them
        return "evidence" if any(s.get("aoti_unknown") for s in self._project_summaries().values()) else None

    # -- complete offsets, followed across calls ---------------------------------------------
    def complete_params(self, target: Target) -> set[str]:
        """Jagged parameters that hold complete offsets (B + 1 entries, a leading zero): named
        so by a documented convention (`cu_seqlens`), documented so in the docstring, or
        passed so by every caller the project shows (a call of an instance of the class, or a
        keyword argument of that name), at least one."""
        out = set()
        doc = _docstrings(target)
        for p in target.params:
            if not is_jagged_name(p, self.patterns) or is_jagged_name(p, PAIRED_VALUES):
                continue
            if is_jagged_name(p, COMPLETE_BY_NAME) or any(p in line and _DOCUMENTED_COMPLETE.search(line) for line in doc):
                out.add(p)
                continue
            if self._passed_complete(target, p):
                out.add(p)
        return out

    def _passed_complete(self, target: Target, param: str) -> bool:
        """Every value the project passes as `param` is complete offsets, and there is one. The
        first that is not decides: the files summarised unparsed ("lazy_kw") are read last and
        only while every value so far is complete (torchrec asked 185 of them, parsed 62)."""
        src = self.ctx.source
        verdicts = [complete_expression(self.ctx, v) for v in _keyword_values(src, param)]
        if target.cls is not None:
            for call in self._instance_calls(target.key):
                args = self._bind(call, target)
                if args is not None and param in args and not _is_keyword_value(args[param]):
                    verdicts.append(complete_expression(self.ctx, args[param]))
        lazy = []
        for path, summary in self._project_summaries().items():
            if summary.get("lazy_kw"):
                lazy.append(path)
            else:
                verdicts += [ok for name, ok in summary.get("complete_kw", ()) if name == param]
        if not all(verdicts):
            return False
        for path in lazy:  # a file read is a dependency of this result (from_file); one not read is not
            found = [ok for name, ok in self._lazy_keywords(path) if name == param]
            if not all(found):
                return False
            verdicts += found
        return bool(verdicts)

    def _lazy_keywords(self, path: str) -> list[tuple[str, bool]]:
        """complete_keywords of a file summarised "lazy_kw" (summary_from_text), parsed now
        (Project.from_file: once per file version, and a dependency of this file's result)."""
        code = self.code
        return self.ctx.project.from_file(path, "jagged keywords",
                                          lambda ctx: Model(ctx, code).complete_keywords()) or []

    def _instance_calls(self, key: str) -> list[Node]:
        """Calls of instances of class `key` made in this file: `m = K(...); m(...)`,
        `self.enc = K(...); self.enc(...)`, `K(...)(...)`."""
        src, out = self.ctx.source, []
        for ident in src.identifiers(key):
            make = ident.parent
            if make is None or make.type != "call" or make.child_by_field_name("function") != ident:
                continue
            if make.parent is not None and make.parent.type == "call" and make.parent.child_by_field_name("function") == make:
                out.append(make.parent)
                continue
            bind = make.parent
            left = bind.child_by_field_name("left") if bind is not None and bind.type == "assignment" else None
            if left is None or left.type not in ("identifier", "attribute"):
                continue
            name = text(left) if left.type == "identifier" else text(left.child_by_field_name("attribute"))
            for use in src.identifiers(name):
                callee = use if left.type == "identifier" else use.parent
                if callee is None or text(callee) != text(left):
                    continue
                call = callee.parent
                if call is not None and call.type == "call" and call.child_by_field_name("function") == callee:
                    out.append(call)
        return out

    def complete_keywords(self) -> list[tuple[str, bool]]:
        """(name, complete) for the jagged keyword arguments of this file's calls (summary)."""
        src, out = self.ctx.source, set()
        if not patterns_spelt(self.patterns, src.data):
            return []
        names = {m.decode() for m in _KEYWORD.findall(src.data)}
        for name in names:
            if is_jagged_name(name, self.patterns) and not is_jagged_name(name, PAIRED_VALUES):
                out |= {(name, complete_expression(self.ctx, v)) for v in _keyword_values(src, name)}
        return sorted(out)

    def _compiled_defs(self) -> list[Node]:
        """Functions given to torch.compile / aot_compile, or decorated with torch.compile."""
        names = self.ctx.names
        out = []
        for call, _ in self.ctx.calls_to(COMPILERS | {"torch._export.aot_compile"}):
            pos, _, _ = call_args(call)
            if pos and unparen(pos[0]).type == "identifier":
                b = names.lookup(text(unparen(pos[0])), pos[0].start_byte, names.scope_of(pos[0]))
                if b is not None and b.kind == DEF and b.stmt is not None:
                    out.append(b.stmt)
        for ident in self.ctx.source.identifiers("compile"):
            node = ident
            for _ in range(4):  # compile -> attribute -> (call ->) decorator
                node = node.parent
                if node is None or node.type == "decorator":
                    break
            deco = node.parent if node is not None and node.type == "decorator" else None
            inner = deco.child_by_field_name("definition") if deco is not None else None
            if inner is not None and inner.type == "function_definition":
                out.append(inner)
        return out

    def _decorated_compile(self, node: Node) -> bool:
        parent = node.parent
        if parent is None or parent.type != "decorated_definition":
            return False
        for dec in parent.named_children:
            if dec.type != "decorator" or not dec.named_children:
                continue
            expr = unparen(dec.named_children[0])
            if expr.type == "call":
                expr = expr.child_by_field_name("function")
            if self.ctx.names.resolve(expr) in COMPILERS:
                return True
        return False

    # -- loaded packages and their callers -----------------------------------------------------
    @shared_property
    def _raw_loads(self) -> list[tuple[Node, str | None]]:
        """(loader call, the artifact key it loads when this file can tell)."""
        return [(load.call, self.path_value(load.path_node)) for load in self.ctx.facts.loads if load.qualname in LOADERS]

    @cached_property
    def _loads(self) -> list[tuple[Node, str]]:
        """(loader call, key of the model it runs), when this file can tell."""
        out = []
        in_file = {self.resolved(path): key for _, key, path in self.packages if path}
        in_project: dict[str, list[tuple[str, str | None]]] = {}
        for summary in self._project_summaries().values():
            for path, key, qual in summary.get("packages", ()):
                in_project.setdefault(self.resolved(path), []).append((key, qual))
        for load in self.ctx.facts.loads:
            call, first = load.call, load.path_node
            if first is None or load.qualname not in LOADERS:
                continue
            key = self._package_key(first)
            literal = self.resolved(self.path_value(first))
            if key is None and literal is not None:
                key = in_file.get(literal)
                if key is None:
                    keys = {k for k, q in in_project.get(literal, ()) if _same_module(q, k, self.ctx.source.path)}
                    key = next(iter(keys)) if len(keys) == 1 else None
            if key is not None:
                out.append((call, key))
        return out

    def _package_key(self, node: Node) -> str | None:
        call = self._call_behind(node)
        if call is None:
            return None
        packages, compiles = self._package_keys
        found = packages.get((call.start_byte, call.end_byte))
        return found if found is not None else compiles.get(call.start_byte)

    @shared_property
    def _package_keys(self) -> tuple[dict[tuple[int, int], str], dict[int, str]]:
        """((start, end) of a package call -> key, start of an aot_compile call -> key): the
        first of each, as a scan found it; one pass, not one per load."""
        packages: dict[tuple[int, int], str] = {}
        compiles: dict[int, str] = {}
        for c, key, _ in self.packages:
            packages.setdefault((c.start_byte, c.end_byte), key)
        for c, qualname, key in self.export_calls:  # aot_compile(model, ...) -> .so path
            if qualname == "torch._export.aot_compile":
                compiles.setdefault(c.start_byte, key)
        return packages, compiles

    def call_sites(self, target: Target, all_calls: bool = False) -> list[CallSite]:
        """Calls of a loaded package of `target`'s model in this file; with `all_calls`, also
        those whose arguments cannot be matched to the parameters (their `args` is None)."""
        out = []
        for load, key in self._loads:
            if key != target.key:
                continue
            for call in self._calls_of_runner(load):
                args = self._bind(call, target)
                if args is not None or all_calls:
                    out.append(CallSite(call, target, args))
        return sorted(out, key=lambda c: c.call.start_byte)

    def _calls_of_runner(self, load: Node) -> list[Node]:
        site = self.ctx.facts.load_of(load)
        return self.ctx.facts.runner_calls(site) if site is not None else []

    @staticmethod
    def _bind(call: Node, target: Target) -> dict[str, Node] | None:
        pos, kw, splat = call_args(call)
        if splat or target.splat or len(pos) > len(target.params):
            return None
        args = dict(zip(target.params, pos))
        for k, v in kw.items():
            if k not in target.params:
                return None
            args[k] = v
        return args

    def model_variable(self, target: Target, at: Node) -> str | None:
        """A name visible at `at` bound to an instance of `target`'s class (to stand for `self`)."""
        names = self.ctx.names
        for call, _, key in self.export_calls:
            if key != target.key:
                continue
            pos, _, _ = call_args(call)
            if not pos or unparen(pos[0]).type != "identifier":
                continue
            name = text(unparen(pos[0]))
            here = names.lookup(name, at.start_byte, names.scope_of(at))
            there = names.lookup(name, call.start_byte, names.scope_of(call))
            if here is not None and there is not None and here.at == there.at and self.instance_key(pos[0]) == key:
                return name
        return None


_AUTOGRAD_FUNCTIONS = {"torch.autograd.Function", "torch.autograd.function.Function"}


def _decorators(func: Node) -> set[str]:
    parent = func.parent
    if parent is None or parent.type != "decorated_definition":
        return set()
    return {text(d.named_children[0]).rsplit(".", 1)[-1] for d in parent.named_children
            if d.type == "decorator" and d.named_children}


_KEYWORD = lazyre.compile(rb"[(,]\s*([A-Za-z_]\w*)\s*=(?!=)")


# where a file's text says `export(` (ONNX's, TorchScript's, an app's own `def export(`), its
# summary can hold an export only if the file can call torch's: it calls it by its full name
# (`torch.export.export(`), imports it or its module (`torch.export`, `torch._export`) under any
# name, or imports torch under another name (`t.export.export(`). A mention in a comment, or an
# import of something else from torch.export (`ExportedProgram`), is none of these.
_TORCH_EXPORT = lazyre.compile(
    rb"torch\s*\.\s*_?export\s*\.\s*(?:export|export_for_training|draft_export)\s*\("
    rb"|from\s+torch\s*\.\s*_?export\s+import\s*\(?[\w\s,]*?\b(?:export|export_for_training|draft_export)\b"
    rb"|import\s+torch\s*\.\s*_?export\b(?!\s*\.)|from\s+torch\s+import\s*\(?[\w\s,]*?\b_?export\b"
    rb"|import\s+torch\s+as\b")


_WEAK = frozenset({"export(", "export as"})


def wants_summary(rule, source) -> bool:
    """AOTI201/202's summary triggers, where the export ones (`export(`, `export as`) count only
    if the file can call torch's export (_TORCH_EXPORT): a cold check of torch's own sources
    parsed 5.7 MB for its summaries before, 3.9 MB now (same findings); and an export imported
    under another name (`from torch.export import export as ex`, no `export(`) is now seen."""
    found = [t for t in rule.summary_triggers if source.has(t)]
    if not found:
        return False
    return not _WEAK.issuperset(found) or _TORCH_EXPORT.search(source.data) is not None


# a file whose summary triggers are only these has nothing for the project but its exports and its
# calls' keyword verdicts, each read by a check only for one name
_LAZY_TRIGGERS = {"export(": "lazy_exports", "export as": "lazy_exports", "export_for_training": "lazy_exports",
                  "draft_export": "lazy_exports", "offsets=": "lazy_kw"}


def summary_from_text(rule, source, config) -> dict | None:
    """A file whose summary triggers are only exports and `offsets=` (a call passing offsets, or a
    `def` with an `offsets=` default) holds, for the project, the classes it exports
    (export_entries: "lazy_exports") and its calls' keyword verdicts (complete_keywords:
    "lazy_kw"). A check asks for them by a class name or a parameter name, rarely: the file is
    summarised unparsed, and parsed when a check asks (Model.exports_of, only where the file may
    name the class; Model._passed_complete). A cold check of torch's own sources parsed 1.7 MB
    for the keyword verdicts and never asked; pytorch/ao's, 1.0 MB of tests for their exports."""
    found = [t for t in rule.summary_triggers if source.has(t)]
    if config.options or not all(t in _LAZY_TRIGGERS for t in found):
        return None  # rule options (jagged-names): the parse, with them
    return {_LAZY_TRIGGERS[t]: True for t in found} if summary_owner(config) == rule.code else {}


def _keyword_values(src, name: str) -> list[Node]:
    out = []
    for ident in src.identifiers(name):
        kw = ident.parent
        if kw is not None and kw.type == "keyword_argument" and kw.child_by_field_name("name") == ident:
            out.append(kw.child_by_field_name("value"))
    return out


def _is_keyword_value(node: Node) -> bool:
    return node.parent is not None and node.parent.type == "keyword_argument"


def _docstrings(target: Target) -> list[str]:
    """Lines of the forward's docstring and of its class's."""
    out = []
    for owner in (target.func, target.cls):
        body = owner.child_by_field_name("body") if owner is not None else None
        first = body.named_children[0] if body is not None and body.named_children else None
        if first is not None and first.type == "expression_statement" and first.named_children \
                and first.named_children[0].type == "string":
            out += text(first.named_children[0]).splitlines()
    return out


def complete_expression(ctx, node: Node | None, depth: int = 0) -> bool:
    """Offsets with a leading zero: `asynchronous_complete_cumsum(l)`, `torch.cat([zeros(1),
    cumsum(l)])`, `F.pad(cumsum(l), (1, 0))`, `cu_seqlens`, or a name bound only to those in
    its function."""
    node = unparen(node) if node is not None else None
    if node is None or depth > 4:
        return False
    if node.type == "call":
        parts = dotted_parts(node.child_by_field_name("function")) or []
        pos, kw, _ = call_args(node)
        if parts and parts[-1] in COMPLETE_CUMSUMS:
            return True
        if parts and parts[-1] in ("cat", "concat", "concatenate"):
            seq = unparen(pos[0]) if pos else None
            return seq is not None and seq.type in ("list", "tuple") and bool(seq.named_children) \
                and _nonempty_constant(seq.named_children[0])
        if parts and parts[-1] == "pad" and len(pos) > 1 and unparen(pos[1]).type in ("tuple", "list"):
            amounts = unparen(pos[1]).named_children
            return bool(amounts) and (int_value(amounts[0]) or 0) > 0
        return False
    if node.type == "identifier":
        name = text(node)
        if is_jagged_name(name, COMPLETE_BY_NAME):
            return True
        scope = _scope_node(node)
        values = []
        for ident in ctx.source.identifiers(name):  # its assignments before it, in its function
            bind = ident.parent
            if bind is not None and bind.type == "assignment" and bind.child_by_field_name("left") == ident \
                    and bind.start_byte < node.start_byte and _scope_node(bind) == scope:
                values.append(bind.child_by_field_name("right"))
        return bool(values) and all(complete_expression(ctx, v, depth + 1) for v in values)
    return False


def plain_expression(node: Node) -> bool:
    """A name, attribute or constant subscript: safe to evaluate twice, stable to compare."""
    node = unparen(node)
    if node.type == "identifier":
        return True
    if node.type == "attribute":
        return plain_expression(node.child_by_field_name("object"))
    if node.type == "subscript":
        return plain_expression(node.child_by_field_name("value")) and all(
            int_value(s) is not None or string_value(s) is not None for s in subscripts(node))
    return False


def _scope_node(node: Node) -> Node:
    while node.parent is not None and node.type not in ("function_definition", "module"):
        node = node.parent
    return node


def _class_of(node: Node) -> Node | None:
    while node is not None and node.type != "class_definition":
        node = node.parent
    return node


def _same_module(qual: str | None, key: str, path: str) -> bool:
    """Does an export of `qual` (None: a class of that other file) name a class of `path`?"""
    if qual is None:
        return False
    parts = qual.split(".")
    if parts[-1] != key:
        return False
    if len(parts) == 1:
        return True
    folder, name = os.path.split(path)
    stem = os.path.splitext(name)[0]
    if stem == "__init__":
        stem = os.path.basename(folder)
    return parts[-2] == stem


def string_value(node: Node | None) -> str | None:
    node = unparen(node) if node is not None else None
    if node is None or node.type != "string":
        return None
    parts = [c for c in node.named_children if c.type not in ("string_start", "string_end")]
    if len(parts) == 1 and parts[0].type == "string_content":
        return text(parts[0])
    if not parts:
        return ""
    return None


# -- taint: which tensors come from a jagged input --------------------------------------------
@record("roots", "maybe_empty", "like", frozen=True)
class Taint:
    """`roots`: the jagged parameters behind it; `maybe_empty`: empty when a root is empty;
    `like`: same shape (and emptiness) as this jagged parameter."""

    def __init__(self, roots: frozenset[str], maybe_empty: bool, like: str | None = None):
        set_field(self, "roots", roots)
        set_field(self, "maybe_empty", maybe_empty)
        set_field(self, "like", like)

    def merge(self, other: Taint | None) -> Taint:
        if other is None:
            return self
        return Taint(self.roots | other.roots, self.maybe_empty or other.maybe_empty,
                     self.like if self.like == other.like else None)


@record("kind", "node", "tensor", "roots", "needs", "op", "index")
class Site:
    """`kind`: last | tail | head | reduce | index; `node`: what is flagged; `tensor`: the jagged
    tensor (last/tail/head/reduce) or the indexed one (index); `roots`: the jagged inputs behind
    it; `needs`: parameters whose emptiness the guard must test; `op`: `[-1]`, `.max()`,
    `index_select`, ...; `index`: the indices (index sites)."""

    def __init__(self, kind: str, node: Node, tensor: Node, roots: frozenset[str], needs: tuple[str, ...], op: str,
                 index: Node | None = None):
        self.kind = kind
        self.node = node
        self.tensor = tensor
        self.roots = roots
        self.needs = needs
        self.op = op
        self.index = index


class Flow:
    """Jagged taint through one function (flow-insensitive: a name is jagged if any of its
    assignments is), the size-sensitive sites on it, and the guards in front of them."""

    def __init__(self, ctx, target: Target, patterns: Iterable[str], complete: Iterable[str] = ()):
        self.ctx = ctx
        self.complete = frozenset(complete)  # offsets with a leading zero: never empty
        self.target = target
        self.params = list(target.params)
        self.jagged = [p for p in self.params if is_jagged_name(p, patterns)]
        # the values of a jagged pair (any rank) are empty when every row is
        self.values = [p for p in self.params if self.jagged and p not in self.jagged and is_jagged_name(p, PAIRED_VALUES)]
        self.jagged += self.values
        self.assigns: dict[str, list[Node]] = {}
        for n in walk(target.body):
            if n.type == "assignment":
                left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
                if left is not None and left.type == "identifier" and right is not None:
                    self.assigns.setdefault(text(left), []).append(right)
            elif n.type == "augmented_assignment":
                left = n.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    self.assigns.setdefault(text(left), []).append(n)
        # jagged tensors carried in a parameter, named so where they are taken out:
        # `uih_seq_lengths = grouped_features["uih.sequence_length"]`, `lengths = batch.lengths`
        self.carried = [n for n, vs in self.assigns.items() if n not in self.params and len(vs) == 1
                        and is_jagged_name(n, patterns) and not is_jagged_name(n, PAIRED_VALUES)
                        and self._taken_from_parameter(vs[0])]
        self.jagged += self.carried
        self.taint: dict[str, Taint] = {p: Taint(frozenset({p}), p not in self.complete, p) for p in self.jagged}
        for _ in range(8):
            changed = False
            for name, values in self.assigns.items():
                for v in values:
                    t = self.taint_of(v.child_by_field_name("right") if v.type == "augmented_assignment" else v)
                    if v.type == "augmented_assignment":
                        t = t.merge(self.taint.get(name)) if t is not None else self.taint.get(name)
                    if t is None:
                        continue
                    old = self.taint.get(name)
                    new = t if old is None else old.merge(t)
                    if new != old:
                        self.taint[name] = new
                        changed = True
            if not changed:
                break

    def order(self, name: str) -> int:
        """Parameters first, in order; then carried tensors."""
        return self.params.index(name) if name in self.params else len(self.params) + self.carried.index(name)

    def _taken_from_parameter(self, value: Node) -> bool:
        """`p[...]`, `p.x`, `p.x()` (chains of those) on a parameter that is not jagged itself."""
        node = unparen(value)
        if node.type == "call" and not call_args(node)[0] and not call_args(node)[1]:
            node = node.child_by_field_name("function")
        if node.type not in ("subscript", "attribute"):
            return False
        while node.type in ("subscript", "attribute", "call"):
            node = node.child_by_field_name("value" if node.type == "subscript" else "object" if node.type == "attribute" else "function")
            if node is None:
                return False
        return node.type == "identifier" and text(node) in self.params and text(node) not in self.jagged

    # -- taint ----------------------------------------------------------------------------------
    def taint_of(self, node: Node | None, depth: int = 0) -> Taint | None:
        node = unparen(node) if node is not None else None
        if node is None or depth > 30:
            return None
        t = node.type
        if t == "identifier":
            return self.taint.get(text(node))
        if t == "binary_operator":
            left = self.taint_of(node.child_by_field_name("left"), depth + 1)
            right = self.taint_of(node.child_by_field_name("right"), depth + 1)
            if left is None:
                return right
            return left.merge(right)
        if t == "unary_operator":
            return self.taint_of(node.named_children[-1], depth + 1)
        if t == "conditional_expression":
            named = node.named_children
            if len(named) == 3:
                a, b = self.taint_of(named[0], depth + 1), self.taint_of(named[2], depth + 1)
                return a.merge(b) if a is not None else b
            return None
        if t == "subscript":
            value = self.taint_of(node.child_by_field_name("value"), depth + 1)
            if value is None:
                return None
            subs = subscripts(node)
            if len(subs) == 1 and subs[0].type == "slice":
                return Taint(value.roots, True, None)
            if any(int_value(s) is not None or s.type == "ellipsis" for s in subs):
                return None  # an element
            return Taint(value.roots, True, None)
        if t == "call":
            return self._call_taint(node, depth)
        return None

    def _call_taint(self, node: Node, depth: int) -> Taint | None:
        func = node.child_by_field_name("function")
        pos, kw, _ = call_args(node)
        parts = dotted_parts(func) if func.type in ("identifier", "attribute") else None
        if parts and parts[-1] in COMPLETE_CUMSUMS and pos:  # fbgemm: offsets with a leading zero
            first = self.taint_of(pos[0], depth + 1)
            return Taint(first.roots, False, None) if first is not None else None
        qual = self.ctx.names.resolve(func) if func.type in ("identifier", "attribute") else None
        if qual is not None and qual.startswith("torch."):
            return self._torch_taint(qual, pos, kw, depth)
        if func.type != "attribute":
            return None
        obj = self.taint_of(func.child_by_field_name("object"), depth + 1)
        if obj is None:
            return None
        meth = text(func.child_by_field_name("attribute"))
        if meth in _ELEMENTWISE:
            return obj
        if meth in _RESHAPE:
            return Taint(obj.roots, obj.maybe_empty, None)
        return None

    def _torch_taint(self, qual: str, pos: list[Node], kw: dict[str, Node], depth: int) -> Taint | None:
        name = qual.rsplit(".", 1)[-1]
        if qual in ("torch.nn.functional.pad", "torch.constant_pad_nd"):
            first = self.taint_of(pos[0], depth + 1) if pos else None
            if first is None:
                return None
            pad = pos[1] if len(pos) > 1 else kw.get("pad")
            amounts = [int_value(c) for c in unparen(pad).named_children] if pad is not None and unparen(pad).type in ("tuple", "list") else []
            if amounts and all(a is not None for a in amounts) and sum(amounts) > 0:
                return Taint(first.roots, False, None)
            return Taint(first.roots, first.maybe_empty, None)
        if not qual.startswith("torch.") or qual.count(".") != 1:
            return None
        if name in _ELEMENTWISE and pos:
            return self.taint_of(pos[0], depth + 1)
        if name in _RESHAPE and pos:
            first = self.taint_of(pos[0], depth + 1)
            return Taint(first.roots, first.maybe_empty, None) if first is not None else None
        if name == "where" and len(pos) == 3:
            a, b = self.taint_of(pos[1], depth + 1), self.taint_of(pos[2], depth + 1)
            return a.merge(b) if a is not None else b
        if name == "diff" and pos:
            first = self.taint_of(pos[0], depth + 1)
            return Taint(first.roots, True, None) if first is not None else None
        if name in ("cat", "concat", "concatenate", "hstack"):
            seq = pos[0] if pos else kw.get("tensors")
            seq = unparen(seq) if seq is not None else None
            if seq is None or seq.type not in ("list", "tuple"):
                return None
            parts = [self.taint_of(p, depth + 1) for p in seq.named_children]
            tainted = [p for p in parts if p is not None]
            if not tainted:
                return None
            roots = frozenset().union(*(p.roots for p in tainted))
            nonempty = any(_nonempty_constant(p) for p in seq.named_children)
            return Taint(roots, not nonempty, None)
        return None

    # -- the parameters an expression is built from (any, jagged or not) ------------------------
    def param_roots(self, node: Node, depth: int = 0, seen: set | None = None) -> list[str]:
        seen = set() if seen is None else seen
        out: list[str] = []
        for ident in free_identifiers(node):
            name = text(ident)
            if name in self.params and name not in out:
                out.append(name)
            elif name in self.assigns and name not in seen and depth < 6:
                seen.add(name)
                for value in self.assigns[name]:
                    for p in self.param_roots(value, depth + 1, seen):
                        if p not in out:
                            out.append(p)
        return sorted(out, key=self.params.index)

    # -- sites ----------------------------------------------------------------------------------
    @cached_property
    def sites(self) -> list[Site]:
        if not self.jagged:
            return []
        out: list[Site] = []
        skip: list[Node] = []  # measured: a package never runs `torch._assert_async`, nor what only feeds it
        for n in walk(self.target.body):
            if skip and any(a.start_byte <= n.start_byte < a.end_byte for a in skip):
                continue
            if n.type == "call" and _assert_async(n):
                skip.append(n)
                continue
            if n.type == "subscript":
                out += self._subscript_site(n)
            elif n.type == "call":
                out += self._call_site(n)
        return out

    def _subscript_site(self, n: Node) -> list[Site]:
        value = n.child_by_field_name("value")
        subs = subscripts(n)
        taint = self.taint_of(value)
        if taint is not None and taint.maybe_empty:
            kind = op = None
            if len(subs) == 1 and int_value(subs[0]) == -1:
                kind, op = "last", "[-1]"
            elif len(subs) == 2 and subs[0].type == "ellipsis" and int_value(subs[1]) == -1:
                kind, op = "last", "[..., -1]"
            elif len(subs) == 1 and subs[0].type == "slice":
                start, stop, step = slice_parts(subs[0])
                if step is None and start is not None and stop is None and int_value(start) == -1:
                    kind, op = "tail", "[-1:]"
                elif step is None and start is None and stop is not None and int_value(stop) == -1:
                    kind, op = "head", "[:-1]"
            if kind is not None:
                return [Site(kind, n, value, taint.roots, tuple(sorted(taint.roots, key=self.order)), op)]
        # fancy indexing with indices computed from a jagged input
        if len(subs) == 1 and subs[0].type not in ("slice", "ellipsis") and int_value(subs[0]) is None:
            index = self.taint_of(subs[0])
            if index is not None:
                needs = self._bounded_by(value)
                if needs:
                    return [Site("index", n, value, index.roots, needs, "indexing", subs[0])]
        return []

    def _call_site(self, n: Node) -> list[Site]:
        func = n.child_by_field_name("function")
        pos, kw, _ = call_args(n)
        if func.type != "attribute":
            return []
        obj = func.child_by_field_name("object")
        meth = text(func.child_by_field_name("attribute"))
        qual = self.ctx.names.resolve(func)
        is_torch_fn = qual is not None and qual.startswith("torch.") and qual.count(".") == 1
        if meth in _REDUCTIONS:
            # only the whole-tensor reduction (measured); torch.max(a, b) is elementwise
            if is_torch_fn:
                tensor = pos[0] if len(pos) == 1 and not kw else None
            else:
                tensor = obj if not pos and not kw else None
            if tensor is None:
                return []
            taint = self.taint_of(tensor)
            if taint is not None and taint.maybe_empty:
                return [Site("reduce", n, tensor, taint.roots, tuple(sorted(taint.roots, key=self.order)), f".{meth}()")]
            return []
        if meth in INDEX_OPS:
            m_at, f_at = INDEX_OPS[meth]
            if is_torch_fn:
                if f_at is None or len(pos) < 1:
                    return []
                tensor = pos[0]
                index = pos[f_at] if len(pos) > f_at else kw.get("index")
            else:
                if self.ctx.names.resolve(obj) is not None:
                    return []  # some module's function, not a tensor method
                tensor = obj
                index = pos[m_at] if len(pos) > m_at else kw.get("index")
            if index is None:
                return []
            taint = self.taint_of(index)
            if taint is None:
                return []
            needs = self._bounded_by(tensor)
            if needs:
                return [Site("index", n, tensor, taint.roots, needs, meth, index)]
        return []

    def _bounded_by(self, tensor: Node) -> tuple[str, ...]:
        """The parameter whose emptiness empties the indexed tensor: itself when it is one,
        else the first non-jagged parameter it is built from. Nothing for module weights."""
        tensor = unparen(tensor)
        if tensor.type == "identifier" and text(tensor) in self.params:
            return (text(tensor),)
        roots = self.param_roots(tensor)
        plain = [r for r in roots if r not in self.jagged]
        if plain:
            return (plain[0],)
        return tuple(roots[:1])

    # -- guards ---------------------------------------------------------------------------------
    def covered(self, site: Site, facts: list[Tested], args: dict[str, str] | None = None) -> bool:
        """Do the checks in `facts` rule out the empty input that breaks `site`? `args` maps
        parameters to the expressions a caller passes (call-site guards)."""
        sizes, sums = set(), set()
        for f in facts:
            for p in self._params_of(f.text, args):
                (sizes if f.kind == "size" else sums).add(p)
        if any(p in sizes for p in site.needs):
            return True
        return site.kind == "index" and any(r in sums for r in site.roots)

    def _params_of(self, expr: str, args: dict[str, str | None] | None) -> list[str]:
        if args is not None:
            return [p for p, a in args.items() if a is not None and a == expr]
        if expr in self.params:
            return [expr]
        t = self.taint.get(expr)
        if t is not None and t.like is not None:
            return [t.like]
        return []

    @property
    def block_memo(self) -> dict:
        return _shared(self.ctx).setdefault("blocks", {})

    def guarded_here(self, site: Site) -> bool:
        return self.covered(site, known_nonempty(site.node, self.target.func, self.block_memo))


def _nonempty_constant(node: Node) -> bool:
    """`x.new_zeros(1)`, `torch.zeros(1)`, `torch.tensor([0])`: a tensor with at least one element."""
    node = unparen(node)
    if node.type != "call":
        return False
    func = node.child_by_field_name("function")
    parts = dotted_parts(func)
    if not parts or parts[-1] not in _NONEMPTY_MAKERS:
        return False
    pos, kw, _ = call_args(node)
    first = pos[0] if pos else kw.get("size") or kw.get("data")
    if first is None:
        return False
    first = unparen(first)
    if int_value(first) is not None:
        return int_value(first) >= 1 and all(int_value(p) is None or int_value(p) >= 1 for p in pos)
    if first.type in ("list", "tuple"):
        elems = first.named_children
        if parts[-1] in ("tensor", "new_tensor"):
            return bool(elems)
        return bool(elems) and all(int_value(e) is not None and int_value(e) >= 1 for e in elems)
    return False


def _assert_async(call: Node) -> bool:
    parts = dotted_parts(call.child_by_field_name("function"))
    return bool(parts) and parts[-1] == "_assert_async"


def guard_statements(target: Target) -> Iterator[tuple[Node, Node, str]]:
    """Empty-input guards in a function: (flagged node, statement, form) where form is
    `if`, `check` (torch._check) or `cond` (torch.cond)."""
    for n in walk(target.body):
        if n.type in ("if_statement", "elif_clause"):
            cond = n.child_by_field_name("condition")
            if cond is not None and empty_tests(cond):
                yield cond, n, "if"
        elif n.type == "conditional_expression":
            named = n.named_children
            if len(named) == 3 and empty_tests(named[1]):
                yield named[1], n, "if"
        elif n.type == "assert_statement" and n.named_child_count and empty_tests(n.named_children[0]):
            yield n.named_children[0], n, "assert"
        elif n.type == "call":
            cond = is_check_call(n)
            if cond is not None and empty_tests(cond):
                yield n, statement_of(n), "check"
                continue
            func = n.child_by_field_name("function")
            parts = dotted_parts(func) if func is not None else None
            if parts and parts[-1] == "cond" and parts[0] == "torch":
                pos, kw, _ = call_args(n)
                pred = pos[0] if pos else kw.get("pred")
                if pred is not None and empty_tests(pred):
                    yield pred, statement_of(n), "cond"
