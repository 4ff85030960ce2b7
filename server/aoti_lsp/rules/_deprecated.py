"""Shared body of the deprecated-API rules (AOTI001, AOTI002): the symbols are data
(data/deprecated.toml), the migration is planned per artifact (fixes/plan.py): the compile's
finding and each loader's carry the same fix."""

from __future__ import annotations

import functools

from aoti_lsp.analysis import findings
from aoti_lsp.analysis.compat import broken_fallback, is_fallback
from aoti_lsp.analysis.deprecations import for_code
from aoti_lsp.analysis.findings import Applicability, Edit, Finding, Fix, LazyFix, Related
from aoti_lsp.fixes.migrate import CannotFix, drop_import_name, uses_outside
from aoti_lsp.fixes.plan import migration
from aoti_lsp.analysis.names import IMPORT
from aoti_lsp.rules import Rule


# both rules' pages: how their shared fix is planned
MIGRATION_PLAN = """

**One artifact, one migration, across the project.** The fix is planned on the artifact the call
writes or reads, from where its value flows first: the compile's return value to every loader it
reaches (a variable, an attribute, a helper's return), then the path's text for what value flow
cannot see. Every place that names the artifact changes together, in every file of the project:
the compile, every loader (`aot_load` becomes `aoti_load_package`; a new loader still given the
`.so` too), and the string text the path ends with, wherever it is spelt (a literal at the call,
a constant of the file, a constant of another module: `TOWER = os.path.join(ARTIFACT_DIR,
"tower.so")` in `paths.py`), plus other strings of those files spelt the same
(`os.path.exists("out/m.so")`). Two spellings of the same path name the same artifact in every
module: `os.path.join(os.getcwd(), "m.so")`, `os.path.abspath("m.so")` and `"m.so"` all resolve
against the working directory. The quick fix's title says what it renames and in how many files;
the editor gets one edit over all of them; `--fix` writes those files all or none. The same fix is
attached to the compile's and the loaders' findings.

What the old call did is carried over exactly: its arguments, `dynamic_shapes` and the context it
runs in stay; an options dict bound once to a variable (`opts = {"aot_inductor.output_path": p,
...}`, read nowhere else) is read like a literal: its output path moves to `package_path=` and
the other keys stay in `opts`, passed as `inductor_configs=`; later statements that only set other
keys on it (`opts.update({"max_autotune": True})`, `opts["k"] = v`, as the official Python-runtime
tutorial does on CUDA) keep it, even when the path was its only entry. **What is exported already is never
exported again**: `torch._inductor.aot_compile(ep.module(), ...)` of an `ExportedProgram ep`
(made by `torch.export.export`/`load` or their `run_decompositions()`, a parameter annotated
`ExportedProgram` and never rebound, or a name inside `if isinstance(ep, ExportedProgram):`) becomes `aoti_compile_and_package(ep, ...)`, which keeps `ep`'s dynamic dims (re-exporting
`ep.module()` without `dynamic_shapes` makes every dim static: measured on torch 2.13 CPU, the package
then gives wrong numbers for other batch sizes, without an error unless `AOTI_RUNTIME_CHECK_INPUTS=1`).
So does `aot_compile(ep.module(), *ep.example_inputs)`, the program's own (args, kwargs) spread in
(zhxchen17/torchnative; another program's inputs, or a splat of anything else, is not read). The same holds for a graph module named first: `gm = ep.module()` then `aot_compile(gm, ...)`
compiles `ep` (the same binding of `ep` at the compile), and `gm = torch.export.export(...).module()`
names the program first (`ep = torch.export.export(...)`, `gm = ep.module()`), as PyTorch issues'
reproductions write it. A result unpacked as torch 2.1 returned it (`so, exported =
aot_compile(...)`: the path and the ExportedProgram) becomes `so = aoti_compile_and_package(ep)`
and `exported = ep` (`_` is dropped): the new call returns the path alone, which would not
unpack (nor does the old call's on torch 2.13). A device chosen at run time between values that agree on
the index (`"cuda" if torch.cuda.is_available() else "cpu"`) becomes no `device_index`, as the
loader takes the device type from the package; `device.type` of a `torch.device` has no index
either. A device known only at run time (a parameter, `args.devices[0]`, as pytorch/benchmark's
model cache passes it) keeps its index as aot_load read it: `device_index=-1 if
torch.device(d).index is None else torch.device(d).index` (`"cuda"` -> the current device, as
before; `"cuda:1"` -> 1; `None` would raise), and the title says so.

**A loader that reads the compile's result on some runs only** (a script that compiles unless
given a compiled model: `so = sys.argv[1] if len(sys.argv) > 1 else None`, then `if so is None:
so = aot_compile(...)`, then `aot_load(so, ...)`) changes with the compile: migrating the compile
alone would hand the old loader a `.pt2` (`dlopen ... invalid ELF header`). Where the other value
is `None`, both are migrated; where it may be another path, the migration is offered only in the
editor, its title naming that value (what is given there must become a `.pt2`); where two old
compiles reach the same loader (`if ...: so = aot_compile(a, ...) else: so = aot_compile(b,
...)`, as saifhaq/alma writes it), the two compiles and the loader are migrated together.

**Producer and consumer in different programs.** A folder made by `tempfile.mkdtemp()` or
`TemporaryDirectory()` in the same run is private: no other program can read what is written
there, so its loaders are exactly those the value reaches. So is a cache the same code writes
and loads: a path known only at run time that visibly ends in `.so` (`os.path.join("cache",
f"{name}_{device}.so")`, `out / "net.so"`), compiled to and loaded in the same function, the
compile's result read by nothing but that loader (`str(so)` around it counts as it) and no file of
the project outside Python naming a `.so`: its ending is renamed to `.pt2` (aoti_compile_and_package
refuses any other: measured) and `--fix --unsafe-fixes` migrates it; a loader of the function that
spells the same path, before the compile too (a cache probed in a `try`, rebuilt in its `except`:
nfdi-demonstrator), is migrated with it (`tests/torch/projects/migration/cache_probe`); so is a
helper compiling to the path its one caller gives it, where that caller probes the cache and loads
what either branch holds (inference-benchmarks: `tests/torch/projects/migration/cache_helper`), and a
helper compiling to the path its one caller passes and loads after the call (umut-kocak/PyTorchDemos:
`export_model(model, x, out_path)`, then `aot_load(out_path)`), the path's `.so` written as the
default of a command-line option (`parser.add_argument("--out", default="m.so")`, read as
`args.out`): the default is renamed and the title says a path given as `--out` must end in .pt2
too (`tests/torch/projects/migration/helper_argument`). Where that helper is called more than
once, its loader's reason names the call that writes its path.
Where the build also reads what it wrote (sizes the `.so`, audits the files beside it, prints where
it is for another program: geoeo/depthsplat), the title names that read; a log line
(`log.info("saved", path=so)`) is for a person, not a reader. Otherwise, where nothing in the
project loads the `.so` (a C++ runner, another repository, a path passed on the command line and
loaded by another program), the migration is offered only in the editor (unsafe, editor only), its title
saying what must change elsewhere: that reader must move to `aoti_load_package` (C++:
`AOTIModelPackageLoader`) in the same change, and a path given at run time must end in `.pt2`.
Migrate both sides together; `--fix` never applies it. The same holds where the compile's
result is given to a function imported from outside torch and the standard library (a vendor's
own `load_package`, which opens the old call's `.so` or list of files; an artifact store), or to
a method of an object of the project's code whose body the plan does not read
(`builder.add_library("enc", so)`: zhxchen17/torchnative's builder copies the `.so` for a Rust
program): the title names that function, which must read the `.pt2` the new call writes; and where
the path is written into a command for another script (`print(f"python flux_test.py {so}")`),
the title names that script, which must load the `.pt2`. **A command for a script of the project**
is followed into it where the two sides match argument for argument (zhxchen17/torchnative's
`wip/flux_aoti.py` prints `python flux_test.py {fmodel_path} {ae_decoder_path}`, and
`flux_test.py` loads `fmodel_path, ae_decoder_path = sys.argv[1:]` with `aot_load`): each
compile's path is a whole word of the command, the script reads that word's `sys.argv` item (by
index, or unpacked from a slice) and gives it to old loaders only, and every item the script
loads is one a compile writes. Then the compiles and the script's loaders migrate together,
in both files, by `--fix --unsafe-fixes` too: the command hands each loader the `.pt2` its compile
wrote (`tests/torch/projects/migration/command_for_script` runs both programs before and after).
An argparse option, a path inside a longer word (`--model={so}`), or an argument the script
loads that no compile writes keep the migration in the editor, the title naming the script. One loader of that kind is migrated by
`--fix --unsafe-fixes`: a helper nothing in the project calls (`def aot_load(path): return
torch._export.aot_load(path, "cuda")`) in a module whose compiles all write `.pt2` packages with
`aoti_compile_and_package`: the old loader cannot open what that module makes (torch 2.13:
`dlopen ... invalid ELF header`), so the new one is what its callers need. The title says so, and that the loader's device type
is dropped (a package loads on the type it was compiled for).

**A graph module of unknown origin** given to `torch._inductor.aot_compile` (a parameter, a
`make_fx` trace in real or fake mode) is re-exported, `torch.export.export(gm, args, strict=True)`,
offered only in the editor: the old call kept whatever dynamic dims the graph holds (measured:
the `.module()` of a dynamic export stays dynamic), and the re-export has none. The title says so.
Where the graph is static (a static export's `.module()`, a real `make_fx` trace) the two agree
(measured on torch 2.13: `tests/torch/projects/migration/graph_branches`). Where that re-export
never runs it is no one's call: the graph module is a parameter tested `if isinstance(model,
ExportedProgram):` and compiled in the `else`, and every caller of its function passes an
ExportedProgram (an export, a parameter annotated so, what a project function annotated `->
ExportedProgram` returns, as saifhaq/alma's one caller does), with no other file of the project
spelling the function's name: `--fix --unsafe-fixes` migrates both branches and the loader
together, the title says why (`tests/torch/projects/migration/graph_branches_programs`).

No fix, with the reason in the related information, naming the expression and the place, when
the plan cannot be made whole: a loader whose path is known only at run time and that no compile
of the project writes (`aot_load(sys.argv[1], ...)`: the producer is elsewhere; a path read from
the command line, `sys.argv` or an argparse option, says so, and names the compiles of other files
that write what they make into a command for its script, `print(f"python flux_test.py {so}")`, where the
two do not match argument for argument); the compile's
result is returned to code this analysis cannot follow (a method's callers are not followed);
`gm = ep.module()` changed before it is compiled (its graph edited by hand, `gm.to(...)`, `gm`
given to a function: compiling `ep` in its place would drop the change, measured, since
`ep.module()` makes a new graph); `with torch._inductor.config.patch({"aot_inductor.package":
True}):` (or that decorator) around the call whose result is read (the old call returns a list of
files there); the path constant is also loaded as a
shared library (`ctypes.CDLL`) or taken apart as a string (`.replace(".so", ...)`); the path a
compile returns used as that .so: copied or moved (`shutil.copy`), loaded with `ctypes`, its
extension read (`os.path.splitext(p)[1]`) (its folder and its stem are no reason: without an
output path the new call writes `<h>.wrapper.pt2` into an inductor folder that also holds
`<h>.wrapper.so` and its C++, as the old call's did; measured on torch 2.13, seantempesta/remaster
copies that folder's files); a name holding the path (known only at run time)
that the same code also opens with a private runner (`torch._C._aoti.AOTIModelContainerRunnerCpu`,
which opens only a `.so`, as Intel's DLRM example does); an options
variable that is also read elsewhere (passed on, printed, updated from another dict whose keys are
unknown), or whose output path or `aot_inductor.package` is set again later; a graph module given to
`torch._inductor.aot_compile` that is the `.module()` of something this analysis cannot tell is an
`ExportedProgram`, or a `make_fx(..., tracing_mode="symbolic")` trace (the old call kept its
symbolic dims; a re-export would make them static);
a loader's device that cannot be read; an import statement of the file with a syntax error
(libcst, which rewrites the imports, cannot read it). A loader that asks for another device type than the
compile used (`aot_load(p, "cpu")` of a CUDA-compiled model) is a bug of its own (AOTI101): the
migration would drop `device="cpu"` and hide it, so it is then offered only in the editor
(unsafe, editor only: its title ends `[unsafe]` and says `decides the device: drops device="cpu"`),
never by `--fix` or fix-all, and AOTI101 stays reported. `--diff` lists every finding it does not fix, with why, on stderr."""


