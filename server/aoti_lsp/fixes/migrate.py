"""The faithful migration off `aot_compile` / `aot_load` (recipe: shared/aoti-facts.md).

libcst builds the new code, and only for the call or statement a fix touches; tree-sitter
byte ranges say where it goes. Every edit here changes what is on disk (.so -> .pt2), so
the fixes are UNSAFE in ruff's sense: quick fixes in the editor, `--unsafe-fixes` in the CLI.

Whether a fix can be built is decided without libcst: `compile_check`, `load_check` and
`import_check` read the same call with tree-sitter and raise the `CannotFix` (same message, same
order) that `compile_fix`, `load_fix` and `import_edits` would raise, so a check that reports
findings never imports libcst (the edits are built when someone needs them: findings.LazyFix).
Where libcst's parser might see the call otherwise than tree-sitter (text Python itself would
reject, a call split across lines before its parenthesis), they raise `Unsure`: the caller
then builds the fix at once, as libcst decides.
"""

from __future__ import annotations

from functools import lru_cache

from aoti_lsp.analysis.facts import REF, bind, static_export
from aoti_lsp.analysis.findings import Applicability, Edit, Fix
from aoti_lsp.analysis.names import DEF, IMPORT, LOCAL, dotted_parts, positional_names
from aoti_lsp.analysis.source import statement_of
from aoti_lsp.analysis.treesitter import Node
from aoti_lsp.fixes.mentions import mentioning

TYPE_CHECKING = False  # typing's, without importing typing (~2 ms); type checkers take it as True
if TYPE_CHECKING:
    import libcst as cst

EXPORT = "torch.export.export"
# calls that return an ExportedProgram: `X.module()` of one is compiled as `X`, never re-exported
PROGRAMS = {"torch.export.export", "torch.export.load", "torch.export.export_for_training", "torch._export.export",
            "torch.export._trace._export", "torch.export._trace._export_for_training"}
