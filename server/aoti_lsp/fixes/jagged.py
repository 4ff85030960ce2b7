"""Quick fixes for empty jagged inputs (AOTI201, AOTI202).

1. An early return when the input is empty, placed where it works: around the calls of the
   loaded package for an exported model (inside the exported forward torch.export drops it);
   at the top of the function where no export is visible (display-only).
2. Empty-safe rewrites: `cumsum(l, 0)[-1]` -> `l.sum(0)`; `offsets[-1]` -> the last element of
   the offsets with a leading zero. Unsafe in a package's forward (the artifact graph says
   so), display-only elsewhere.
3. AOTI202: move a guard out of an exported forward to the callers of the package.

The value returned on empty input is inferred from the function's return expression (a
small shape evaluator over tree-sitter nodes: parameters, `index_select`, `sum(0)`,
`nn.Linear`, arithmetic...), output by output; where one cannot be inferred there is no
early return (a guess would have the wrong rank or arity).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aoti_lsp.analysis.findings import Applicability, Edit, Fix
from aoti_lsp.analysis.jagged import (
    CallSite,
    Flow,
    Model,
    Site,
    Target,
    _scope_node,
    call_args,
    free_identifiers,
    int_value,
    known_nonempty,
    plain_expression,
    subscripts,
    text,
    unparen,
)
from aoti_lsp.analysis.names import IMPORT, dotted_parts
from aoti_lsp.analysis.source import parser
from aoti_lsp.analysis.treesitter import Node


class CannotFix(Exception):
    """Why a fix is not offered (kept out of the message when another fix exists)."""


# -- snippets ----------------------------------------------------------------------------------
def snippet_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")


@dataclass
class Code:
    """Text for an edit, as plain code or as a snippet with ${1:...} placeholders."""

    parts: list[tuple[str, bool]] = field(default_factory=list)  # (text, is placeholder)

    @classmethod
    def of(cls, s: str, placeholder: bool = False) -> Code:
        return cls([(s, placeholder)])

    def __add__(self, other: Code | str) -> Code:
        other = Code.of(other) if isinstance(other, str) else other
        return Code(self.parts + other.parts)

    def __radd__(self, other: str) -> Code:
        return Code.of(other) + self

    @property
    def snippet(self) -> bool:
        return any(p for _, p in self.parts)

    def render(self, snippet: bool, first: int = 1) -> str:
        """Plain text, or snippet text with placeholders numbered from `first`."""
        if not snippet:
            return "".join(t for t, _ in self.parts)
        out, n = [], first
        for t, p in self.parts:
            if p:
                out.append(f"${{{n}:{snippet_escape(t)}}}")
                n += 1
            else:
                out.append(snippet_escape(t))
        return "".join(out)

    @property
    def placeholders(self) -> int:
        return sum(1 for _, p in self.parts if p)

    def map(self, fn) -> Code:
        """Each part through `fn(text) -> str | None`; a part it cannot map becomes a placeholder
        (without `self`: where the code goes, no `self` is in scope)."""
        out = []
        for t, p in self.parts:
            new = fn(t)
            out.append((without_self(t), True) if new is None else (new, p))
        return Code(out)


def without_self(code: str) -> str:
    """`self.proj.out_features` -> `proj_out_features`, `self.emb.weight.new_zeros(` ->
    `emb_weight.new_zeros(`: a placeholder's default names what to supply, never a `self`
    that does not exist at the call site."""

    def name(m: re.Match) -> str:
        parts = m.group(1)[1:].split(".")
        called = code[m.end():m.end() + 1] == "(" and len(parts) > 1
        return "_".join(parts[:-1]) + "." + parts[-1] if called else "_".join(parts)

    return re.sub(r"\bself((?:\.[A-Za-z_]\w*)+)", name, code)


def build_fix(title: str, pieces: list[tuple[int, int, Code]], applicability: Applicability) -> Fix:
    snippet = any(c.snippet for _, _, c in pieces)
    edits, n = [], 1
    for s, e, c in sorted(pieces, key=lambda p: (p[0], p[1])):
        edits.append(Edit(s, e, c.render(snippet, n)))
        n += c.placeholders
    return Fix(title, tuple(edits), applicability, snippet=snippet)


# -- shapes ------------------------------------------------------------------------------------
# A dim is ("d", expression) or ("r", tensor, start, stop): the splat `*tensor.shape[start:stop]`.
@dataclass
class Shape:
    dims: list[tuple]
    like: str | None  # a tensor whose dtype/device the result has (`x.new_zeros`)
    dtype: str | None = None


_SAME_SHAPE = {
    "float", "double", "half", "bfloat16", "long", "int", "bool", "to", "contiguous", "clone", "detach",
    "clamp", "clamp_min", "clamp_max", "clip", "abs", "neg", "relu", "sigmoid", "tanh", "exp", "log", "sqrt",
    "cumsum", "cumprod", "masked_fill", "type_as", "softmax", "log_softmax", "nan_to_num", "cpu", "cuda",
    "index_copy", "index_copy_", "index_add", "index_add_", "index_fill", "index_fill_", "scatter", "scatter_",
    "scatter_add", "scatter_add_", "index_put", "index_put_", "add", "sub", "mul", "div",
}
_DTYPES = {"float": "torch.float32", "double": "torch.float64", "half": "torch.float16", "bfloat16": "torch.bfloat16",
           "long": "torch.int64", "int": "torch.int32", "bool": "torch.bool"}
_SUMS = {"sum", "mean", "amax", "amin", "prod", "logsumexp", "nansum"}
_SHAPE_LAYERS = {"ReLU", "GELU", "SiLU", "Dropout", "LayerNorm", "Identity", "Sigmoid", "Tanh", "Softmax", "BatchNorm1d"}


def _drop_first(dims: list[tuple]) -> list[tuple] | None:
    if not dims:
        return None
    head = dims[0]
    if head[0] == "d":
        return dims[1:]
    return [("r", head[1], head[2] + 1, head[3]), *dims[1:]]


def _drop_last(dims: list[tuple]) -> list[tuple] | None:
    if not dims:
        return None
    tail = dims[-1]
    if tail[0] == "d":
        return dims[:-1]
    stop = -1 if tail[3] is None else tail[3] - 1
    return [*dims[:-1], ("r", tail[1], tail[2], stop)]


class Shapes:
    """Symbolic shapes of the expressions of one function (None: unknown)."""

    def __init__(self, ctx, flow: Flow, target: Target):
        self.ctx, self.flow, self.target = ctx, flow, target
        self.attrs = init_attributes(target.cls) if target.cls is not None else {}

    def of(self, node: Node | None, depth: int = 0) -> Shape | None:
        node = unparen(node) if node is not None else None
        if node is None or depth > 20:
            return None
        t = node.type
        flow = self.flow
        if t == "identifier":
            name = text(node)
            if name in flow.jagged and name not in flow.values:  # lengths / offsets: 1-D
                return Shape([("d", f"{name}.shape[0]")], name)
            if name in flow.params:
                return Shape([("r", name, 0, None)], name)
            values = flow.assigns.get(name, [])
            if len(values) == 1 and values[0].type != "augmented_assignment":
                return self.of(values[0], depth + 1)
            return None
        if t == "binary_operator":
            op = node.child_by_field_name("operator")
            if op is None or op.type not in ("+", "-", "*", "/", "//", "%", "**"):
                return None
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if _number(left):
                return self.of(right, depth + 1)
            if _number(right):
                return self.of(left, depth + 1)
            a, b = self.of(left, depth + 1), self.of(right, depth + 1)
            if a is None or b is None:
                return None
            # broadcasting, where one shape is the trailing part of the other
            if len(b.dims) <= len(a.dims) and a.dims[len(a.dims) - len(b.dims):] == b.dims:
                return a
            if len(a.dims) < len(b.dims) and b.dims[len(b.dims) - len(a.dims):] == a.dims:
                return b
            return None
        if t == "unary_operator":
            return self.of(node.named_children[-1], depth + 1)
        if t == "subscript":
            value = self.of(node.child_by_field_name("value"), depth + 1)
            subs = subscripts(node)
            if value is None or len(subs) != 1:
                return None
            if int_value(subs[0]) is not None:
                rest = _drop_first(value.dims)
                return Shape(rest, value.like, value.dtype) if rest is not None else None
            if subs[0].type == "slice":
                return _sliced(value, subs[0])
            if subs[0].type == "ellipsis":
                return None
            index = self.of(subs[0], depth + 1)
            rest = _drop_first(value.dims)
            if index is None or rest is None or index.dtype == "torch.bool":
                return None
            return Shape([*index.dims, *rest], value.like, value.dtype)
        if t == "call":
            return self._call(node, depth)
        return None

    def _call(self, node: Node, depth: int) -> Shape | None:
        func = node.child_by_field_name("function")
        pos, kw, splat = call_args(node)
        if splat:
            return None
        qual = self.ctx.names.resolve(func) if func.type in ("identifier", "attribute") else None
        if qual is not None and qual.startswith("torch.") and qual.count(".") == 1:
            name = qual.split(".")[1]
            if name in ("zeros", "ones", "empty"):
                sizes = pos
                if len(pos) == 1 and unparen(pos[0]).type in ("tuple", "list"):
                    sizes = unparen(pos[0]).named_children
                if not sizes or any(unparen(d).type == "list_splat" for d in sizes):
                    return None
                dtype = text(kw["dtype"]) if "dtype" in kw else None
                return Shape([("d", text(d)) for d in sizes], None, dtype)
            if name == "segment_reduce":
                data = pos[0] if pos else kw.get("data")
                lengths = kw.get("lengths")
                d, l = self.of(data, depth + 1), self.of(lengths, depth + 1)
                rest = _drop_first(d.dims) if d is not None else None
                if rest is None or l is None or len(l.dims) != 1:
                    return None
                return Shape([*l.dims, *rest], d.like, d.dtype)
            if not pos:
                return None
            return self._method(pos[0], name, pos[1:], kw, depth)
        if func.type != "attribute":
            return None
        obj = func.child_by_field_name("object")
        meth = text(func.child_by_field_name("attribute"))
        if obj.type == "identifier" and text(obj) == "self":
            return self._layer(meth, pos, kw, depth)
        return self._method(obj, meth, pos, kw, depth)

    def _method(self, obj: Node, meth: str, pos: list[Node], kw: dict, depth: int) -> Shape | None:
        if meth in _SAME_SHAPE:
            base = self.of(obj, depth + 1)
            if base is None:
                return None
            return Shape(base.dims, base.like, _DTYPES.get(meth, base.dtype))
        if meth in ("max", "min") and not pos and not kw:
            base = self.of(obj, depth + 1)
            return Shape([], base.like, base.dtype) if base is not None else None
        if meth in _SUMS:
            base = self.of(obj, depth + 1)
            if "keepdim" in kw or "dtype" in kw:
                return None
            dim = pos[0] if pos else kw.get("dim")
            if dim is None:
                if base is None:  # a full reduction: only the dtype matters
                    roots = self.flow.param_roots(obj)
                    return Shape([], roots[0]) if roots else None
                return Shape([], base.like, base.dtype)
            if base is None:
                return None
            d = int_value(dim)
            dims = _drop_first(base.dims) if d == 0 else _drop_last(base.dims) if d == -1 else None
            return Shape(dims, base.like, base.dtype) if dims is not None else None
        if meth == "index_select" and len(pos) >= 2 and int_value(pos[0]) == 0:
            base, index = self.of(obj, depth + 1), self.of(pos[1], depth + 1)
            rest = _drop_first(base.dims) if base is not None else None
            if rest is None or index is None or len(index.dims) != 1 or index.dims[0][0] != "d":
                return None
            return Shape([index.dims[0], *rest], base.like, base.dtype)
        if meth == "unsqueeze" and len(pos) == 1:
            base, at = self.of(obj, depth + 1), int_value(pos[0])
            if base is None or at is None or not all(d[0] == "d" for d in base.dims) or not 0 <= at <= len(base.dims):
                return None
            return Shape([*base.dims[:at], ("d", "1"), *base.dims[at:]], base.like, base.dtype)
        if meth == "expand" and pos:
            base = self.of(obj, depth + 1)
            if base is None or len(pos) != len(base.dims) or not all(d[0] == "d" for d in base.dims):
                return None
            return Shape([d if int_value(p) == -1 else ("d", text(p)) for d, p in zip(base.dims, pos)], base.like, base.dtype)
        if meth == "gather" and len(pos) >= 2:
            base, index = self.of(obj, depth + 1), self.of(pos[1], depth + 1)
            if base is None or index is None:
                return None
            return Shape(index.dims, base.like, base.dtype)
        return None

    def _layer(self, attr: str, pos: list[Node], kw: dict, depth: int) -> Shape | None:
        value = self.attrs.get(attr)
        if value is None or unparen(value).type != "call" or not pos:
            return None
        ctor = unparen(value)
        parts = dotted_parts(ctor.child_by_field_name("function")) or []
        kind = parts[-1] if parts else ""
        x = self.of(pos[0], depth + 1)
        if x is None:
            return None
        if kind == "Linear":
            rest = _drop_last(x.dims)
            return Shape([*rest, ("d", f"self.{attr}.out_features")], x.like, x.dtype) if rest is not None else None
        if kind == "Embedding":
            return Shape([*x.dims, ("d", f"self.{attr}.embedding_dim")], f"self.{attr}.weight")
        if kind == "EmbeddingBag":
            offsets = pos[1] if len(pos) > 1 else kw.get("offsets")
            o = self.of(offsets, depth + 1) if offsets is not None else None
            if o is None or len(o.dims) != 1 or o.dims[0][0] != "d":
                return None
            _, ckw, _ = call_args(ctor)
            last = ckw.get("include_last_offset")
            if last is not None and text(last) != "False":
                return None
            return Shape([o.dims[0], ("d", f"self.{attr}.embedding_dim")], f"self.{attr}.weight")
        if kind in _SHAPE_LAYERS:
            return x
        return None


def _sliced(value: Shape, sl: Node) -> Shape | None:
    """`x[1:]` / `x[:-1]` (one element fewer, never below 0) and `x[:]` of a known first dim."""
    from aoti_lsp.analysis.jagged import slice_parts

    start, stop, step = slice_parts(sl)
    if step is not None or not value.dims or value.dims[0][0] != "d":
        return None
    first = value.dims[0][1]
    a = int_value(start) if start is not None else 0
    b = int_value(stop) if stop is not None else None
    if a is None or (stop is not None and b is None):
        return None
    if (a, b) == (0, None):
        return value
    if (a, b) in ((1, None), (0, -1)):
        return Shape([("d", f"max({first} - 1, 0)"), *value.dims[1:]], value.like, value.dtype)
    return None


def _number(node: Node) -> bool:
    node = unparen(node)
    return node is not None and (node.type in ("integer", "float") or int_value(node) is not None)


def init_attributes(cls: Node) -> dict[str, Node]:
    """`self.X = value` in `__init__`: X -> value (the last assignment wins)."""
    out: dict[str, Node] = {}
    body = cls.child_by_field_name("body")
    if body is None:
        return out
    for member in body.named_children:
        func = member.child_by_field_name("definition") if member.type == "decorated_definition" else member
        if func is None or func.type != "function_definition" or text(func.child_by_field_name("name")) != "__init__":
            continue
        stack = [func.child_by_field_name("body")]
        while stack:
            n = stack.pop()
            if n is None:
                continue
            if n.type == "assignment":
                left = n.child_by_field_name("left")
                if left is not None and left.type == "attribute" and text(left.child_by_field_name("object")) == "self":
                    out[text(left.child_by_field_name("attribute"))] = n.child_by_field_name("right")
            if n.type not in ("function_definition", "class_definition", "lambda"):
                stack.extend(n.children)
    return out


def render_zeros(shape: Shape, zero: set[str], device: str) -> str:
    """`like.new_zeros(...)` / `torch.zeros(..., device=...)`; dims in `zero` print as 0."""
    items = []
    for d in shape.dims:
        if d[0] == "d":
            items.append("0" if d[1] in zero else d[1])
        else:
            _, tensor, start, stop = d
            sl = "" if start == 0 and stop is None else f"[{start or ''}:{'' if stop is None else stop}]"
            items.append(f"*{tensor}.shape{sl}")
    if len(items) == 1 and items[0].startswith("*"):
        args = items[0][1:]
    elif any(i.startswith("*") for i in items):
        args = "(" + ", ".join(items) + ")"
    elif not items:
        args = "()"
    else:
        args = ", ".join(items)
    if shape.like is not None:
        extra = f", dtype={shape.dtype}" if shape.dtype else ""
        return f"{shape.like}.new_zeros({args}{extra})"
    extra = f", dtype={shape.dtype}" if shape.dtype else ""
    return f"torch.zeros({args}{extra}, device={device}.device)"


def final_return(target: Target) -> Node | None:
    body = target.body
    stmts = [s for s in body.named_children if s.type != "comment"]
    if stmts and stmts[-1].type == "return_statement":
        return stmts[-1]
    return None


def empty_value(ctx, flow: Flow, target: Target, guard: list[str]) -> Code:
    """What the function returns on empty input, as code over its parameters (and `self`):
    each output with the rank, dtype and device the return expression gives it. Where one
    output (or their count) cannot be inferred there is no early return to offer: a guessed
    `torch.zeros(0)` has the wrong rank or arity for most forwards (CannotFix)."""
    zero = {f"{guard[0]}.shape[0]"} if len(guard) == 1 and guard[0] in flow.jagged and guard[0] not in flow.values else set()
    device = flow.jagged[0] if flow.jagged else (flow.params[0] if flow.params else "self")
    shapes = Shapes(ctx, flow, target)
    ret = final_return(target)
    if ret is None or ret.named_child_count != 1:
        raise CannotFix("what the function returns is not known")
    expr = unparen(ret.named_children[0])
    items = [i for i in expr.named_children if i.type != "comment"] if expr.type in ("expression_list", "tuple") else [expr]
    if any(_arity(r) != (len(items) if expr.type in ("expression_list", "tuple") else None) for r in _returns(target)):
        raise CannotFix("its return statements differ in the number of outputs")

    def one(item: Node) -> Code:
        shape = shapes.of(item)
        rendered = render_zeros(shape, zero, device) if shape is not None else None
        if rendered is None or not _only_inputs_in(rendered, flow):
            raise CannotFix(f"the shape of `{text(item)}` on empty input is not known")
        return Code.of(rendered)

    if expr.type not in ("expression_list", "tuple"):
        return one(expr)
    code = Code.of("(")
    for i, item in enumerate(items):
        code = (code + ", " if i else code) + one(item)
    return code + ("," if len(items) == 1 else "") + ")"


def _returns(target: Target) -> list[Node]:
    from aoti_lsp.analysis.jagged import walk

    return [n for n in walk(target.body) if n.type == "return_statement"]


def _arity(ret: Node) -> int | None | str:
    """Outputs of a return statement: a count for a tuple, None for one value, "?" for none."""
    if ret.named_child_count != 1:
        return "?"
    expr = unparen(ret.named_children[0])
    if expr.type in ("expression_list", "tuple"):
        return len([i for i in expr.named_children if i.type != "comment"])
    return None


def _only_inputs_in(code: str, flow: Flow) -> bool:
    """The value can be computed before the function body runs: only inputs, `self`, torch."""
    tree = parser().parse(code.encode())
    return not tree.root_node.has_error and all(
        text(i) in flow.params or text(i) in ("self", "torch", "max")
        for i in free_identifiers(tree.root_node))


# -- substitution of parameters by call-site arguments --------------------------------------
def substitute(code: str, mapping: dict[str, str]) -> str | None:
    """`code` with identifiers replaced per `mapping`; None when it uses `self` unmapped."""
    if not any(c.isalpha() or c == "_" for c in code):
        return code  # punctuation between parts of a value
    tree = parser().parse(code.encode())
    if tree.root_node.has_error:
        return None
    data = code.encode()
    edits = []
    for ident in free_identifiers(tree.root_node):
        name = text(ident)
        if name in mapping:
            edits.append((ident.start_byte, ident.end_byte, mapping[name]))
        elif name == "self":
            return None
    for start, end, new in sorted(edits, reverse=True):
        data = data[:start] + new.encode() + data[end:]
    return data.decode()


def simple_arg(node: Node) -> bool:
    """Safe to evaluate twice (in the guard and in the call)."""
    return plain_expression(node)


def wrap(arg: str, node: Node) -> str:
    return arg if unparen(node).type in ("identifier", "attribute", "subscript", "call") else f"({arg})"


# -- layout ------------------------------------------------------------------------------------
def line_prefix(src, node: Node) -> str:
    start = src.lines.starts[src.lines.line_of(node.start_byte)]
    return src.data[start : node.start_byte].decode()


def indent_unit(src, func: Node) -> str:
    body = func.child_by_field_name("body")
    stmts = [s for s in body.named_children if s.type != "comment"] if body is not None else []
    if stmts and src.lines.line_of(stmts[0].start_byte) != src.lines.line_of(func.start_byte):
        inner, outer = line_prefix(src, stmts[0]), line_prefix(src, _def_start(func))
        if inner.startswith(outer) and inner[len(outer):].strip() == "" and inner[len(outer):]:
            return inner[len(outer):]
    return "    "


def _def_start(func: Node) -> Node:
    return func.parent if func.parent is not None and func.parent.type == "decorated_definition" else func


def alone_on_lines(src, stmt: Node) -> bool:
    prefix = line_prefix(src, stmt)
    if prefix.strip():
        return False
    line = src.lines.line_of(stmt.end_byte)
    end = src.lines.starts[line + 1] - 1 if line + 1 < src.lines.line_count else len(src.data)
    rest = src.data[stmt.end_byte : end].decode().strip()
    return rest == "" or rest.startswith("#")


# -- fix 1a: early return at the top of the function ----------------------------------------
def condition(params: list[str], args: dict[str, str] | None = None) -> str:
    names = [args[p] if args else p for p in params]
    return " or ".join(f"{n}.numel() == 0" for n in names)


def guard_top(ctx, flow: Flow, target: Target, params: list[str]) -> Fix:
    src = ctx.source
    body = target.body
    stmts = [s for s in body.named_children if s.type != "comment"]
    if not stmts or src.lines.line_of(stmts[0].start_byte) == src.lines.line_of(target.func.start_byte):
        raise CannotFix("the body is on the `def` line")
    anchor = stmts[0]
    if anchor.type == "expression_statement" and anchor.named_children and anchor.named_children[0].type == "string":
        if len(stmts) < 2:
            raise CannotFix("the function has only a docstring")
        anchor = stmts[1]
    if not alone_on_lines(src, anchor):
        raise CannotFix("the first statement shares its line")
    indent, unit = line_prefix(src, anchor), indent_unit(src, target.func)
    value = empty_value(ctx, flow, target, params)
    code = Code.of(f"if {condition(params)}:\n{indent}{unit}return ") + value + f"\n{indent}"
    who = " or ".join(f"`{p}`" for p in params)
    # display-only: no export of this forward is visible, but if one exists the check is dropped
    return build_fix(f"Return early when {who} is empty", [(anchor.start_byte, anchor.start_byte, code)], Applicability.DISPLAY)


# -- fix 1b: guard the calls of a loaded package ----------------------------------------------
def call_guard(ctx, site: CallSite, cond: str, value: Code, unit: str) -> tuple[int, int, Code]:
    """An if/else around `out = runner(...)`, an early return before `return runner(...)`,
    or a conditional expression where the call sits inside a larger expression."""
    src = ctx.source
    call = site.call
    parent = call.parent
    stmt, form = None, "expression"
    if parent is not None and parent.type == "assignment" and parent.child_by_field_name("right") == call \
            and parent.parent is not None and parent.parent.type == "expression_statement":
        stmt, form = parent.parent, "assign"
    elif parent is not None and parent.type == "return_statement":
        stmt, form = parent, "return"
    elif parent is not None and parent.type == "expression_statement":
        stmt, form = parent, "statement"
    if stmt is not None and (stmt.parent is None or stmt.parent.type not in ("block", "module")
                             or not alone_on_lines(src, stmt) or b"\n" in src.data[stmt.start_byte:stmt.end_byte]):
        form = "expression"
    if form == "assign":
        indent = line_prefix(src, stmt)
        target = text(parent.child_by_field_name("left"))
        code = (Code.of(f"if {cond}:\n{indent}{unit}{target} = ") + value
                + f"\n{indent}else:\n{indent}{unit}{src.node_text(stmt)}")
        return stmt.start_byte, stmt.end_byte, code
    if form == "return":
        indent = line_prefix(src, stmt)
        code = Code.of(f"if {cond}:\n{indent}{unit}return ") + value + f"\n{indent}"
        return stmt.start_byte, stmt.start_byte, code
    if form == "statement":
        indent = line_prefix(src, stmt)
        negated = " and ".join(c.replace(".numel() == 0", ".numel() > 0") for c in cond.split(" or "))
        return stmt.start_byte, stmt.end_byte, Code.of(f"if {negated}:\n{indent}{unit}{src.node_text(stmt)}")
    return call.start_byte, call.end_byte, Code.of("(") + value + f" if {cond} else {src.node_text(call)})"


def caller_args(site: CallSite) -> dict[str, str] | None:
    if not all(simple_arg(a) for a in site.args.values()):
        return None
    return {p: wrap(text(a), a) for p, a in site.args.items()}


def guard_callers(ctx, model: Model, flow: Flow, target: Target, params: list[str], calls: list[CallSite]) -> Fix:
    if not calls:
        raise CannotFix("no call of the loaded package in this file")
    value = empty_value(ctx, flow, target, params)
    unit = indent_unit(ctx.source, target.func)
    pieces = []
    for site in calls:
        args = caller_args(site)
        if args is None or any(p not in args for p in params):
            continue
        mapping = dict(args)
        var = model.model_variable(target, site.call)
        if var is not None:
            mapping["self"] = var
        cond = condition(params, args)
        code = value.map(lambda t, m=mapping: substitute(t, m))
        pieces.append(call_guard(ctx, site, cond, code, unit))
    if not pieces:
        raise CannotFix("the package is called with arguments that cannot be evaluated twice")
    who = " or ".join(f"`{p}`" for p in params)
    return build_fix(f"Check {who} for emptiness before calling the package", pieces, Applicability.SAFE)


# -- fix 2: empty-safe rewrites ------------------------------------------------------------------
def rewrite(ctx, flow: Flow, site: Site, certain: bool = True) -> Fix:
    """Unsafe where the site is certainly in a package's forward (`certain`), else display-only."""
    tier = Applicability.UNSAFE if certain else Applicability.DISPLAY
    if site.kind != "last" or site.op not in ("[-1]", "[..., -1]"):
        raise CannotFix("no empty-safe form known")
    src = ctx.source
    cum = _cumsum(ctx, flow, site)
    if cum is not None:
        lengths, dim, dtype, _inline = cum
        if (site.op == "[-1]") != (dim == 0):
            raise CannotFix("cumsum runs along another dim than the one indexed")
        new = f"{lengths}.sum({dim}{', dtype=' + dtype if dtype else ''})"
        return Fix(f"Use `{new}` (0 on empty input) instead of `{src.node_text(site.node)}`",
                   (Edit(site.node.start_byte, site.node.end_byte, new),), tier)
    tensor = unparen(site.tensor)
    if site.op != "[-1]" or not simple_arg(tensor):
        raise CannotFix("no empty-safe form known")
    names = ctx.names
    torch = names.lookup("torch", site.node.start_byte, names.scope_of(site.node))
    if torch is None or torch.kind != IMPORT or torch.target != "torch":
        raise CannotFix("`torch` is not imported")
    x = text(tensor)
    new = f"torch.cat([{x}.new_zeros(1), {x}])[-1]"
    return Fix(f"Prepend a zero to `{x}` so that `{x}[-1]` is 0 on empty input",
               (Edit(site.node.start_byte, site.node.end_byte, new),), tier)


