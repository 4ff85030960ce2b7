from aoti_lsp.analysis.devices import CPU_213, CUDA_211, ConsistencyRule, analysis, flat_inputs, related
from aoti_lsp.analysis.findings import Finding, Related
from aoti_lsp.rules import Rule

# measured (aoti-facts.md, fixtures/cuda/runs/cuda_pkg_wrong_batch; bounds: tests/torch/test_device_values_torch.py):
# no error on CPU or CUDA; the whole measured behaviour is on the rule page and in the related note
EFFECT = "silently accepted (unchecked)"
MEASURED_LINES = (  # for the hover of a finding
    f"Measured on {CPU_213}: a `(3, 8)` input to a package compiled for `(2, 8)` gives a `(2, 8)` result, no error; "
    "a float64 input is read as float32 (wrong values); a size outside a `Dim`'s range runs too",
    f"Measured on {CUDA_211}: a batch of 3 to a Linear package compiled for 2 runs, only a warning that its "
    "output was resized",
    "`AOTI_RUNTIME_CHECK_INPUTS=1` at run time turns each into an error (`unmatched dim value at 0, expected: 2, "
    "but got: 3`, `dim value is too small at 0, expected it to be >= 2, but got: 1`)",
)
CHECKED = f"with `AOTI_RUNTIME_CHECK_INPUTS=1` torch raises (measured on {CPU_213}):"

def _outside(example, meta):
    """(bound, what is wrong, the text AOTI_RUNTIME_CHECK_INPUTS=1 raises) for the first dim of
    `meta` outside the traced range of a dynamic dim of `example`, else None."""
    if meta.shape is None or example.meta is None or example.meta.shape is None \
            or len(meta.shape) != len(example.meta.shape):
        return None
    for b in example.bounds:
        size = meta.shape[b.dim]
        if size < b.low:
            if b.written_min is not None and b.written_min >= 2:
                text = f"has size {size} on dim {b.dim}, below `min={b.written_min}` of `{b.spelled}`"
            else:
                text = f"has size {size} on dim {b.dim}, dynamic (`{b.spelled}`) and traced as >= 2"
            return b, text, f"dim value is too small at {b.dim}, expected it to be >= {b.low}, but got: {size}"
        if b.high is not None and size > b.high:
            return (b, f"has size {size} on dim {b.dim}, above `max={b.high}` of `{b.spelled}`",
                    f"dim value is too large at {b.dim}, expected to be <= {b.high}, but got: {size}")
    return None