# both rules' pages: what is not reported (analysis/compat.py)
FALLBACKS = """

**Not reported: fallbacks for older torch.** A call that runs only where the new API is missing
or failed is kept on purpose beside the new path: the `else` of `if hasattr(torch._inductor,
"aoti_compile_and_package")` (or the body of `if not hasattr(...)`), the `except` of a `try` that
imports or calls `aoti_load_package`, and code after such a `try` that returns (also a `try` in
a loop over loader names, as MACE-ICTD tries them). Migrating it would
duplicate the branch that is already there. Unless the `try` imports the new function as a
module (`from torch._inductor.aoti_compile_and_package import aoti_compile_and_package`): that
import always fails (torch 2.13: `ModuleNotFoundError`), so the old branch always runs. It is
reported, and the fix imports the function from its module (`from torch._inductor import ...`),
which makes the new path run (unsafe: what runs changes). A branch chosen by an option (`if package: <new>
else: <old>`, the `.so` a C++ runner loads) is not a fallback: it is reported."""


class DeprecatedCall(Rule):
    deprecated = True

    def message(self, qualname: str, symbol) -> str:
        raise NotImplementedError

    def check(self, ctx):
        symbols = for_code(self.code)
        calls = ctx.calls_to(set(symbols))
        for call, qualname in calls:
            if is_fallback(call):  # kept for older torch beside the new path, on purpose: compat.py
                continue
            func = call.child_by_field_name("function")
            message = self.message(qualname, symbols[qualname])
            fix, related = None, []
            failing = broken_fallback(call)
            if failing is not None:  # the new path above never runs: this one always does
                fix = _import_fix(ctx, failing)
                module = failing.child_by_field_name("module_name") or failing
                related.append(Related(failing.start_byte, failing.end_byte, (
                    f"`{ctx.source.node_text(module)[:60]}` (line {ctx.source.lines.line_of(failing.start_byte) + 1}) "
                    "names a function, not a module: that import always fails, so this fallback always runs; "
                    "import the function from its module instead")))
            # with the import fixed the new path runs: the fallback stays as its author wrote it
            if fix is None and not call.has_error and _broken_import(ctx):
                related.append(Related(func.start_byte, func.end_byte,
                                       "no automatic fix: an import statement of this file has a syntax error"))
            elif fix is None and not call.has_error:
                try:
                    fix = migration(ctx, call)
                except CannotFix as why:
                    related.append(Related(func.start_byte, func.end_byte, f"no automatic fix: {why}"))
            yield Finding(self.code, message, func.start_byte, func.end_byte, fix=fix, deprecated=True, related=related)

        # after a migration the old import may be left with no use (fix-all migrates every
        # call in one pass, and each call's fix kept the import for the others)
        for name, bindings in ctx.names.module.bindings.items():
            for b in bindings:
                if b.kind == IMPORT and b.target in symbols and b.stmt is not None and not uses_outside(ctx.source, b.stmt, name):
                    node = next((n for n in _import_names(b.stmt) if n[0] == name), None)
                    start, end = node[1] if node else (b.stmt.start_byte, b.stmt.end_byte)
                    title = f"Remove unused import of {b.target}"
                    build = functools.partial(_drop, ctx.source, b.stmt, name)  # libcst: when it is needed
                    fix = None if b.stmt.has_error else Fix(title, build(), Applicability.SAFE) if findings.EAGER_FIXES \
                        else LazyFix(title, Applicability.SAFE, build)  # libcst cannot read a broken import
                    yield Finding(
                        self.code, f"`{b.target}` is deprecated and imported but never used: remove the import",
                        start, end, deprecated=True, unnecessary=True, fix=fix,
                    )