def _cumsum(ctx, flow: Flow, site: Site) -> tuple[str, int, str | None, bool] | None:
    """(lengths text, dim, dtype text, inline) when the indexed tensor is `cumsum(lengths, dim)`."""
    node = unparen(site.tensor)
    inline = True
    if node.type == "identifier":
        names = ctx.names
        b = names.lookup(text(node), node.start_byte, names.scope_of(node))
        if b is None or b.value is None or len(flow.assigns.get(text(node), [])) != 1:
            return None
        node, inline = unparen(b.value), False
    if node.type != "call":
        return None
    func = node.child_by_field_name("function")
    pos, kw, splat = call_args(node)
    if splat or func.type != "attribute" or text(func.child_by_field_name("attribute")) != "cumsum":
        return None
    qual = ctx.names.resolve(func)
    if qual == "torch.cumsum":
        if not pos:
            return None
        lengths, rest = pos[0], pos[1:]
    elif qual is None:
        lengths, rest = func.child_by_field_name("object"), pos
    else:
        return None
    dim_node = rest[0] if rest else kw.get("dim")
    dim = int_value(dim_node) if dim_node is not None else None
    if dim not in (0, -1) or set(kw) - {"dim", "dtype"} or len(rest) > 1:
        return None
    dtype = text(kw["dtype"]) if "dtype" in kw else None
    if not inline:
        # the lengths must still be the same value where the last element is read
        if not simple_arg(lengths):
            return None
        names = ctx.names
        root = lengths
        while root.type in ("attribute", "subscript"):
            root = root.child_by_field_name("object") or root.child_by_field_name("value")
        if root.type != "identifier":
            return None
        at_def = names.lookup(text(root), node.start_byte, names.scope_of(node))
        at_use = names.lookup(text(root), site.node.start_byte, names.scope_of(site.node))
        if at_def is None or at_use is None or at_def.at != at_use.at:
            return None
        if text(root) in flow.assigns and text(root) not in flow.params:
            return None
    lt = text(lengths)
    if lengths.type not in ("identifier", "attribute", "subscript", "call", "parenthesized_expression"):
        lt = f"({lt})"
    return lt, dim, dtype, inline