def _shape(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _dims(n: int) -> str:
    return f"{n} dim" if n == 1 else f"{n} dims"


class InputShapeMismatch(ConsistencyRule, Rule):
    code = "AOTI103"
    name = "input-shape-mismatch"
    summary = "A loaded AOTI model is called with a literal shape or dtype that differs from its compile-time example"
    explanation = """\
AOTInductor specialises the compiled code to the example inputs: every dimension that was not
declared dynamic (`dynamic_shapes=` of `torch.export.export` / `aot_compile`) is a constant of
the generated kernels, and so is every input's dtype. Called with another size on such a dim,
or another dtype, the compiled model does not notice: by default the inputs are not checked.
Measured on torch 2.13 (CPU), for `x * 2 + 1` compiled from a `(2, 8)` float32 example: a
`(3, 8)` input returns a `(2, 8)` result computed from the first two rows, without a word; a
float64 input is read as float32 and returns garbage (errors of 1e31). A smaller input than
the example is read past its end. Measured on torch 2.11+cu130 (H200), a CUDA Linear package
compiled for a batch of 2 and called with 3 rows runs without error too (only a warning that
its output was resized from `[2, 4]` to `[3, 4]`).

A dynamic dim has a range: `Dim("batch", min=2, max=32)`, and export traces every dynamic dim
as >= 2 whatever `min` says (`Dim.AUTO`, `Dim.DYNAMIC`, `Dim("b")`: 2 to infinity; sizes 0 and
1 are specialised). A literal size outside that range is reported. Measured on torch 2.13
(CPU), a Linear package exported with `Dim("batch", min=2, max=32)` and called with 0, 1 or 33
rows **runs without error** and returns 0, 1 or 33 rows; with `AOTI_RUNTIME_CHECK_INPUTS=1` the
same calls raise `input_handles[0]: dim value is too small at 0, expected it to be >= 2, but
got: 1` and `dim value is too large at 0, expected to be <= 32, but got: 33`. With `Dim.AUTO`
the same holds for 0 and 1. What a model does outside its traced range depends on its code:
a size-sensitive op can read out of bounds (AOTI201).

`AOTI_RUNTIME_CHECK_INPUTS=1` turns that into an error (`unmatched dim value at 1, expected: 8,
but got: 7`, `unmatched dtype ...`). It is read **at run time**, by the generated C++, in the
process that calls the model; setting it at compile time does nothing.

Reported when both sides are literal: the compile-time example (`torch.randn(2, 10)`,
`torch.zeros(4, 8, dtype=torch.int64)`, `torch.tensor([[1, 2]])`, `torch.arange(6)`,
`.reshape(...)`, `.to(torch.float16)`, `.half()`, ... with integer constants) and the argument
of a call of the loaded model, matched by position. The loaded model flattens its arguments, as
measured on torch 2.13: `runner((x,))`, `runner([x])`, `runner(xs)` with `xs = (x,)` and
`runner(*xs)` all pass `x` as input 0 (the PyTorch Python-runtime recipe calls
`model(example_inputs)` with a one-tensor tuple). Dims named in `dynamic_shapes` (a dict
`{0: batch}` or a tuple `(batch, None)` per input, or a dict keyed by the names of the module's
`forward` parameters, `{"x": {0: batch}}`, when its class is in the file) are checked against
their range only (a `min=`/`max=` computed at run time: not checked); when `dynamic_shapes`
cannot be read (keyed by names of a class defined elsewhere or of keyword-only inputs, a value
computed elsewhere, `mark_dynamic`), only the rank and the dtype are compared."""
    fix_explanation = """\
No automatic fix: which side is wrong is a decision. Either call the model with the compiled
shape and dtype, or declare the dim dynamic at compile time
(`dynamic_shapes=({0: torch.export.Dim("batch")},)`) and compile again; run with
`AOTI_RUNTIME_CHECK_INPUTS=1` while testing to have mismatches raise."""
    invalid = (
        'import torch\nep = torch.export.export(M(), (torch.randn(2, 10),))\n'
        'runner = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))\n'
        'runner(torch.randn(3, 10))\n',
        'import torch\nep = torch.export.export(M(), (torch.randn(2, 10),))\n'
        'runner = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))\n'
        'runner(torch.randn(2, 10, dtype=torch.float64))\n',
        'import torch\nfrom torch.export import Dim\n'
        'ep = torch.export.export(M(), (torch.randn(4, 8),), dynamic_shapes=({0: Dim("b", min=2, max=32)},))\n'
        'runner = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))\n'
        'runner(torch.randn(1, 8))\n',
    )
    valid = (
        'import torch\nfrom torch.export import Dim\nbatch = Dim("batch")\n'
        'ep = torch.export.export(M(), (torch.randn(2, 10),), dynamic_shapes=({0: batch},))\n'
        'runner = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))\n'
        'runner(torch.randn(3, 10))\n',
        'import torch\nep = torch.export.export(M(), (torch.randn(2, 10),))\n'
        'runner = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))\n'
        'def serve(x):\n    return runner(x)\n',
    )

    def check(self, ctx):
        a = analysis(ctx)
        for load in a.loads():
            art = a.artifact(load)
            if art is None or not art.inputs:
                continue
            for call in a.runner_calls(load):
                for i, (arg, value) in enumerate(flat_inputs(a, call)):
                    if i >= len(art.inputs):
                        break
                    example = art.inputs[i]
                    if example.meta is None:
                        continue
                    meta = a.tensor_meta(value, value.start_byte)
                    if meta is None:
                        continue
                    problems = []
                    ex = example.meta
                    if meta.shape is not None and ex.shape is not None:
                        if len(meta.shape) != len(ex.shape):
                            problems.append(f"has {_dims(len(meta.shape))} {_shape(meta.shape)}, compiled with "
                                            f"{_dims(len(ex.shape))} {_shape(ex.shape)}")
                        elif example.dynamic is not None:
                            dims = [d for d, (x, y) in enumerate(zip(meta.shape, ex.shape))
                                    if x != y and d not in example.dynamic]
                            if dims:
                                which = ", ".join(map(str, dims))
                                problems.append(
                                    f"has shape {_shape(meta.shape)}, compiled for {_shape(ex.shape)} "
                                    f"with dim{'s' if len(dims) > 1 else ''} {which} static")
                    if meta.dtype is not None and ex.dtype is not None and meta.dtype != ex.dtype:
                        problems.append(f"is {meta.dtype}, compiled for {ex.dtype}")
                    outside = _outside(example, meta) if not problems else None
                    if outside is not None:
                        bound, text, check = outside
                        message = f"Input {i} {text}: {EFFECT}"
                    elif not problems:
                        continue
                    else:
                        message = f"Input {i} " + "; it ".join(problems) + f": {EFFECT}"
                    rel = [Related(ex.evidence.start, ex.evidence.end, f"compile-time example input {i}: {ex.evidence.what}",
                                   path=ex.evidence.path)]
                    if art.site is not None and art.origin != "disk":
                        rel.insert(0, Related(art.site.start, art.site.end, art.site.what, path=art.site.path))
                    if outside is not None:
                        rel.append(Related(bound.evidence.start, bound.evidence.end,
                                           f"dim {bound.dim} traced as {bound.shown}: {bound.evidence.what}; {CHECKED} `{check}`",
                                           path=bound.evidence.path))
                    if (meta.evidence.start, meta.evidence.end) != (arg.start_byte, arg.end_byte):
                        rel += related([meta.evidence], f"input {i} comes from here")
                    yield Finding(self.code, message, arg.start_byte, arg.end_byte, related=rel, severity=self.severity)


RULE = InputShapeMismatch()