def _import_fix(ctx, failing) -> Fix | None:
    """`from torch._inductor.aoti_compile_and_package import aoti_compile_and_package` ->
    `from torch._inductor import aoti_compile_and_package`: the `try`'s new path then runs (a
    behaviour change, what its author meant: unsafe). None for another shape of import."""
    module = failing.child_by_field_name("module_name")
    if failing.type != "import_from_statement" or module is None or failing.has_error:
        return None
    parent, _, final = module.text.decode().rpartition(".")
    names = [n.text.decode() for n in failing.children_by_field_name("name")]
    if names != [final]:
        return None
    return Fix(f"Import `{final}` from `{parent}` (the import above always fails: the fallback always runs)",
               (Edit(module.start_byte, module.end_byte, parent),), Applicability.UNSAFE)


def _broken_import(ctx) -> bool:
    """Whether an import statement of the file holds a syntax error: the migration rewrites the
    file's imports with libcst, which cannot read it (issue 19 item 8: a traceback, and a fix
    counted as fixable that had no edits)."""
    root = ctx.source.tree.root_node
    if not root.has_error:
        return False
    memo = ctx.lookups.setdefault("broken import", []) if getattr(ctx, "lookups", None) is not None else []
    if not memo:
        memo.append(_error_in_import(root))
    return memo[0]


def _error_in_import(root) -> bool:
    # only down paths that hold an error (tree-sitter marks every ancestor): a walk of the
    # whole tree took ~140 ms of a keystroke in a 20k-line file
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in IMPORTS:
            return True
        stack.extend(c for c in node.children if c.has_error)
    return False


IMPORTS = ("import_statement", "import_from_statement", "future_import_statement")


def _drop(source, stmt, name) -> tuple:
    return (drop_import_name(source, stmt, name),)


def _import_names(stmt):
    for n in stmt.children_by_field_name("name"):
        alias = n.child_by_field_name("alias") if n.type == "aliased_import" else None
        yield ((alias or n).text.decode(), (n.start_byte, n.end_byte))