# -- fix 3 (AOTI202): move a guard to the callers of the package --------------------------------
def move_guard(ctx, model: Model, flow: Flow, target: Target, stmt: Node, form: str) -> Fix:
    src = ctx.source
    if form == "if":
        if stmt.type != "if_statement" or stmt.child_by_field_name("alternative") is not None:
            raise CannotFix("the guard has other branches")
        body = [s for s in stmt.child_by_field_name("consequence").named_children if s.type != "comment"]
        if len(body) != 1 or body[0].type not in ("return_statement", "raise_statement"):
            raise CannotFix("the guard does more than return or raise")
        cond, action = stmt.child_by_field_name("condition"), body[0]
    elif form in ("check", "assert"):
        cond, action = stmt, None
    else:
        raise CannotFix("torch.cond cannot be moved automatically")
    if stmt.parent is None or stmt.parent != target.body or not alone_on_lines(src, stmt):
        raise CannotFix("the guard is not a statement of its own at the top level of forward")
    _only_inputs(ctx, flow, cond if action is None else stmt)
    calls = model.call_sites(target, all_calls=True)
    if not calls:
        raise CannotFix("no call of the loaded package in this file")
    unit = indent_unit(src, target.func)
    pieces: list[tuple[int, int, Code]] = []
    for site in calls:
        # all or nothing: moving the guard must leave no caller unprotected
        args = caller_args(site) if site.args is not None else None
        if args is None:
            raise CannotFix(f"the package is called with arguments that cannot be checked (line "
                            f"{src.lines.line_of(site.call.start_byte) + 1})")
        mapping = dict(args)
        var = model.model_variable(target, site.call)
        if var is not None:
            mapping["self"] = var
        if _already(flow, site, cond if action is not None else None, args):
            continue
        if form in ("check", "assert"):
            new = substitute(src.node_text(stmt), mapping)
            anchor = statement_of_call(site.call)
            if new is None or anchor is None:
                raise CannotFix("a call of the package sits inside an expression")
            pieces.append((anchor.start_byte, anchor.start_byte, Code.of(f"{new}\n{line_prefix(src, anchor)}")))
            continue
        cond_text = substitute(src.node_text(cond), mapping)
        if cond_text is None:
            raise CannotFix("the guard's condition uses `self`")
        if action.type == "raise_statement":
            new = substitute(src.node_text(action), mapping)
            anchor = statement_of_call(site.call)
            if new is None or anchor is None:
                raise CannotFix("a call of the package sits inside an expression, or the raise uses `self`")
            indent = line_prefix(src, anchor)
            pieces.append((anchor.start_byte, anchor.start_byte, Code.of(f"if {cond_text}:\n{indent}{unit}{new}\n{indent}")))
            continue
        value_node = action.named_children[0] if action.named_child_count else None
        value_text = src.node_text(value_node) if value_node is not None else "None"
        code = Code.of(value_text).map(lambda t, m=mapping: substitute(t, m))
        pieces.append(call_guard(ctx, site, cond_text, code, unit))
    pieces.append((*src.lines.whole_lines(stmt.start_byte, stmt.end_byte), Code.of("")))
    return build_fix("Move the guard to the callers of the package", pieces, Applicability.UNSAFE)


