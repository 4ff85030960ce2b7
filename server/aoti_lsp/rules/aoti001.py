from aoti_lsp.rules._deprecated import DeprecatedCall


class DeprecatedCompile(DeprecatedCall):
    code = "AOTI001"
    name = "deprecated-aot-compile"
    summary = "`aot_compile` is deprecated: use `torch.export.export` + `torch._inductor.aoti_compile_and_package`"
    triggers = ("aot_compile",)
    explanation = """\
`torch._export.aot_compile` (and the older `torch._inductor.aot_compile`) produce a bare
`.so` that only the equally deprecated `torch._export.aot_load` can run. The supported path
is `torch.export.export` followed by `torch._inductor.aoti_compile_and_package`, which writes
a `.pt2` package (the `.so`, its kernels and `wrapper_metadata.json` with the device type),
loaded by `torch._inductor.aoti_load_package`.

torch 2.13 only logs a one-time banner through `logging` (logger `torch._export`): there is
no `warnings` category and no `__deprecated__`, so `python -W error` and type checkers never
notice. `torch._inductor.aot_compile` takes only an `fx.GraphModule`: a plain `nn.Module`
fails with `AttributeError: ... has no attribute 'graph'`."""
    fix_explanation = """\
Unsafe (it changes the artifact on disk from `.so` to `.pt2`): offered as a quick fix in the
editor, applied by the CLI only with `--unsafe-fixes`.

- `aot_compile(model, args, kwargs, dynamic_shapes=ds, options=opts)` becomes
  `ep = torch.export.export(model, args, kwargs, dynamic_shapes=ds, strict=True)` (strict keeps
  the old Dynamo tracing) and `torch._inductor.aoti_compile_and_package(ep, ...)`.
- `options` becomes `inductor_configs` (a copy: the new call mutates the dict it is given);
  `aot_inductor.output_path="x.so"` becomes `package_path="x.pt2"` (see below for the rest of
  the artifact).
- `remove_runtime_assertions`, `disable_constraint_solver` and `same_signature` are ignored
  by torch 2.13 and dropped.
- The old import is removed when this was its last use; `import torch` is added if missing.
- Not done for you: the old compile ran under `torch.no_grad()`, the new one does not (wrap
  it where the model needs it); with `aot_inductor.package=True` the old call returned a
  list, the new one returns the `.pt2` path. No fix is offered for a plain function (export
  needs an `nn.Module`), for `*args`, or where the call may not run (lambda, conditional).

**One artifact, one migration, across the project.** The fix is planned on the artifact the call
writes or reads (the `.so` path, or the compile's return value), and every place that names it
changes together, in every file of the project: the compile, every loader (`aot_load` becomes
`aoti_load_package`; a new loader still given the `.so` too), and the string text the path ends
with, wherever it is spelt (a literal at the call, a constant of the file, a constant of another
module: `TOWER = os.path.join(ARTIFACT_DIR, "tower.so")` in `paths.py`), plus other strings of
those files spelt the same (`os.path.exists("out/m.so")`). The quick fix's title says what it
renames and in how many files; the editor gets one edit over all of them; `--fix` writes those
files all or none. The same fix is attached to the compile's and the loaders' findings.

No fix, with the reason in the related information, when the plan cannot be made whole: the
artifact path is computed at run time (`sys.argv[1]`); no compile of the project writes the `.so`
a loader reads (the producer is elsewhere); the compile's result is returned to code this analysis
cannot follow; the path constant is also loaded as a shared library (`ctypes.CDLL`) or taken apart
as a string (`.replace(".so", ...)`); a loader's device cannot be read. A loader that asks for
another device type than the compile used (`aot_load(p, "cpu")` of a CUDA-compiled model) is a bug
of its own (AOTI101): the migration would drop `device="cpu"` and hide it, so it is then offered
only in the editor (display-only, its title says `drops device="cpu"`), never by `--fix` or
fix-all, and AOTI101 stays reported."""
    invalid = (
        "import torch\nso = torch._export.aot_compile(model, (x,))\n",
        "from torch._export import aot_compile as ac\nso = ac(model, (x,), options={'aot_inductor.output_path': 'm.so'})\n",
        "import torch._inductor\nso = torch._inductor.aot_compile(gm, (x,))\n",
    )
    valid = (
        "import torch\nep = torch.export.export(model, (x,))\npt2 = torch._inductor.aoti_compile_and_package(ep)\n",
        "def aot_compile(m, a):\n    return m\naot_compile(model, (x,))\n",
        "compiled.forward.aot_compile(((x,), {}))\n",
    )

    def message(self, qualname, symbol):
        return f"`{qualname}` is deprecated: use `torch.export.export` + `aoti_compile_and_package`"


RULE = DeprecatedCompile()