# calls whose value depends only on their arguments (and the cwd): a path built from them can move
PURE = {"os.path.join", "posixpath.join", "os.path.abspath", "os.path.realpath", "os.path.expanduser",
        "os.fspath", "os.getcwd", "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "str"}
# calls that change nothing a compile reads: a compile can move past them (package_reader)
INERT = PURE | {"tempfile.mkdtemp", "tempfile.gettempdir", "tempfile.TemporaryDirectory", "torch.no_grad",
                "contextlib.nullcontext", "os.makedirs"}  # and the builtin print
MODULE_OF_UNKNOWN = ("`{}` is the module of something this analysis cannot tell is an ExportedProgram: "
                     "re-exporting it would make every dynamic dim static; compile the ExportedProgram itself "
                     "(aoti_compile_and_package(ep))")
# the title note of a migration that re-exports a graph module of unknown origin (display-only)
GRAPH_MODULE_UNKNOWN = ("re-exports the graph module `{}` at its example's shapes: where it holds dynamic dims "
                        "(the .module() of a dynamic export, a symbolic make_fx trace), which the old call kept, "
                        "they become static; there, export the model with its dynamic_shapes instead")
EXTRAS = ("comment", "line_continuation")  # named nodes tree-sitter puts anywhere: not arguments
PACKAGE = "torch._inductor.aoti_compile_and_package"
LOAD = "torch._inductor.aoti_load_package"
OUTPUT_PATH = "aot_inductor.output_path"
PACKAGE_FLAG = "aot_inductor.package"
PACKAGE_AOTI = "torch._inductor.package.package_aoti"  # bundles the files the old call returned with the package flag
# expressions whose parts may not run: a statement inserted before them would run anyway
LAZY = {
    "lambda", "conditional_expression", "boolean_operator", "list_comprehension", "set_comprehension",
    "dictionary_comprehension", "generator_expression", "default_parameter", "typed_default_parameter",
    "decorator", "await",
}


@lru_cache(maxsize=None)
def _libcst():
    """libcst costs ~150 ms to import: only a file that gets a fix pays it."""
    import libcst

    return libcst


class CannotFix(Exception):
    """Why no automatic migration is offered; shown to the user in the finding's message."""


class Unsure(Exception):
    """The tree-sitter preflight cannot tell what libcst would make of this call: build it now."""


def _code(node: "cst.CSTNode") -> str:
    return _libcst().Module([]).code_for_node(node)


def _args(call_text: str, names: list[str]) -> tuple[cst.Call, dict[str, tuple[cst.Arg, bool]]]:
    """Binds a call's arguments to parameter names: name -> (arg, was positional)."""
    cst = _libcst()
    call = cst.parse_expression(call_text)
    assert isinstance(call, cst.Call)
    bound: dict[str, tuple[cst.Arg, bool]] = {}
    positional = 0
    for k, arg in enumerate(call.args):
        if k == 1 and arg.star == "*" and _program_inputs(_code(call.args[0].value), _code(arg.value)):
            bound[names[1]] = (arg, True)  # `*ep.example_inputs` beside `ep.module()`: the program's own inputs
            positional += 1
            continue
        if arg.star:
            raise CannotFix("it passes *args/**kwargs")
        if arg.keyword is None:
            if positional >= len(names):
                raise CannotFix("it passes more positional arguments than the API takes")
            bound[names[positional]] = (arg, True)
            positional += 1
        else:
            bound[arg.keyword.value] = (arg, False)
    return call, bound


def _splat_needs_program(bound: dict, program: Node | None) -> None:
    """`*X.example_inputs` is only read as the program's inputs where X is known to be one (the
    migration compiles X); otherwise it would be re-exported with the splat's pair as its args."""
    args = bound.get("args")
    if program is None and args is not None and args[0].type == "list_splat":
        raise CannotFix(f"it passes `{args[0].text.decode()[:40]}` of something this analysis cannot tell is an "
                        "ExportedProgram")


def _program_inputs(model: str, splat: str) -> bool:
    """`aot_compile(ep.module(), *ep.example_inputs)` (zhxchen17/torchnative): the splat is the
    example inputs of the program whose module is compiled, (args, kwargs) exactly as the old call
    binds them; the migration compiles that program, which holds them. Spelt with the same name."""
    model, splat = "".join(model.split()), "".join(splat.split())
    return splat.endswith(".example_inputs") and model == splat[: -len(".example_inputs")] + ".module()"


# the kinds of argument libcst binds: what `_args` makes of a call, read from tree-sitter
_SPLATS = ("list_splat", "dictionary_splat")


def _ts_args(call: Node, names: list[str]) -> dict[str, tuple[Node, bool]]:
    """`_args` on the tree-sitter call: name -> (value node, was positional), the same
    CannotFix in the same order; Unsure where libcst might not parse the call's text alone."""
    args = call.child_by_field_name("arguments")
    func = call.child_by_field_name("function")
    if call.has_error or args is None or func is None or args.type != "argument_list":
        raise Unsure("arguments tree-sitter does not read as an argument list")
    between = call.text[: args.start_byte - call.start_byte]  # the function and what follows it
    if any(c in between for c in (b"\n", b"\r", b"\\", b"#")):
        raise Unsure("the call is split before its argument list")
    tokens = [c.type if c.is_named else c.text for c in args.children if c.type not in EXTRAS]
    if tokens[:1] != [b"("] or tokens[-1:] != [b")"] or any(
            (t == b",") != (i % 2 == 1) for i, t in enumerate(tokens[1:-1])):
        raise Unsure("an argument list Python would not parse (`f(,)`)")  # tree-sitter takes it
    items = [a for a in args.named_children if a.type not in EXTRAS]
    keywords = stars = False
    for a in items:  # the order Python's (and libcst's) grammar takes
        if a.type == "keyword_argument":
            keywords = True
        elif a.type == "dictionary_splat":
            stars = True
        elif a.type == "list_splat":
            if stars:
                raise Unsure("*args after **kwargs")
        elif a.type in ("parenthesized_list_splat", "generator_expression", "ERROR") or keywords or stars:
            raise Unsure(f"a {a.type} argument where libcst may read the call otherwise")
    bound: dict[str, tuple[Node, bool]] = {}
    positional = 0
    for k, a in enumerate(items):
        if k == 1 and a.type == "list_splat" and items[0].type not in _SPLATS + ("keyword_argument",) \
                and a.named_children and _program_inputs(items[0].text.decode(), a.named_children[0].text.decode()):
            bound[names[1]] = (a, True)  # `*ep.example_inputs` beside `ep.module()`: the program's own inputs
            positional += 1
            continue
        if a.type in _SPLATS:
            raise CannotFix("it passes *args/**kwargs")
        if a.type != "keyword_argument":
            if positional >= len(names):
                raise CannotFix("it passes more positional arguments than the API takes")
            bound[names[positional]] = (a, True)
            positional += 1
        else:
            name, value = a.child_by_field_name("name"), a.child_by_field_name("value")
            if name is None or value is None:
                raise Unsure("a keyword argument without name or value")
            bound[name.text.decode()] = (value, False)
    return bound


def _bare(node: Node) -> Node:
    """The expression inside parentheses: libcst keeps `(x)` a Name (with its parentheses)."""
    while node.type == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            raise Unsure("parentheses around something other than one expression")
        node = inner[0]
    return node


def _ts_simple_string(node: Node) -> str | bytes | None:
    """What libcst's SimpleString.evaluated_value gives for a one-part, non-f string (None:
    libcst would not see a SimpleString there)."""
    if node.type != "string":
        return None
    start = node.child(0)
    prefix = start.text.decode().rstrip("'\"") if start is not None and start.type == "string_start" else ""
    if "f" in prefix.lower():
        return None  # a FormattedString
    if prefix.strip("rRuUbB"):
        raise Unsure(f"a string prefixed {prefix!r}")
    if "b" not in prefix.lower():
        from aoti_lsp.analysis.facts import _plain_body

        plain = _plain_body(node, start)  # "cpu": read off its text, without importing ast (~2 ms)
        if plain is not None:
            return plain
    from ast import literal_eval

    try:
        return literal_eval(node.text.decode())
    except Exception as exc:  # libcst's evaluated_value would raise it too: let it, as it does
        raise Unsure("a string literal_eval rejects") from exc


# the keywords torch 2.13's old compiles take besides what the migration carries over: ignored
# there (aoti-facts), so dropped
_DROPPED = {"torch._export.aot_compile": ("remove_runtime_assertions", "disable_constraint_solver", "same_signature"),
            "torch._inductor.aot_compile": ()}
_CARRIED = ("args", "kwargs", "dynamic_shapes", "options")


def keywords_check(bound: dict, qualname: str) -> None:
    """Raises CannotFix for a keyword the migration would drop although it says something: one torch
    2.13 does not take (a dropped `constraints=` made a dynamic dim static)."""
    for name, (_, positional) in bound.items():
        if positional or name in _CARRIED or name in ("f", "gm") or name in _DROPPED.get(qualname, ()):
            continue
        if name == "constraints":
            raise CannotFix("it passes `constraints=` (dynamic dims in an older torch's spelling: torch 2.13's "
                            "aot_compile rejects it with a TypeError): write them as dynamic_shapes= with "
                            "torch.export.Dim, then migrate")
        raise CannotFix(f"it passes `{name}=`, which {qualname} does not take (torch 2.13): the call fails as "
                        "it is; fix it first")


def compile_check(ctx, call: Node, qualname: str) -> None:
    """Raises what `compile_fix` would raise (CannotFix), without libcst."""
    _statement(call)
    first = "gm" if qualname == "torch._inductor.aot_compile" else "f"
    bound = _ts_args(call, [first, "args", "kwargs"])
    if first not in bound or "args" not in bound:
        raise CannotFix("the model or the example inputs are missing")
    keywords_check(bound, qualname)
    model_node, positional = bound[first]
    program = program_of(ctx, model_node)
    _splat_needs_program(bound, program)
    if program is not None:
        static_program_dims(ctx, call, program, bound.get("dynamic_shapes", (None,))[0])
    if program is None and bound_program(ctx, model_node) is None:
        if qualname == "torch._inductor.aot_compile":
            _graph_check(ctx, model_node)
        if positional and model_node.type == "identifier":
            b = ctx.names.lookup(model_node.text.decode(), model_node.start_byte, ctx.names.scope_of(model_node))
            if b is not None and b.kind == DEF:
                raise CannotFix("torch.export.export takes an nn.Module, not a plain function: wrap it in a Module first")
    options = bound.get("options")
    if options is not None:
        options_of(ctx, call, options[0])
    patched_package(ctx, call)


# torch._inductor.config.patch(...) as a `with` item or a decorator: inductor's options for what runs inside
CONFIG_PATCH = "torch._inductor.config.patch"


def patched_package(ctx, call: Node) -> None:
    """Raises CannotFix where `with config.patch({"aot_inductor.package": True}):` (or the same
    decorator on the function) holds the old call and its result is read: the old call returns
    the package's files there (a list), the new one the .pt2 it writes."""
    patch = _package_patch(ctx, call)
    reads = _result_reads(ctx, call)[0] if patch is not None else []
    if reads:
        raise CannotFix(f"`{_short(ctx, patch, 50)}` ({_where(ctx, patch)}) sets {PACKAGE_FLAG} around it: the old "
                        f"call returns the package's files (a list), read at {_where(ctx, reads[0])}, where "
                        "aoti_compile_and_package returns the one .pt2 it writes: rewrite that use by hand")


def _package_patch(ctx, call: Node) -> Node | None:
    """The `config.patch(...)` around `call` (a `with` item, a decorator of a function holding it)
    that sets aot_inductor.package to anything but False."""
    node = call.parent
    while node is not None and node.type != "module":
        items = _with_items(node) if node.type == "with_statement" else []
        if node.type == "decorated_definition":
            items = [d.named_children[0] for d in node.named_children if d.type == "decorator" and d.named_children]
        for item in items:
            item = _bare(item) if item is not None else None
            if item is not None and item.type == "call" and ctx.facts.qualname(item) == CONFIG_PATCH \
                    and _sets_package(item):
                return item
        node = node.parent
    return None


def _sets_package(patch: Node) -> bool:
    args = [a for a in patch.child_by_field_name("arguments").named_children if a.type != "comment"]
    if not args:
        return False
    first = _bare(args[0])
    if first.type == "dictionary":
        pair = next((p for p in first.named_children if p.type == "pair" and _key(p) == PACKAGE_FLAG), None)
        return pair is not None and _bare(pair.child_by_field_name("value")).type != "false"
    return first.type == "string" and _ts_simple_string(first) == PACKAGE_FLAG \
        and not (len(args) > 1 and _bare(args[1]).type == "false")


def load_check(ctx, call: Node, qualname: str) -> None:
    """Raises what `load_fix` would raise (CannotFix), without libcst."""
    bound = _ts_args(call, ["so_path", "device"])
    if "so_path" not in bound or "device" not in bound:
        raise CannotFix("the path or the device is missing")
    device_index(ctx, call, bound["device"][0])


def _arg(value: cst.BaseExpression, keyword: str | None = None) -> cst.Arg:
    cst = _libcst()
    if keyword is None:
        return cst.Arg(value=value)
    return cst.Arg(
        value=value, keyword=cst.Name(keyword),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def _call(func: str, args: list[cst.Arg], indent: str | None = None, notes: dict | None = None,
          opening: str | None = None) -> str:
    """One line, or one argument per line (at `indent` + 4) when the original call spanned lines.
    Written from the arguments' code (libcst's for a Call would parse `func` each time). `notes`:
    id(arg) -> (comment lines above it, its end-of-line comment), from the old call's argument
    it stands for (_comments): a comment the user wrote beside an argument moves with it.
    `opening`: the comment after the old call's `(` (`# type: ignore[...]`), kept on that line."""
    parts = [f"{a.keyword.value}={_code(a.value)}" if a.keyword else _code(a.value) for a in args]
    if indent is None:
        return f"{func}({', '.join(parts)})"
    out = []
    for a, p in zip(args, parts):
        above, after = (notes or {}).get(id(a), ((), None))
        out += [f"{indent}    {c}\n" for c in above]
        out.append(f"{indent}    {p},{'  ' + after if after else ''}\n")
    return f"{func}({'  ' + opening if opening else ''}\n" + "".join(out) + f"{indent})"


def _line_comment(ws) -> str | None:
    """The comment ending the line a piece of whitespace starts on (libcst keeps it there)."""
    if isinstance(ws, _libcst().ParenthesizedWhitespace) and ws.first_line.comment is not None:
        return ws.first_line.comment.value
    return None


def _opening(call: "cst.Call") -> str | None:
    """The comment at the end of the line a call's `(` ends."""
    return _line_comment(call.whitespace_before_args)


def _comments(call: "cst.Call") -> dict[int, tuple[list[str], str | None]]:
    """id(argument) -> (the comment lines above it, the comment at the end of its line) of a call
    written over several lines; the comments after the last argument go with it (the one after
    `(` is _opening's)."""
    cst = _libcst()

    def lines(ws) -> list[str]:
        return [e.comment.value for e in ws.empty_lines if e.comment] if isinstance(ws, cst.ParenthesizedWhitespace) else []

    first = _line_comment
    out: dict[int, tuple[list[str], str | None]] = {}
    args = list(call.args)
    for i, a in enumerate(args):
        before = call.whitespace_before_args if i == 0 else args[i - 1].comma.whitespace_after
        above = lines(before)
        after_ws = a.comma.whitespace_after if isinstance(a.comma, cst.Comma) else a.whitespace_after_arg
        after = first(after_ws)
        if i == len(args) - 1:  # comments between the last argument and `)`
            extra = lines(after_ws)
            after = "  ".join([c for c in (after, *extra) if c]) or None
        out[id(a)] = (above, after)
    return out


def _indent(src, node: Node, at: Node | None = None) -> str | None:
    """The indentation of `node`'s line (or of `at`'s, where the new call goes) when `node` spans
    lines, else None (stay on one line)."""
    if b"\n" not in src.data[node.start_byte : node.end_byte]:
        return None
    line = src.lines.line_bytes(src.lines.line_of((at or node).start_byte)).decode()
    return line[: len(line) - len(line.lstrip())]


def _so_to_pt2(node: "cst.BaseExpression") -> "cst.BaseExpression":
    """`"x.so"` -> `"x.pt2"` in string literals and f-string text of a path expression."""
    cst = _libcst()

    class SoToPt2(cst.CSTTransformer):
        def leave_SimpleString(self, original, updated):
            value = updated.evaluated_value
            if isinstance(value, str) and value.endswith(".so"):
                quote = updated.value[-3:] if updated.value.endswith(('"""', "'''")) else updated.value[-1]
                return updated.with_changes(value=updated.value[: -len(quote) - 3] + ".pt2" + quote)
            return updated

        def leave_FormattedStringText(self, original, updated):
            if updated.value.endswith(".so"):
                return updated.with_changes(value=updated.value[:-3] + ".pt2")
            return updated

    return node.visit(SoToPt2())


def _statement(call: Node) -> Node:
    node = call
    while node.parent is not None and node.parent.type not in ("block", "module"):
        if node.parent.type in LAZY:
            raise CannotFix("the call sits where it may not run (lambda, conditional, comprehension)")
        node = node.parent
    if node.type not in ("expression_statement", "return_statement"):
        raise CannotFix(f"the call is part of a {node.type.replace('_', ' ')}")
    return node


def _fresh_name(src, base: str) -> str:
    name, i = base, 1
    while next(src.word_occurrences(name), None) is not None:
        i += 1
        name = f"{base}{i}"
    return name


# -- compile ---------------------------------------------------------------------------------
def compile_fix(ctx, call: Node, qualname: str) -> Fix:
    """The compile call's own rewrite; the artifact's other places and the imports are the
    plan's (fixes/plan.py)."""
    cst = _libcst()
    src = ctx.source
    stmt = _statement(call)
    patched_package(ctx, call)
    first = "gm" if qualname == "torch._inductor.aot_compile" else "f"
    params = [first, "args", "kwargs"]
    parsed, bound = _args(src.node_text(call), params)
    if first not in bound or "args" not in bound:
        raise CannotFix("the model or the example inputs are missing")
    ts_bound = _ts_args(call, params)
    keywords_check(ts_bound, qualname)
    model_node = ts_bound[first][0]
    program = program_of(ctx, model_node)
    _splat_needs_program(ts_bound, program)
    hoisted: list[Edit] = []
    comments, notes = _comments(parsed), {}

    def said(new_arg, old_name: str):
        """`new_arg` carries the comments of the old call's argument `old_name`."""
        found = comments.get(id(bound[old_name][0])) if old_name in bound else None
        if found and (found[0] or found[1]):
            notes[id(new_arg)] = found
        return new_arg

    if program is None and (found := bound_program(ctx, model_node)) is not None:
        program, export_stmt = found
        if export_stmt is not None:  # `gm = export(...).module()`: the program named first
            name = _fresh_name(src, "ep")
            hoisted = _named_first(src, program, export_stmt, name)
            program = None
            ep_name = name
    if program is None and not hoisted and qualname == "torch._inductor.aot_compile":
        _graph_check(ctx, model_node)
    if program is None and not hoisted and model_node.type == "identifier" and ts_bound[first][1]:
        b = ctx.names.lookup(model_node.text.decode(), model_node.start_byte, ctx.names.scope_of(model_node))
        if b is not None and b.kind == DEF:
            raise CannotFix("torch.export.export takes an nn.Module, not a plain function: wrap it in a Module first")

    if program is not None:  # `ep.module()`: compile `ep` itself, keeping its dynamic dims
        static_program_dims(ctx, call, program, ts_bound.get("dynamic_shapes", (None,))[0])
        ep = src.node_text(program)
    elif hoisted:
        ep = ep_name
    else:
        ep = _fresh_name(src, "ep")
        export_args = [said(_arg(bound[first][0].value), first), said(_arg(bound["args"][0].value), "args")]
        if "kwargs" in bound:
            arg, positional = bound["kwargs"]
            export_args.append(said(_arg(arg.value, None if positional else "kwargs"), "kwargs"))
        if "dynamic_shapes" in bound:
            export_args.append(said(_arg(bound["dynamic_shapes"][0].value, "dynamic_shapes"), "dynamic_shapes"))
        export_args.append(_arg(cst.Name("True"), "strict"))

    package_args = [_arg(cst.parse_expression(ep) if program is not None else cst.Name(ep))]
    if program is not None or hoisted:  # the model's argument becomes the program's
        said(package_args[0], first)
    extra: list[Edit] = list(hoisted)
    absorbed = None
    options = bound.get("options")
    if options is not None and not (isinstance(options[0].value, cst.Name) and options[0].value.value == "None"):
        value = options[0].value
        if isinstance(value, cst.Dict):
            kept, out_path = [], None
            for el in value.elements:
                key = getattr(el, "key", None)
                key = key.evaluated_value if isinstance(key, cst.SimpleString) else None
                if key == OUTPUT_PATH:
                    out_path = el.value
                elif key != PACKAGE_FLAG:  # the new API sets it itself
                    kept.append(el.with_changes(comma=cst.MaybeSentinel.DEFAULT))
            if out_path is not None:
                package_args.append(said(_arg(_so_to_pt2(out_path), "package_path"), "options"))
            absorbed = package_reader(ctx, call) if out_path is None else None
            if absorbed is not None:  # `dst = package_aoti(path, files)`: the new call writes `path` itself
                package_args.append(_arg(cst.parse_expression(src.node_text(absorbed.dst)), "package_path"))
                if not absorbed.moves:
                    extra += _absorbed(src, stmt, absorbed.stmt, absorbed.hoist)
            if kept:  # the options' comments went with the output path, where it had one
                configs = _arg(value.with_changes(elements=kept), "inductor_configs")
                package_args.append(said(configs, "options") if out_path is None else configs)
        else:
            found = options_of(ctx, call, ts_bound["options"][0])
            if found.pair is not None:  # `opts = {"aot_inductor.output_path": p, ...}` read only here
                path = cst.parse_expression(src.node_text(found.pair.child_by_field_name("value")))
                package_args.append(said(_arg(_so_to_pt2(path), "package_path"), "options"))
                extra += found.edits(src)
                if found.rest:
                    package_args.append(_arg(value, "inductor_configs"))
            else:
                # copy: aoti_compile_and_package mutates the dict it is given
                package_args.append(said(_arg(cst.parse_expression(f"dict({_code(value)} or {{}})"), "inductor_configs"),
                                         "options"))

    edits: list[Edit] = list(extra)
    line_start = src.lines.starts[src.lines.line_of(stmt.start_byte)]
    prefix = src.data[line_start : stmt.start_byte]
    indent = _indent(src, call)
    if absorbed is not None and absorbed.moves:  # the export stays, the compile writes `path` where it is packaged
        if program is None and not hoisted:
            edits.append(Edit(stmt.start_byte, stmt.end_byte, f"{ep} = {_call(EXPORT, export_args, indent, notes)}"))
        else:
            edits.append(_drop_statement(src, stmt))
        packaged = absorbed.dst.parent.parent
        edits.append(Edit(packaged.start_byte, packaged.end_byte, _call(PACKAGE, package_args, _indent(src, call, packaged), notes,
                                                                         _opening(parsed))))
        return Fix(title="Migrate to torch.export.export + aoti_compile_and_package",
                   edits=tuple(sorted(edits, key=lambda e: (e.start, e.end))), applicability=Applicability.UNSAFE)
    if program is None and not hoisted:
        ep_stmt = f"{ep} = {_call(EXPORT, export_args, indent, notes)}"
        if prefix.strip():  # `a = 1; so = aot_compile(...)`: stay on the line
            edits.append(Edit(stmt.start_byte, stmt.start_byte, f"{ep_stmt}; "))
        else:
            edits.append(Edit(stmt.start_byte, stmt.start_byte, f"{ep_stmt}\n{prefix.decode()}"))
    edits.append(Edit(call.start_byte, call.end_byte, _call(PACKAGE, package_args, indent, notes, _opening(parsed))))
    edits += _unpacked_result(src, stmt, call, ep, prefix.decode())
    return Fix(
        title="Migrate to torch.export.export + aoti_compile_and_package",
        edits=tuple(sorted(edits, key=lambda e: (e.start, e.end))),
        applicability=Applicability.UNSAFE,
    )


def _absorbed(src, stmt: Node, reader: Node, hoist: list[Node]) -> list[Edit]:
    """The edits that make `files = aot_compile(...)` write what `dst = package_aoti(path, files)`
    wrote: the compile's name becomes `dst` (when the reader binds one), the reader's lines go, and
    the bindings `path` reads that came between move above the compile."""
    out = []
    assign = reader.named_children[0]
    if assign.type == "assignment":
        left = stmt.named_children[0].child_by_field_name("left")
        out.append(Edit(left.start_byte, left.end_byte, src.node_text(assign.child_by_field_name("left"))))
    moved = []
    for node in (*hoist, reader):
        start, end = _own_lines(src, node)  # package_reader asked: never None here
        if node is not reader:
            moved.append(src.data[start:end].decode("utf-8"))
        out.append(Edit(start, end, ""))
    if moved:  # above the compile's line (its `ep = export(...)` goes in at the statement itself)
        at = src.lines.starts[src.lines.line_of(stmt.start_byte)]
        out.append(Edit(at, at, "".join(moved)))
    return out


def _own_lines(src, node: Node) -> tuple[int, int] | None:
    """The whole lines of a statement that has them to itself (a comment after it goes with it);
    None where it shares one with other code."""
    start, end = src.lines.whole_lines(node.start_byte, node.end_byte)
    rest = src.data[node.end_byte:end].strip()
    if src.data[start:node.start_byte].strip() or (rest and not rest.startswith(b"#")):
        return None
    return start, end


def _unpacked_result(src, stmt: Node, call: Node, ep: str, prefix: str) -> list[Edit]:
    """`so, exported = aot_compile(...)`: torch 2.1's compile returned (path, ExportedProgram);
    aoti_compile_and_package returns the path alone, which would not unpack. The path goes to
    the first name, the program to the second (`exported = ep`; `_` is dropped)."""
    assign = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_child_count == 1 else None
    if assign is None or assign.type != "assignment" or assign.child_by_field_name("right") is None \
            or _bare(assign.child_by_field_name("right")).id != call.id:
        return []
    left = assign.child_by_field_name("left")
    targets = [c for c in left.named_children if c.type != "comment"] if left.type in ("pattern_list", "tuple_pattern") else []
    if len(targets) != 2 or any(t.type != "identifier" for t in targets):
        return []
    edits = [Edit(left.start_byte, left.end_byte, src.node_text(targets[0]))]
    if targets[1].text != b"_":
        after = "; " if prefix.strip() else f"\n{prefix}"  # `x = 1; so, exported = ...`: on its line
        edits.append(Edit(stmt.end_byte, stmt.end_byte, f"{after}{src.node_text(targets[1])} = {ep}"))
    return edits


def _annotated_program(ctx, node: Node) -> bool:
    """`def f(model: ExportedProgram, ...)`: `model` read in f's body, never rebound there, is a
    parameter annotated as an ExportedProgram (imported from torch.export; not Optional, not a
    string): its `.module()` was exported already, so the program itself is compiled."""
    node = _bare(node)
    if node.type != "identifier":
        return False
    name = node.text.decode()
    scope = ctx.names.scope_of(node)
    binding = ctx.names.lookup(name, node.start_byte, scope)
    if binding is None or binding.kind != LOCAL or binding.value is not None \
            or len(scope.bindings.get(name, ())) != 1 or scope.bindings[name][0] is not binding:
        return False
    inner = ctx.facts.annotation(binding)
    return inner is not None and ctx.names.resolve(inner) in PROGRAM_TYPES


def reexported_graph(ctx, call: Node, qualname: str) -> str | None:
    """The title note of `torch._inductor.aot_compile(gm, args)` where `gm` is traced to no
    ExportedProgram: the migration re-exports it, statically (measured: the old call kept the
    dynamic dims of a dynamic export's .module(); torch.export.export without dynamic_shapes
    does not), so the fix is the user's call: display-only. None where the program is known."""
    if qualname != "torch._inductor.aot_compile":
        return None
    try:
        model = _ts_args(call, ["gm", "args", "kwargs"]).get("gm")
        if model is None or program_of(ctx, model[0]) is not None or bound_program(ctx, model[0]) is not None:
            return None
        _graph_check(ctx, model[0])
        if graph_never_run(ctx, call, qualname) is not None:
            return None
    except (CannotFix, Unsure):  # the preflight (compile_check) says why there is no fix
        return None
    return GRAPH_MODULE_UNKNOWN.format(" ".join(ctx.source.node_text(model[0]).split())[:60])


def graph_never_run(ctx, call: Node, qualname: str) -> str | None:
    """The title note of `torch._inductor.aot_compile(gm, args)` in a branch no caller reaches
    (unreached_graph), once per call and analysis."""
    if qualname != "torch._inductor.aot_compile":
        return None
    memo = ctx.lookups.setdefault("never run", {}) if getattr(ctx, "lookups", None) is not None else {}
    if call.id not in memo:
        try:
            model = _ts_args(call, ["gm", "args", "kwargs"]).get("gm")
            memo[call.id] = unreached_graph(ctx, model[0]) if model is not None else None
        except (CannotFix, Unsure):
            memo[call.id] = None
    return memo[call.id]


def unreached_graph(ctx, model: Node) -> str | None:
    """The title note where the graph module `model` is compiled only in a branch no caller
    reaches: `model`, a parameter of a module-level function never rebound, is tested `if
    isinstance(model, ExportedProgram):` and this compile is in that test's `else`, and every
    caller passes an ExportedProgram (saifhaq/alma: its one caller passes what a helper
    annotated `-> ExportedProgram` returns). Its re-export then never runs, and compiling the
    program in the other branch keeps its dims: the migration is what its author would write.
    Callers are read in the function's file; the project's other files must not spell its name
    (a caller there could pass a graph module). None otherwise."""
    model = _bare(model)
    if model.type != "identifier":
        return None
    test = _else_of_program_test(ctx, model)
    func = ctx.names.module_function(model) if test is not None else None
    if func is None:
        return None
    name = model.text.decode()
    scope = ctx.names.scope_of(model)
    binding = ctx.names.lookup(name, model.start_byte, scope)
    params = func.child_by_field_name("parameters")
    if binding is None or binding.kind != LOCAL or binding.value is not None or len(scope.bindings.get(name, ())) != 1 \
            or not params.start_byte <= binding.at < params.end_byte:
        return None
    positional = positional_names(params)
    fname = func.child_by_field_name("name").text.decode()
    callers = ctx.facts.calls_named(fname)
    if not callers or len(ctx.facts.idents(fname)) != len(callers) + 1:
        return None  # not called, or its name is read otherwise too (passed on, stored)
    for caller in callers:
        arg = bind(caller, tuple(positional))[0].get(name)
        if arg is None or ctx.names.module_function(caller) is func \
                or not (_is_program(ctx, arg, caller.start_byte) or _returns_program(ctx, arg, caller.start_byte)):
            return None
    others = mentioning(ctx, fname)
    if others is None or len(others) > 1:
        return None  # another file may call it with a graph module (or what calls it cannot be told)
    where = ", ".join(f"line {ctx.source.lines.line_of(c.start_byte) + 1}" for c in callers[:3])
    return (f"the branch re-exporting `{name}` never runs: every caller of `{fname}` ({where}) passes an "
            "ExportedProgram, whose program is compiled")


def _else_of_program_test(ctx, node: Node) -> Node | None:
    """The `if isinstance(node, ExportedProgram):` test whose `else` holds `node` (the same
    binding the test reads), or None."""
    names, name = ctx.names, node.text.decode()
    here = names.lookup(name, node.start_byte, names.scope_of(node))
    up = node
    while up.parent is not None and up.type not in ("function_definition", "lambda", "class_definition"):
        clause = up.parent
        if up.type == "block" and clause.type == "else_clause" and clause.parent is not None \
                and clause.parent.type == "if_statement" and not clause.parent.children_by_field_name("alternative")[:-1]:
            branch = clause.parent  # `if ...: else:` (no elif: its test would narrow again)
            test = _bare(branch.child_by_field_name("condition"))
            if _isinstance_of_program(ctx, test, node) and names.lookup(name, test.start_byte, names.scope_of(test)) is here:
                return test
        up = clause
    return None


def _isinstance_of_program(ctx, test: Node, node: Node) -> bool:
    """`isinstance(<node's name>, ExportedProgram)`, the builtin."""
    names = ctx.names
    func = test.child_by_field_name("function") if test.type == "call" else None
    args = [a for a in test.child_by_field_name("arguments").named_children if a.type not in EXTRAS] \
        if func is not None else []
    return func is not None and func.type == "identifier" and func.text == b"isinstance" and len(args) == 2 \
        and names.lookup("isinstance", test.start_byte, names.scope_of(test)) is None \
        and args[0].type == "identifier" and args[0].text == node.text \
        and args[1].type in ("identifier", "attribute") and names.resolve(args[1]) in PROGRAM_TYPES


def _returns_program(ctx, node: Node, at: int) -> bool:
    """`node` holds what a function of another project module returns, whose `def` is annotated
    `-> ExportedProgram` (`model = get_exported_model(model, data)`, imported from it)."""
    value = ctx.facts.deref(node, at)
    func = value.child_by_field_name("function") if value is not None and value.type == "call" else None
    ref = ctx.facts.imported(func) if func is not None and func.type in ("identifier", "attribute") else None
    project = getattr(ctx, "project", None)
    if ref is None or project is None:
        return False
    folder, _, dotted = ref.strip(REF).partition("|")
    found = project.module_file(folder, dotted)
    other = project.context(found[0]) if found is not None else None
    bindings = other.names.module.bindings.get(found[1], []) if other is not None else []
    stmt = bindings[-1].stmt if len(bindings) == 1 and bindings[0].kind == DEF else None
    func_def = stmt.child_by_field_name("definition") if stmt is not None and stmt.type == "decorated_definition" else stmt
    returns = func_def.child_by_field_name("return_type") if func_def is not None else None
    inner = returns.named_children[0] if returns is not None and returns.named_child_count == 1 else None
    return inner is not None and inner.type in ("identifier", "attribute") and other.names.resolve(inner) in PROGRAM_TYPES


MAKE_FX = "torch.fx.experimental.proxy_tensor.make_fx"


def _graph_check(ctx, model: Node) -> None:
    """Raises where re-exporting the graph module `model` would surely lose what the old call
    kept: the module of an ExportedProgram this analysis cannot see, or a symbolic trace."""
    if _module_call(ctx, model):
        raise CannotFix(MODULE_OF_UNKNOWN.format(ctx.source.node_text(model)[:60]))
    if (trace := symbolic_trace(ctx, model)) is not None:
        raise CannotFix(f"`{ctx.source.node_text(model)[:40]}` is a graph module traced by make_fx(tracing_mode="
                        f"\"symbolic\") ({_where(ctx, trace)}): the old call kept its symbolic dims, which re-exporting "
                        "it would make static; export the model with dynamic_shapes and compile that program "
                        "(aoti_compile_and_package(ep))")


def symbolic_trace(ctx, model: Node) -> Node | None:
    """The `make_fx(..., tracing_mode="symbolic")` call whose trace `model` is (`make_fx(f,
    tracing_mode="symbolic")(x)`, or through names: `wrapped = make_fx(...)`, `gm = wrapped(x)`):
    its dims are symbolic, and the old call kept them. None otherwise."""
    try:
        node = _bare(model)
    except Unsure:
        return None
    for _ in range(2):  # the traced graph, then the function make_fx returned
        node = ctx.facts.deref(node, node.start_byte) or node
        if node.type != "call":
            return None
        node = node.child_by_field_name("function")
        node = ctx.facts.deref(node, node.start_byte) or node
        if node.type == "call" and ctx.facts.qualname(node) == MAKE_FX:
            mode = next((a.child_by_field_name("value") for a in node.child_by_field_name("arguments").named_children
                         if a.type == "keyword_argument" and a.child_by_field_name("name").text == b"tracing_mode"), None)
            return node if mode is not None and _ts_simple_string(mode) == "symbolic" else None
    return None


def _module_call(ctx, model: Node) -> bool:
    """`x.module()` (or a name bound to one): most likely an ExportedProgram's, whose program
    should be compiled, never its module re-exported (the migration offers that only for a graph
    module of unknown origin)."""
    try:
        model = _bare(model)
    except Unsure:
        return False
    model = ctx.facts.deref(model, model.start_byte) or model
    func = model.child_by_field_name("function") if model.type == "call" else None
    return func is not None and func.type == "attribute" and func.child_by_field_name("attribute").text == b"module"


def program_of(ctx, model: Node) -> Node | None:
    """`ep` of a model argument `ep.module()` where `ep` is an ExportedProgram (torch.export.export
    or load, or its run_decompositions()): the expression to compile instead of re-exporting."""
    model = _bare(model)
    func = model.child_by_field_name("function") if model.type == "call" else None
    args = model.child_by_field_name("arguments") if func is not None else None
    if func is None or func.type != "attribute" or func.child_by_field_name("attribute").text != b"module" \
            or args is None or args.named_child_count:
        return None
    obj = func.child_by_field_name("object")
    return obj if _is_program(ctx, obj, model.start_byte) else None


def bound_program(ctx, model: Node) -> tuple[Node, Node | None] | None:
    """A model argument that is a name holding `X.module()` (straight-line, one assignment):
    (`ep`, None) for `gm = ep.module()` where `ep` is the same binding at the compile (compile
    `ep`); (the export call, its statement) for `gm = torch.export.export(...).module()` (the
    program gets a name, `ep = torch.export.export(...)`, `gm = ep.module()`). None otherwise."""
    try:
        model = _bare(model)
    except Unsure:
        return None
    found = ctx.facts.binding_value(model, model.start_byte) if model.type == "identifier" else None
    value = found[0] if found is not None else None
    program = program_of(ctx, value) if value is not None else None
    if program is None:
        return None
    program = _bare(program)
    if program.type == "identifier":
        name = program.text.decode()
        here = ctx.names.lookup(name, model.start_byte, ctx.names.scope_of(model))
        there = ctx.names.lookup(name, program.start_byte, ctx.names.scope_of(program))
        if here is None or here is not there:
            return None
        changed = _module_changed(ctx, model, _bare(value))
        if changed is not None:
            stmt, how = changed
            what = "is changed" if how == "changes" else "has a part bound to a name, which may change it,"
            raise CannotFix(f"`{model.text.decode()}` {what} after `{name}.module()` made it: "
                            f"`{' '.join(ctx.source.node_text(stmt).split())[:60]}` ({_where(ctx, stmt)}); "
                            f"`{name}` does not hold a change of its module, so it cannot be compiled in the module's place")
        return program, None
    assign = _bare(value).parent
    stmt = assign.parent if assign is not None and assign.type == "assignment" else None
    if program.type == "call" and ctx.facts.qualname(program) in PROGRAMS and stmt is not None \
            and stmt.type == "expression_statement" and stmt.parent is not None and stmt.parent.type in ("block", "module") \
            and ctx.names.scope_of(stmt) is ctx.names.scope_of(model):
        return program, stmt
    return None


# what may be done with `gm = ep.module()` before it is compiled, `ep` compiled in its place:
# read it, print it, run it (anything else may change the module, not the program: a graph
# edited by hand, `gm.to("cuda")`, a function given it)
READS_ONLY = {"print", "len", "str", "repr", "type", "isinstance", "id", "hash"}
READ_THROUGH = READS_ONLY | {"list", "tuple", "iter", "next", "sorted", "reversed", "enumerate"}
READ_ATTRIBUTES = {b"print_readable", b"code", b"print_tabular"}


def _module_changed(ctx, model: Node, value: Node) -> tuple[Node, str] | None:
    """(the statement, how) of the first use of `gm` between `gm = ep.module()` (`value` the
    call) and the compile's `gm` (`model`) that may change the module: torch-xpu-ops edits
    `list(gm.graph.nodes)[3]` and compiles the edited module, and compiling `ep` would drop the
    edit. A use that changes it is named before one that binds a part of it to a name."""
    name = model.text.decode()
    bound = None
    for ident in ctx.facts.idents(name, value.end_byte, model.start_byte):
        parent = ident.parent
        if parent is not None and parent.type in ("keyword_argument", "attribute") \
                and parent.child_by_field_name("name" if parent.type == "keyword_argument" else "attribute") == ident:
            continue  # `f(gm=...)`, `x.gm`: not this name
        how = _use_of_module(ctx, ident)
        if how is None:
            continue
        stmt = statement_of(ident)
        if how == "changes":
            return stmt, how
        bound = bound or (stmt, how)
    return bound


def _use_of_module(ctx, ident: Node) -> str | None:
    """"changes" where the expression `ident` (the module) starts may change it (a method
    called on a part of it, an assignment into it, a call given it, a loop over it), "binds"
    where a part of it is bound to a name, None where it is only read or run."""
    node = ident
    while node.parent is not None:
        parent = node.parent
        t = parent.type
        if t == "parenthesized_expression" or (t == "attribute" and parent.child_by_field_name("object") == node) \
                or (t == "subscript" and parent.child_by_field_name("value") == node):
            node = parent
            continue
        if t == "call" and parent.child_by_field_name("function") == node:
            if node is ident or (node.type == "attribute" and node.child_by_field_name("attribute").text in READ_ATTRIBUTES):
                return None  # `gm(x)` runs it, `gm.print_readable()`: new values
            return "changes"  # `gm.graph.eliminate_dead_code()`
        if t == "argument_list":
            call = parent.parent
            func = call.child_by_field_name("function")
            builtin = func is not None and func.type == "identifier" and func.text.decode() in READ_THROUGH \
                and ctx.names.lookup(func.text.decode(), call.start_byte, ctx.names.scope_of(call)) is None
            if not builtin:
                return "changes"
            if func.text.decode() in READS_ONLY:
                return None  # `print(gm)`, `len(gm.graph.nodes)`
            node = call  # `list(gm.graph.nodes)`: its parts, still
            continue
        if t in ("assignment", "augmented_assignment"):
            return "binds" if parent.child_by_field_name("right") == node else "changes"
        if t in ("for_statement", "for_in_clause", "pattern_list", "tuple", "list", "as_pattern", "named_expression",
                 "keyword_argument", "pair", "delete_statement"):
            return "changes"
        return None
    return None


def _named_first(src, export: Node, stmt: Node, name: str) -> list[Edit]:
    """`gm = torch.export.export(...).module()` -> `ep = torch.export.export(...)` then
    `gm = ep.module()`, on the statement's own line (or before it, after a `;`)."""
    line_start = src.lines.starts[src.lines.line_of(stmt.start_byte)]
    prefix = src.data[line_start:stmt.start_byte].decode()
    named = f"{name} = {src.node_text(export)}"
    before = f"{named}; " if prefix.strip() else f"{named}\n{prefix}"
    return [Edit(stmt.start_byte, stmt.start_byte, before), Edit(export.start_byte, export.end_byte, name)]


# the annotations that say a parameter is an ExportedProgram (its callers' business to honour)
PROGRAM_TYPES = {"torch.export.ExportedProgram", "torch.export.exported_program.ExportedProgram"}


def static_program_dims(ctx, call: Node, program: Node, dims: Node | None) -> None:
    """Raises CannotFix where the old call re-exports `program.module()` with `dynamic_shapes`
    that `program`'s own export (seen in this file) does not give. Measured on torch 2.13: the old
    call raises `Constraints violated`; the package of the static program runs a batch of 7 as
    the example's 4, silently. Compiling `program` would pass for a fix and keep the dims static."""
    if dims is None or _bare(dims).type == "none":
        return
    made = _program_call(ctx, program, call.start_byte)
    if made is None or ctx.facts.qualname(made) == "torch.export.load":
        return  # loaded, or a parameter: its dims are its own
    if static_export(made):
        raise CannotFix(f"it re-exports `{ctx.source.node_text(program)[:40]}.module()` with dynamic_shapes that its "
                        f"export ({_where(ctx, made)}) does not give (torch 2.13 refuses that: `Constraints violated`), "
                        "and compiling the program would make those dims static: give them to that export, then the "
                        "migration compiles it")


def _is_program(ctx, node: Node, at: int) -> bool:
    return _annotated_program(ctx, node) or _narrowed_program(ctx, node) or _program_call(ctx, node, at) is not None


def _narrowed_program(ctx, node: Node) -> bool:
    """`if isinstance(model, ExportedProgram):` then `model` in that branch, the same binding the
    test read (saifhaq/alma compiles `model.module()` there): an ExportedProgram."""
    node = _bare(node)
    if node.type != "identifier":
        return False
    names, name = ctx.names, node.text.decode()
    here = names.lookup(name, node.start_byte, names.scope_of(node))
    up = node
    while up.parent is not None and up.type not in ("function_definition", "lambda", "class_definition"):
        branch = up.parent
        if up.type == "block" and branch.type in ("if_statement", "elif_clause") \
                and branch.child_by_field_name("consequence") == up:
            test = _bare(branch.child_by_field_name("condition"))
            if _isinstance_of_program(ctx, test, node) and names.lookup(name, test.start_byte, names.scope_of(test)) is here:
                return True
        up = branch
    return False


def _program_call(ctx, node: Node, at: int, depth: int = 0) -> Node | None:
    """The call that makes the ExportedProgram `node` holds (an export or a load), through
    `.run_decompositions()`; None where it is not one."""
    node = ctx.facts.deref(node, at)
    if node is None or node.type != "call" or depth > 8:
        return None
    if ctx.facts.qualname(node) in PROGRAMS:
        return node
    func = node.child_by_field_name("function")
    if func.type == "attribute" and func.child_by_field_name("attribute").text == b"run_decompositions":
        return _program_call(ctx, func.child_by_field_name("object"), node.start_byte, depth + 1)
    return None


class Options:
    """`options=opts` where `opts = {...}` is a dict literal bound once: read like a literal.
    `pair` is its output-path entry, which moves to `package_path=` (only when `opts` is read
    nowhere else); `rest` says whether other entries stay for `inductor_configs=`."""

    def __init__(self, literal: Node | None = None, stmt: Node | None = None, pair: Node | None = None,
                 written: bool = False):
        self.literal, self.stmt, self.pair = literal, stmt, pair
        # `written`: other keys are set on it later (`opts.update({...})`, `opts["k"] = v`): it stays
        self.rest = literal is not None and (written or any(c.type == "pair" and c is not pair
                                                            for c in literal.named_children))

    def edits(self, src) -> list[Edit]:
        """The dict without its output path entry (the statement gone when nothing else is left)."""
        if not self.rest:
            return [_drop_statement(src, self.stmt)]
        entries = [c for c in self.literal.named_children if c.type == "pair"]
        i = next(k for k, e in enumerate(entries) if e.id == self.pair.id)
        if i + 1 < len(entries):  # the entry, its comma and the space up to the next entry
            return [Edit(self.pair.start_byte, entries[i + 1].start_byte, "")]
        if i > 0:
            return [Edit(entries[i - 1].end_byte, self.pair.end_byte, "")]  # the comma before the last entry
        return [_drop_only_entry(src, self.pair)]  # `{}` is left: later statements set its other keys


def _key(pair: Node) -> str | None:
    key = pair.child_by_field_name("key")
    return _ts_simple_string(key) if key is not None and key.type == "string" else None


def options_of(ctx, call: Node, node: Node) -> Options:
    """What the old call's `options` argument is (raises CannotFix where it cannot be carried over)."""
    value = _bare(node)
    if value.type == "dictionary":
        flag = next((p for p in value.named_children if p.type == "pair" and _key(p) == PACKAGE_FLAG), None)
        read = _files_read(ctx, call) if flag is not None and _bare(flag.child_by_field_name("value")).type != "false" else None
        if read is not None:
            raise CannotFix(f"it sets {PACKAGE_FLAG}: the old call returns the package's files (a list), read by "
                            f"{read[0]}, where aoti_compile_and_package returns the one .pt2 it writes: {read[1]}")
        return Options()
    if value.type == "none":
        return Options()
    if value.type != "identifier":
        return Options()  # an expression: copied into inductor_configs as it is (dict(... or {}))
    name = value.text.decode()
    found = ctx.facts.binding_value(value, call.start_byte)
    literal = _bare(found[0]) if found is not None else None
    if literal is None or literal.type != "dictionary":
        if _binding_names_output_path(ctx, call, name):
            raise CannotFix(f"its options `{name}` set {OUTPUT_PATH} in a way this analysis cannot read "
                            f"(bound more than once or conditionally): pass the path as package_path=... (.pt2)")
        return Options()
    binding = found[1]
    pairs = [c for c in literal.named_children if c.type == "pair"]
    pair = next((p for p in pairs if _key(p) == OUTPUT_PATH), None)
    if any(_key(p) == PACKAGE_FLAG for p in pairs):
        raise CannotFix(f"its options `{name}` set {PACKAGE_FLAG} (the old call then returns a list of files)")
    if pair is None:
        return Options()
    if any(c.type not in ("pair", "comment") for c in literal.named_children) or any(_key(p) is None for p in pairs):
        raise CannotFix(f"its options `{name}` ({_where(ctx, literal)}) are not a plain dict of string keys")
    stmt = literal.parent
    while stmt is not None and stmt.type == "assignment":
        stmt = stmt.parent
    if stmt is None or stmt.type != "expression_statement" or stmt.parent is None \
            or stmt.parent.type not in ("block", "module"):
        raise CannotFix(f"its options `{name}` ({_where(ctx, literal)}) are bound where the migration cannot edit them")
    written = False
    for ident in ctx.facts.idents(name):
        if ident.id == value.id or stmt.start_byte <= ident.start_byte < stmt.end_byte or _not_a_read(ident):
            continue
        if ctx.names.lookup(name, ident.start_byte, ctx.names.scope_of(ident)) is not binding:
            continue
        keys = keys_written(ident)
        if keys is None:
            raise CannotFix(f"its options `{name}` set {OUTPUT_PATH} and are also read at {_where(ctx, ident)}: "
                            "the path cannot move to package_path= without changing that use")
        if OUTPUT_PATH in keys:
            raise CannotFix(f"its options `{name}` set {OUTPUT_PATH} again at {_where(ctx, ident)}: which path "
                            "the call writes depends on the run")
        if PACKAGE_FLAG in keys:
            raise CannotFix(f"its options `{name}` set {PACKAGE_FLAG} at {_where(ctx, ident)} (the old call then "
                            "returns a list of files)")
        written = True  # other inductor options: they stay in the dict, which goes to inductor_configs=
    path = pair.child_by_field_name("value")
    blocker = _unmovable(ctx, path, binding.at, call.start_byte)
    if blocker is not None:
        raise CannotFix(f"the output path in `{name}` ({_where(ctx, path)}) reads `{blocker}`, which may change "
                        "before the call: it cannot move to package_path= as it is")
    return Options(literal, stmt, pair, written)


def keys_written(ident: Node) -> list[str] | None:
    """The keys a statement of its own sets on the dict `ident` names, without reading it:
    `opts.update({"k": v})`, `opts.update(k=v)`, `opts["k"] = v` (the official AOTInductor
    tutorial adds `max_autotune` so on CUDA). None for any other use, or a key that is not a
    plain string: then the dict may be read (copied, passed on, its output path looked up)."""
    parent = ident.parent
    if parent is None:
        return None
    if parent.type == "attribute" and parent.child_by_field_name("object") == ident \
            and parent.child_by_field_name("attribute").text == b"update":
        call = parent.parent
        if call is None or call.type != "call" or call.child_by_field_name("function") != parent \
                or call.parent is None or call.parent.type != "expression_statement":
            return None
        keys = []
        for arg in call.child_by_field_name("arguments").named_children:
            if arg.type == "keyword_argument":
                keys.append(arg.child_by_field_name("name").text.decode())
            elif arg.type == "dictionary":
                for entry in arg.named_children:
                    if entry.type == "comment":
                        continue
                    key = _key(entry) if entry.type == "pair" else None
                    if not isinstance(key, str):
                        return None
                    keys.append(key)
            elif arg.type != "comment":
                return None  # `opts.update(other)`, `opts.update(**more)`: keys unknown
        return keys
    if parent.type == "subscript" and parent.child_by_field_name("value") == ident:
        assign = parent.parent
        if assign is None or assign.type not in ("assignment", "augmented_assignment") \
                or assign.child_by_field_name("left") != parent \
                or assign.parent is None or assign.parent.type != "expression_statement":
            return None
        subscript = parent.child_by_field_name("subscript")
        key = _ts_simple_string(subscript) if subscript is not None and subscript.type == "string" else None
        return [key] if isinstance(key, str) else None
    return None


def _drop_only_entry(src, pair: Node) -> Edit:
    """Delete a dict's only entry and its comma: its whole line when it has it to itself."""
    end = pair.end_byte
    after = pair.next_sibling
    if after is not None and after.type == ",":
        end = after.end_byte
    start, stop = src.lines.whole_lines(pair.start_byte, end)
    if src.data[start:pair.start_byte].strip() or src.data[end:stop].strip():
        return Edit(pair.start_byte, end, "")
    return Edit(start, stop, "")


def moved_span(ctx, call: Node, qualname: str) -> tuple[int, int] | None:
    """The output-path entry of an options variable that the compile's rewrite moves into the
    call (its `.so` text is renamed there, not where it stood)."""
    first = "gm" if qualname == "torch._inductor.aot_compile" else "f"
    try:
        options = _ts_args(call, [first, "args", "kwargs"]).get("options")
        pair = options_of(ctx, call, options[0]).pair if options is not None else None
    except (CannotFix, Unsure):
        return None
    return (pair.start_byte, pair.end_byte) if pair is not None else None


def _not_a_read(ident: Node) -> bool:
    """`options=` (a keyword's name) or `x.options` (an attribute's name): not the variable."""
    parent = ident.parent
    return parent is not None and ((parent.type == "keyword_argument" and parent.child_by_field_name("name") == ident)
                                   or (parent.type == "attribute" and parent.child_by_field_name("attribute") == ident))


def _unmovable(ctx, expr: Node, here: int, there: int) -> str | None:
    """The first part of `expr` whose value may differ between offsets `here` and `there` (a name
    bound otherwise, a call that is not a pure path function), or None."""
    names = ctx.names
    stack = [expr]
    while stack:
        node = stack.pop()
        if node.type == "call":
            if ctx.facts.qualname(node) not in PURE:
                return ctx.source.node_text(node)[:40]
            stack.extend(node.child_by_field_name("arguments").named_children)
            func = node.child_by_field_name("function")
            if func.type == "attribute":
                stack.append(func.child_by_field_name("object"))
            continue
        if node.type == "identifier":
            scope = names.scope_of(node)
            name = node.text.decode()
            if names.lookup(name, here, scope) is not names.lookup(name, there, scope):
                return name
            continue
        if node.type == "attribute":
            stack.append(node.child_by_field_name("object"))
            continue
        if node.type == "keyword_argument":
            stack.append(node.child_by_field_name("value"))
            continue
        stack.extend(node.named_children)
    return None


def _drop_statement(src, stmt: Node) -> Edit:
    """Delete a statement: its whole lines when it has them to itself, else `pass` in its place
    (also the only statement of a block)."""
    siblings = [c for c in stmt.parent.named_children if c.type != "comment"]
    if stmt.parent.type == "block" and len(siblings) == 1:
        return Edit(stmt.start_byte, stmt.end_byte, "pass")
    start, end = src.lines.whole_lines(stmt.start_byte, stmt.end_byte)
    if src.data[start : stmt.start_byte].strip() or src.data[stmt.end_byte : end].strip():
        return Edit(stmt.start_byte, stmt.end_byte, "pass")
    return Edit(start, end, "")


def _where(ctx, node: Node) -> str:
    import os

    return f"{os.path.basename(ctx.source.path)}:{ctx.source.lines.line_of(node.start_byte) + 1}"


def _files_read(ctx, call: Node) -> tuple[str, str] | None:
    """(where, what to do) of the read of an old compile's result with `aot_inductor.package` set
    (a list of files): `package_aoti(dst, files)`, a filter of its `.so`, a return. None: nothing
    reads it, or only a `package_aoti` the migration absorbs (package_reader)."""
    reads, by_name = _result_reads(ctx, call)
    if reads and not by_name:
        return f"`{_short(ctx, reads[0])}` ({_where(ctx, reads[0])})", "rewrite that use by hand"
    if not reads or package_reader(ctx, call) is not None:
        return None  # nothing reads it, or `package_aoti(dst, files)` alone, which the migration absorbs
    stmt = statement_of(reads[0])
    todo = "rewrite that use by hand"
    if len(reads) == 1 and reads[0].parent is not None and reads[0].parent.parent is not None \
            and ctx.facts.qualname(reads[0].parent.parent) == PACKAGE_AOTI:  # why it cannot be absorbed
        first = reads[0].parent.named_children[0]
        compiled = _statement(call)
        if stmt.parent.id == compiled.parent.id and _bound_between(ctx, first, call.end_byte, reads[0].start_byte):
            todo = f"its path `{_short(ctx, first, 30)}` is bound after the compile: bind it before, and the migration passes it as package_path="
        elif (joined := _joined(compiled, stmt)) is None:
            todo = ("it may not run once after the compile (a loop or a branch between): in the compile's block, or in "
                    "a `with` body after it, the migration passes its path as package_path=")
        elif (active := _active_between(ctx, joined)) is not None:
            todo = (f"`{_short(ctx, active, 40)}` ({_where(ctx, active)}) runs between the two and may change what the "
                    "compile reads: with plain bindings alone between, the migration compiles where package_aoti is")
    return f"`{_short(ctx, stmt)}` ({_where(ctx, reads[0])})", todo


def _result_reads(ctx, call: Node) -> tuple[list[Node], bool]:
    """(where `call`'s result is read, whether through the name it is bound to): the reads of
    that name; else the expression it stands in, or the target it is unpacked to; [] unread."""
    parent = call.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None or parent.type == "expression_statement":
        return [], False
    left = parent.child_by_field_name("left") if parent.type == "assignment" else None
    if left is None or left.type != "identifier":
        return [parent if left is None else left], False
    return _reads_of(ctx, call, left), True


def _reads_of(ctx, call: Node, left: Node) -> list[Node]:
    """The reads of the name `left` binds to `call`'s result (that binding, not another)."""
    name = left.text.decode()
    out = []
    for ident in ctx.facts.idents(name, call.end_byte):
        b = ctx.names.lookup(name, ident.start_byte, ctx.names.scope_of(ident))
        if b is not None and b.value is not None and b.value.start_byte == call.start_byte:
            out.append(ident)
    return out


class Reader:
    """`dst = package_aoti(path, files)` as the migration absorbs it (package_reader): that
    statement, `path` (the new call's package_path=), the statements between that move above the
    compile, and whether the compile moves down to the statement instead (its export stays)."""
    __slots__ = ("stmt", "dst", "hoist", "moves")

    def __init__(self, stmt: Node, dst: Node, hoist: list[Node], moves: bool):
        self.stmt, self.dst, self.hoist, self.moves = stmt, dst, hoist, moves


def package_reader(ctx, call: Node) -> Reader | None:
    """`dst = package_aoti(path, files)` (or the call alone) where `files = aot_compile(...,
    options={"aot_inductor.package": True})` is read there only, later: the migration passes
    `path` to aoti_compile_and_package as package_path= and drops that statement. In the same
    block, the compile stays where it is when `path` reads nothing bound in between but plain
    bindings that can move up (_hoistable). Otherwise the compile moves down to that statement
    (`with tempfile.TemporaryDirectory() as d:` binding `path`'s folder after it, as in
    ExecuTorch's tests) where it runs once whenever the compile ran (_joined) and reads
    nothing bound in between."""
    stmt = call.parent
    left = stmt.child_by_field_name("left") if stmt is not None and stmt.type == "assignment" else None
    if left is None or left.type != "identifier" or stmt.parent is None or stmt.parent.type != "expression_statement":
        return None
    reads = _reads_of(ctx, call, left)
    if len(reads) != 1:
        return None
    arg = reads[0]
    args = arg.parent
    reader = args.parent if args is not None and args.type == "argument_list" else None
    if reader is None or reader.type != "call" or ctx.facts.qualname(reader) != PACKAGE_AOTI:
        return None
    positional = [c for c in args.named_children if c.type != "keyword_argument" and c.type not in EXTRAS]
    if len(positional) != 2 or positional[1].id != arg.id:
        return None
    outer = reader.parent
    if outer is not None and outer.type == "assignment" and outer.child_by_field_name("right") == reader \
            and outer.child_by_field_name("left").type == "identifier":
        outer = outer.parent
    if outer is None or outer.type != "expression_statement" or outer.named_child_count != 1 \
            or _own_lines(ctx.source, outer) is None:
        return None
    dst = positional[0]
    if outer.parent is not None and outer.parent.id == stmt.parent.parent.id:
        if not _bound_between(ctx, dst, call.end_byte, reader.start_byte):
            if _unmovable(ctx, dst, call.end_byte, reader.start_byte) is None:
                return Reader(outer, dst, [], False)
        elif _own_lines(ctx.source, stmt.parent) is not None \
                and _unmovable(ctx, dst, reader.start_byte, reader.start_byte) is None \
                and (hoist := _hoistable(ctx, call, stmt.parent, outer)):  # (`a = 1; files = ...` shares its line)
            return Reader(outer, dst, hoist, False)
    joined = _joined(stmt.parent, outer)
    if joined is None or _own_lines(ctx.source, stmt.parent) is None or _active_between(ctx, joined) is not None:
        return None
    try:
        bound = _ts_args(call, ["f", "args", "kwargs"])
    except (CannotFix, Unsure):
        return None
    moved = [bound["options"][0]] if "options" in bound else []  # the export, which reads the rest, stays
    if "f" in bound and (program := program_of(ctx, bound["f"][0])) is not None:
        moved.append(program)  # `ep.module()`: the moved call compiles `ep`
    if any(_bound_between(ctx, n, call.end_byte, reader.start_byte)
           or _unmovable(ctx, n, call.end_byte, reader.start_byte) is not None for n in moved):
        return None
    return Reader(outer, dst, [], True)


def _with_chain(node: Node) -> list[Node]:
    """`node`, then each `with` statement whose body holds it, outwards."""
    out = [node]
    while node.parent is not None and node.parent.type == "block" and node.parent.parent is not None \
            and node.parent.parent.type == "with_statement":
        node = node.parent.parent
        out.append(node)
    return out


def _joined(first: Node, later: Node) -> tuple[list[Node], list[Node]] | None:
    """The with-chains of `first` and `later` cut where they meet in one block, `later`'s after
    `first`'s: then `later` runs exactly once after `first`, whenever `first` runs. None otherwise
    (a loop or a branch between them)."""
    a, b = _with_chain(first), _with_chain(later)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            if x.parent is not None and y.parent is not None and x.parent.id == y.parent.id:
                return (a[: i + 1], b[: j + 1]) if x.id != y.id and x.end_byte <= y.start_byte else None
    return None


def absorbed_reader(ctx, call: Node) -> Reader | None:
    """The `package_aoti` statement compile_fix absorbs into `call`'s rewrite: its options are a
    dict literal without an output path (compile_fix reads them with libcst, the same way)."""
    try:
        options = _ts_args(call, ["f", "args", "kwargs"]).get("options")
        value = _bare(options[0]) if options is not None else None
        if value is None or value.type != "dictionary" or any(
                p.type == "pair" and _ts_simple_string(p.child_by_field_name("key")) == OUTPUT_PATH
                for p in value.named_children):
            return None
    except (CannotFix, Unsure):
        return None
    return package_reader(ctx, call)


def _siblings(node: Node, forward: bool, stop: Node | None = None) -> list[Node]:
    """The statements after `node` in its block (before it, nearest first, where not `forward`), up to `stop`."""
    out = []
    sib = node.next_named_sibling if forward else node.prev_named_sibling
    while sib is not None and (stop is None or sib.id != stop.id):
        out.append(sib)
        sib = sib.next_named_sibling if forward else sib.prev_named_sibling
    return out


def _with_items(stmt: Node) -> list[Node]:
    """The context expressions of a `with` statement (`tempfile.TemporaryDirectory() as d`)."""
    return [item.child_by_field_name("value") for item in stmt.named_children[0].named_children if item.type == "with_item"]


def _active_between(ctx, joined: tuple[list[Node], list[Node]]) -> Node | None:
    """The first statement (or `with` item) that runs between the two ends of `joined` (_joined)
    and may change what a compile moved from one to the other reads (the model's weights through
    `model.load_state_dict(...)`, any call): None where all are plain bindings of literals and
    calls that change nothing (INERT) and `with` items such as `tempfile.TemporaryDirectory()`."""
    a, b = joined
    runs: list[Node] = []
    for node in a[:-1]:  # the rest of each block the compile sits in, then each `with`'s exit
        runs += _siblings(node, True)
    runs += _siblings(a[-1], True, b[-1])
    for outer, inner in zip(reversed(b), reversed(b[:-1])):  # each `with` entered, then its body up to the next
        runs += _with_items(outer) + _siblings(inner, False)
    runs += [item for w in a[1:] for item in _with_items(w)]
    for node in runs:
        if node.type in ("comment", "pass_statement"):
            continue
        if node.type == "as_pattern":  # `tempfile.TemporaryDirectory() as d`
            expr = node.named_children[0]
        elif not node.type.endswith("statement"):  # a `with` item
            expr = node
        else:  # a statement: `name = value` or a bare expression, nothing else
            expr = node.named_children[0] if node.type == "expression_statement" and node.named_child_count == 1 else None
            if expr is not None and expr.type == "assignment":
                expr = expr.child_by_field_name("right") if expr.child_by_field_name("left").type == "identifier" else None
        if expr is None or _active_call(ctx, expr) is not None:
            return node
    return None


def _builtin_print(ctx, call: Node) -> bool:
    func = call.child_by_field_name("function")
    return func.type == "identifier" and func.text == b"print" \
        and ctx.names.lookup("print", call.start_byte, ctx.names.scope_of(call)) is None


def _active_call(ctx, expr: Node) -> Node | None:
    """The first call in `expr` that may change state (not INERT)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if node.type == "call" and ctx.facts.qualname(node) not in INERT and not _builtin_print(ctx, node):
            return node
        if node.type in ("assignment", "augmented_assignment", "named_expression", "await", "yield"):
            return node
        stack.extend(node.named_children)
    return None


def _hoistable(ctx, call: Node, first: Node, last: Node) -> list[Node]:
    """The statements between the compile's statement `first` and `last`, where each is a plain
    `name = value` of literals, pure path functions and names bound before the compile, that the
    compile does not read: moved above the compile, they change nothing (`aoti_path = "x.pt2"`
    between the compile and package_aoti, as in ExecuTorch's test). [] where one is not."""
    out, moved = [], set()
    reads = {n.text for n in _names_read(call)}
    for node in _siblings(first, True, last):
        if node.type == "comment":
            continue
        assign = node.named_children[0] if node.type == "expression_statement" and node.named_child_count == 1 else None
        left = assign.child_by_field_name("left") if assign is not None and assign.type == "assignment" else None
        right = assign.child_by_field_name("right") if left is not None else None
        if right is None or left.type != "identifier" or left.text in reads or _own_lines(ctx.source, node) is None \
                or _unmovable(ctx, right, right.start_byte, right.start_byte) is not None \
                or _bound_between(ctx, right, first.start_byte, right.start_byte, frozenset(moved)):
            return []
        out.append(node)
        moved.add(left.text)
    return out


def _names_read(expr: Node) -> list[Node]:
    """The identifiers `expr` reads (`os.path`: only `os`; not keywords)."""
    out, stack = [], [expr]
    while stack:
        node = stack.pop()
        if node.type == "identifier":
            out.append(node)
        elif node.type == "attribute":
            stack.append(node.child_by_field_name("object"))
        elif node.type == "keyword_argument":
            stack.append(node.child_by_field_name("value"))
        else:
            stack.extend(node.named_children)
    return out


def _bound_between(ctx, expr: Node, here: int, there: int, moved: frozenset = frozenset()) -> bool:
    """A name `expr` reads is bound between `here` and `there` (in a function a local's binding
    is found from anywhere in it: `_unmovable` alone would move a read before its assignment);
    `moved`: names whose bindings there move along with `expr`."""
    for node in _names_read(expr):
        if node.text in moved:
            continue
        scope = ctx.names.scope_of(node)
        name = node.text.decode()
        while scope is not None and name not in scope.bindings:
            scope = scope.parent
        if scope is not None and scope.before(name, here)[1] != scope.before(name, there)[1]:
            return True
    return False


def _short(ctx, node: Node, limit: int = 60) -> str:
    text = " ".join(ctx.source.node_text(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _binding_names_output_path(ctx, call: Node, name: str) -> bool:
    b = ctx.names.lookup(name, call.start_byte, ctx.names.scope_of(call))
    return b is not None and b.value is not None and OUTPUT_PATH.encode() in b.value.text


# -- load ------------------------------------------------------------------------------------
OLD_LOAD_TYPES = ("cpu", "cuda", "xpu", "mps")  # the device types aot_load accepts
RUN_TIME = "run time"  # device_index: the device's index is read when the loader runs


def run_time_index(device: str) -> str:
    """`device_index=` of a device string known only at run time, as aot_load read it: "cuda:1"
    -> 1; "cuda" and "cpu" -> -1, the loader's default (the current device); None would raise
    (measured: `incompatible constructor arguments`)."""
    return f"-1 if torch.device({device}).index is None else torch.device({device}).index"


def run_time_device(ctx, call: Node) -> str | None:
    """The device text of an old loader whose index is read at run time (RUN_TIME), for the title."""
    try:
        device = _ts_args(call, ["so_path", "device"]).get("device")
        if device is not None and device_index(ctx, call, device[0]) == RUN_TIME:
            return ctx.source.node_text(_bare(device[0]))
    except (CannotFix, Unsure):
        pass
    return None


def _plain_read(node: Node) -> bool:
    """A name, an attribute or a subscript by a literal of one (`device`, `args.device`,
    `sys.argv[1]`): read twice, it gives the same value (the index expression reads it twice)."""
    while node.type in ("attribute", "subscript"):
        if node.type == "subscript" and any(c.type not in ("integer", "string") for c in
                                            node.named_children[1:] if c.type not in EXTRAS):
            return False
        node = node.named_children[0]
    return node.type == "identifier"


DEVICE_UNKNOWN = ("the device `{}` is not known here (a literal, a constant, or a choice between them): "
                  "aoti_load_package takes the device type from the package and only an index (device_index=N)")


def load_fix(ctx, call: Node, qualname: str) -> Fix:
    """The loader's own rewrite (the `.so` text of its path becomes `.pt2`); the rest is the plan's."""
    cst = _libcst()
    src = ctx.source
    _, bound = _args(src.node_text(call), ["so_path", "device"])
    if "so_path" not in bound or "device" not in bound:
        raise CannotFix("the path or the device is missing")
    device = _ts_args(call, ["so_path", "device"])["device"][0]
    index = device_index(ctx, call, device)
    # its `.so` text renamed as the compile's path is (`_so_to_pt2` there too): the plan leaves a
    # literal inside this call to it (`aot_load(os.path.join(d, "net.so"), ...)`)
    path = _so_to_pt2(bound["so_path"][0].value)
    args = [_arg(path)]
    if index == RUN_TIME:
        args.append(_arg(cst.parse_expression(run_time_index(src.node_text(_bare(device)))), "device_index"))
    elif index is not None:
        args.append(_arg(cst.Integer(index), "device_index"))
    edits = [Edit(call.start_byte, call.end_byte, _call(LOAD, args, _indent(src, call)))]
    return Fix(
        title="Migrate to torch._inductor.aoti_load_package",
        edits=tuple(sorted(edits, key=lambda e: (e.start, e.end))),
        applicability=Applicability.UNSAFE,
    )


def device_index(ctx, call: Node, node: Node) -> str | None:
    """The `device_index=` an old loader's device becomes: None for `"cpu"`/`"cuda"`, N for
    `"cuda:N"`. A device chosen at run time between values that agree on the index (`"cuda" if
    torch.cuda.is_available() else "cpu"`) becomes the same; `device.type` (a torch.device's
    type: "cuda", never "cuda:1") becomes none either. A name (or `args.device`,
    `sys.argv[1]`) known only at run time gives RUN_TIME: its index is read there
    (`run_time_index`), as aot_load read it. Otherwise CannotFix."""
    held = ctx.facts.deref(_bare(node), call.start_byte)
    if held is not None and held.type == "attribute" and held.child_by_field_name("attribute").text == b"type":
        return None
    values = _device_values(ctx, node, call.start_byte, 0)
    if values is None:
        if _plain_read(_bare(node)):
            return RUN_TIME
        raise CannotFix(DEVICE_UNKNOWN.format(ctx.source.node_text(node)[:40]))
    from aoti_lsp.analysis.devices import split_device

    splits = [split_device(v) for v in sorted(values)]
    bad = [v for v, m in zip(sorted(values), splits) if m is None or m[0] not in OLD_LOAD_TYPES]
    if bad:
        raise CannotFix(f"the device can be `{bad[0]}`, which aot_load rejects (Unsupported device)")
    indices = {m[1] for m in splits}
    if len(indices) > 1:
        raise CannotFix(f"the device is one of {', '.join(repr(v) for v in sorted(values))}: aoti_load_package "
                        "takes only an index, and an index on a CPU package fails")
    return indices.pop()


def _device_values(ctx, node: Node, at: int, depth: int) -> set[str] | None:
    """Every string the device expression can hold (a literal, a constant, either side of a
    conditional), or None where one is not known."""
    node = ctx.facts.deref(_bare(node), at)
    if node is None or depth > 8:
        return None
    if node.type == "string":
        v = _ts_simple_string(node)
        return {v} if isinstance(v, str) else None
    if node.type == "conditional_expression":
        sides = [c for c in node.named_children if c.type != "comment"]
        if len(sides) != 3:
            return None
        a, b = _device_values(ctx, sides[0], at, depth + 1), _device_values(ctx, sides[2], at, depth + 1)
        return a | b if a is not None and b is not None else None
    if node.type == "call" and ctx.facts.qualname(node) == "torch.device":
        # measured (torch 2.13): aot_load compares strings, so a device object fails there
        # (`'torch.device' object has no attribute 'startswith'`); the migration would hide that
        raise CannotFix("the device is a torch.device object, which aot_load fails on (it takes a string: "
                        "`'torch.device' object has no attribute 'startswith'`): fix the call first")
    return None


# -- imports ---------------------------------------------------------------------------------
def import_edits(ctx, calls: list[Node]) -> list[Edit]:
    """For the calls of one file that a migration rewrites together: `import torch` where the
    file lacks it; each old import dropped when these calls (and the `package_aoti` calls they
    absorb) were its only uses."""
    src, names = ctx.source, ctx.names
    edits: list[Edit] = [_import_point(src)] if import_check(ctx, calls) else []
    gone = calls + [r.dst.parent.parent for c in calls if (r := absorbed_reader(ctx, c)) is not None]
    starts = {c.start_byte for c in gone}
    drop: dict[int, tuple[Node, set[str]]] = {}
    for call in gone:
        parts = dotted_parts(call.child_by_field_name("function")) or []
        root = parts[0] if parts else "torch"
        binding = names.lookup(root, call.start_byte, names.scope_of(call)) if root != "torch" else None
        if binding is None or binding.kind != IMPORT or binding.stmt is None:
            continue
        if set(uses_outside(src, binding.stmt, root)) <= starts:
            drop.setdefault(binding.stmt.id, (binding.stmt, set()))[1].add(root)
    edits += [drop_import_name(src, stmt, local) for stmt, local in drop.values()]
    return edits


def import_check(ctx, calls: list[Node]) -> bool:
    """Raises what `import_edits` would raise (CannotFix), without libcst; True when the file
    needs `import torch`."""
    names = ctx.names
    missing = False
    for call in calls:
        torch = names.lookup("torch", call.start_byte, names.scope_of(call))
        if torch is None:
            missing = True
        elif not (torch.kind == IMPORT and torch.target == "torch"):
            raise CannotFix("`torch` is bound to something else in this file")
    return missing


def uses_outside(src, stmt: Node, name: str) -> list[int]:
    """Offsets where `name` is spelt outside its import statement (comments count: the safe side)."""
    return [at for at in src.word_occurrences(name) if not stmt.start_byte <= at < stmt.end_byte]


def drop_import_name(src, stmt: Node, local: str | set[str]) -> Edit:
    cst = _libcst()
    drop = {local} if isinstance(local, str) else local
    parsed = cst.parse_statement(src.node_text(stmt))
    small = parsed.body[0]
    kept = [a for a in small.names if (a.asname.name.value if a.asname else _code(a.name)) not in drop]
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return Edit(stmt.start_byte, stmt.end_byte, _code(small.with_changes(names=kept)))
    return _drop_statement(src, stmt)


def _import_point(src) -> Edit:
    """`import torch` goes before the first module-level import that is not
    `from __future__`, else after the docstring and __future__ imports, else at the top."""
    after = 0
    for i, child in enumerate(src.tree.root_node.named_children):
        if child.type == "comment":
            continue
        is_docstring = i == 0 and child.type == "expression_statement" and child.named_children[0].type == "string"
        if child.type == "future_import_statement" or is_docstring:
            after = child.end_byte
            continue
        if child.type in ("import_statement", "import_from_statement"):
            return Edit(child.start_byte, child.start_byte, "import torch\n")
        break
    if not after:
        return Edit(0, 0, "import torch\n")
    line = src.lines.line_of(after)
    if line + 1 < src.lines.line_count:
        at = src.lines.starts[line + 1]
        return Edit(at, at, "import torch\n")
    return Edit(len(src.data), len(src.data), "\nimport torch\n")