def statement_of_call(call: Node) -> Node | None:
    node = call
    while node.parent is not None and node.parent.type not in ("block", "module"):
        if node.parent.type in ("lambda", "conditional_expression", "boolean_operator", "list_comprehension",
                                "generator_expression", "set_comprehension", "dictionary_comprehension"):
            return None
        node = node.parent
    return node if node.type in ("expression_statement", "return_statement") else None


def _only_inputs(ctx, flow: Flow, node: Node) -> None:
    for ident in free_identifiers(node):
        name = text(ident)
        if name == "self" or name in flow.params:
            continue
        if name in flow.assigns:
            raise CannotFix(f"the guard uses `{name}`, computed inside forward")


def _already(flow: Flow, site: CallSite, cond: Node | None, args: dict[str, str]) -> bool:
    """The call already sits behind a check of the same inputs."""
    from aoti_lsp.analysis.jagged import empty_tests

    if cond is None:
        return False
    wanted = {(t.text, t.kind) for t in empty_tests(cond)}
    mapped = set()
    for t, kind in wanted:
        new = substitute(t, args)
        if new is None:
            return False
        mapped.add((new, kind))
    facts = {(f.text, f.kind) for f in known_nonempty(site.call, _scope_node(site.call))}
    return bool(mapped) and mapped <= facts
