from aoti_lsp.rules._deprecated import FALLBACKS, MIGRATION_PLAN, DeprecatedCall


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
  the old Dynamo tracing) and `torch._inductor.aoti_compile_and_package(ep, ...)`. A comment
  above an argument, or at the end of its line, moves with what the argument becomes (the output
  path's with `package_path=`).
- `options` becomes `inductor_configs` (a copy: the new call mutates the dict it is given);
  `aot_inductor.output_path="x.so"` becomes `package_path="x.pt2"` (see below for the rest of
  the artifact).
- `remove_runtime_assertions`, `disable_constraint_solver` and `same_signature` are ignored
  by torch 2.13 and dropped.
- The old import is removed when this was its last use; `import torch` is added if missing.
- With `aot_inductor.package=True` the old call returned the package's files (a list), the new
  one returns the `.pt2` path. `dst = package_aoti(path, files)`, the list's only reader, is
  absorbed: `dst = aoti_compile_and_package(ep, package_path=path)`. In the compile's block the
  compile stays, and plain bindings of `path` made in between (`aoti_path = "x.pt2"`) move
  above it. Where `path` needs what comes after (ExecuTorch's tests package into a
  `with tempfile.TemporaryDirectory() as d:` body), the export stays where the compile was and
  the compile moves to package_aoti's place: only where that runs once after it (a `with`
  body, not a loop or a branch) and nothing between may change the model (plain bindings,
  `tempfile` folders, `torch.no_grad()`: measured on torch 2.13, the program's package gives the
  same outputs compiled with grad mode on or off). Any other read of the list (a filter of its `.so`, a
  `package_aoti` in a loop) is named, and no fix is offered. `package_aoti` given the new
  call's path raises `Expected aoti_files to be a dict` (measured, torch 2.13).
- `aot_compile(ep.module(), args, dynamic_shapes=ds)` compiles `ep` itself, where `ep`'s export
  gives dims too. Where it exports statically, no fix: torch 2.13 refuses that re-export
  (`Constraints violated`), and the package of the static program would run other batch sizes
  as the example's, silently.
- Not done for you: the old compile ran under `torch.no_grad()`, the new one does not (wrap
  it where the model needs it). No fix is offered for a plain function (export
  needs an `nn.Module`: a caller's `functools.partial`, lambda or `def`, or what a decorator
  wraps: `@aot_compile_sticky_cache(...)` over a `def`), for `*args`, or where the call may not run (lambda, conditional), nor
  where it passes a keyword torch 2.13's call does not take: `constraints=` (dynamic dims in an
  older spelling, a TypeError on torch 2.13; dropping it made the program static)."""
    explanation += FALLBACKS
    fix_explanation += MIGRATION_PLAN
    invalid = (
        "import torch\nso = torch._export.aot_compile(model, (x,))\n",
        "from torch._export import aot_compile as ac\nso = ac(model, (x,), options={'aot_inductor.output_path': 'm.so'})\n",
        "import torch._inductor\nso = torch._inductor.aot_compile(gm, (x,))\n",
    )
    valid = (
        "import torch\nif hasattr(torch._inductor, 'aoti_compile_and_package'):\n    pkg = torch._inductor.aoti_compile_and_package(ep)\nelse:\n    so = torch._export.aot_compile(model, (x,))\n",
        "import torch\nep = torch.export.export(model, (x,))\npt2 = torch._inductor.aoti_compile_and_package(ep)\n",
        "def aot_compile(m, a):\n    return m\naot_compile(model, (x,))\n",
        "compiled.forward.aot_compile(((x,), {}))\n",
    )

    def message(self, qualname, symbol):
        if qualname == "torch._inductor.aot_compile":  # torch warns nothing for it (aoti-facts): legacy, not deprecated
            return f"`{qualname}` is legacy (a bare .so): use `torch.export.export` + `aoti_compile_and_package`"
        return f"`{qualname}` is deprecated: use `torch.export.export` + `aoti_compile_and_package`"


RULE = DeprecatedCompile()
