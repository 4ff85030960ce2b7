from aoti_lsp.analysis.devices import (FACTORIES, LIKE, ConsistencyRule, MEASURED, analysis, artifact_related, bind,
                                      flat_inputs, related,
                              runner_device, target_device, unwrap)
from aoti_lsp.analysis.findings import Applicability, Edit, Finding, Fix, Severity
from aoti_lsp.rules import Rule
from aoti_lsp.rules.aoti101 import old_load_related


class InputDeviceMismatch(ConsistencyRule, Rule):
    code = "AOTI102"
    name = "input-device-mismatch"
    summary = "A loaded AOTI model is called with inputs on another device type than it was compiled for"
    severity = Severity.ERROR
    explanation = """\
An AOTInductor model runs its kernels on the device type it was compiled for, and reads its
inputs there. Measured on torch 2.11+cu130 (H200), with a Linear (the op named is the model's
first):

- CPU inputs to a CUDA package: `Expected all tensors to be on the same device, but got mat1 is
  on cpu, different from other tensors on cuda:0 (when checking argument in method
  wrapper_CUDA_addmm_out_out)`, then `run_func_(...) API call failed`; with
  `AOTI_RUNTIME_CHECK_INPUTS=1`: `input_handles[0]: unmatched device type, expected: 11(cuda),
  but got: 0`.
- CUDA inputs to a CPU package: `Exception in aoti_torch: Expected out tensor to have device
  cuda:0, but got cpu instead` (from `aoti_torch_cpu_addmm_out`).

Only the device type matters: inputs on `cuda:1` for a model compiled on `cuda:0` are not
reported.

Calls of the loaded model are followed through: a local (`runner = aoti_load_package(...)`,
`runner(x)`), an attribute set in any method and called in another (`self.runner(x)`, also when
it is first set to `None`), a module global (also one set lazily under `global` in a function,
when every other assignment is `None`), the return value of a function or method (one level:
`def load(): return aoti_load_package(P)`, `load()(x)`), and `aot_load(...)(x)`. Not followed: a
runner passed as an argument, stored in a container, or returned through two functions; a path
passed by the caller of such a helper (its default is used). The artifact path may be a constant of
another module of the project (`from pkg.paths import TOWER`, `import pkg.paths as P`, relative
imports, `os.path.join` of constants there), the value of a helper without parameters
(`def artifact(): return os.path.join(D, "m.pt2")`), or built from an environment variable
(`os.environ.get("DIR", default)` is the same symbol wherever it is read).

The device of each input of a call of the loaded model is read from the same evidence as the
compile side (the inputs as the model flattens them: the tensors of `runner((x,))`, `runner([x])`,
`runner(xs)` with `xs = (x,)`, `runner(*xs)`; one built elsewhere is reported where it is passed
and moved where it is made). A model traced with example inputs on several device types (a CUDA
tensor and a CPU scalar flag, as PyTorch issues' reproductions pass) takes a CPU input where it
was traced: its calls are not reported. The same evidence: `.cuda()`, `.cpu()`, `.to(...)`, `device=` of the factories, constants, simple
(re)assignments in order, `with torch.device(...)` and `torch.set_default_device(...)`. A tensor
created without `device=` is on the CPU unless a default device is set; so is one built from
Python data (`torch.tensor([...])`, a list comprehension, `torch.as_tensor((1, 2))`), while
`torch.tensor(t)` of a tensor keeps `t`'s device (unknown unless `t`'s is known) and
`torch.from_numpy(a)` is always on the CPU. The compiled device
comes from the compile site of the loaded artifact (in this file, in another file of the project
through the artifact's path, or from a `.pt2` package on disk); for `aot_load`, when the compile
side is unknown, the device it is loaded on. Unknown devices (parameters, run-time choices,
config attributes) are never reported. CPU example inputs do not make a CPU package when the
exported module's class, in the same file, names an accelerator itself (`.cuda()`, `"cuda"`,
`torch.accelerator.current_accelerator()`): inputs passed for their sizes only, the work made on
the device (measured on an H200: such a package records `cuda`)."""
    fix_explanation = """\
Unsafe (it moves data between devices): offered as a quick fix, applied by the CLI only with
`--unsafe-fixes`. The argument is moved to the compiled device:

- `x.to("cpu")`, `x.to(device=dev)`: the device argument becomes the compiled device;
- `x.cpu()` becomes `x.to("cuda")`;
- a factory call (`torch.randn(4, 8)`, `torch.zeros_like(t)`) gets or changes `device=`;
- anything else is wrapped: `x` becomes `x.to("cuda")`.

The device written is the one the model is loaded on when that names an index of the right
type (`aot_load(so, "cuda:1")`, `device_index=1`), else the compiled device type."""
    invalid = (
        'import torch\nmodel = MyModel().cuda()\ninp = torch.randn(2, 10, device="cuda")\n'
        'so = torch._export.aot_compile(model, (inp,))\nloaded = torch._export.aot_load(so, "cuda")\n'
        'out = loaded(inp.to("cpu"))\n',
        'import torch\nwith torch.device("cuda"):\n    ep = torch.export.export(M(), (torch.randn(4, 8),))\n'
        'pt2 = torch._inductor.aoti_compile_and_package(ep)\nrunner = torch._inductor.aoti_load_package(pt2)\n'
        'runner(torch.randn(4, 8))\n',
    )
    valid = (
        'import torch\nx = torch.randn(2, 10, device="cuda:0")\nep = torch.export.export(M(), (x,))\n'
        'runner = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))\n'
        'runner(torch.randn(2, 10, device="cuda:1"))\n',
        'import torch\ntorch.set_default_device("cuda")\nep = torch.export.export(M(), (torch.randn(20),))\n'
        'runner = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))\n'
        'runner(torch.randn(20))\n',
        'import torch\ndef serve(runner, x):\n    return runner(x.cpu())\n',
    )

    def check(self, ctx):
        a = analysis(ctx)
        for load in a.loads():
            art = a.artifact(load)
            compiled = runner_device(a, load, art)
            if compiled is None or (art is not None and art.mixed):
                continue
            target = target_device(a, load, compiled)
            for call in a.runner_calls(load):
                for arg, value in flat_inputs(a, call, anywhere=True):
                    dev = a.tensor_device(value, value.start_byte)
                    if dev is None or dev.type == compiled.type:
                        continue
                    if art is not None and art.device is not None:
                        side = art.compiled_for()
                    else:
                        side = f"a model loaded on `{compiled.spelled}`"
                    # the remedy is the fix's title ("Move it to", "Create it with device="): not repeated here
                    message = f"{dev.type.upper()} input to {side}{_effect(dev.type, compiled.type)}"
                    rel = (artifact_related(art) if art is not None and art.device is not None
                           else related(compiled.evidence, f"loaded on {compiled.type}"))
                    # an input built elsewhere (`runner(xs)`, `xs = (x,)`): reported where it is
                    # passed, moved where it is made
                    at = value if arg.start_byte <= value.start_byte and value.end_byte <= arg.end_byte else arg
                    rel += related(dev.evidence, f"this input is on {dev.type}", skip=(at.start_byte, at.end_byte))
                    rel += old_load_related(load)
                    yield Finding(self.code, message, at.start_byte, at.end_byte,
                                  fix=move_fix(a, value, target), related=rel, severity=self.severity)


def _effect(given: str, compiled: str) -> str:
    """What torch was measured to say, per direction (the op in it is the model's first: a Linear here)."""
    key = {("cpu", "cuda"): "cpu_input_to_cuda", ("cuda", "cpu"): "cuda_input_to_cpu"}.get((given, compiled))
    return f": {MEASURED[key][2]}" if key else ""  # torch's words, unquoted: the message stays one short line


def move_fix(a, value, target: str) -> Fix:
    """Move one call argument to `target`: change the move it already makes, or add one."""
    data = a.src.data
    text = f'"{target}"'
    node = unwrap(value)
    edit = None
    if node.type == "call":
        func = node.child_by_field_name("function")
        q = a.qualname(node)
        short = q.rsplit(".", 1)[-1] if q else None
        bound, complete = bind(node, ())
        if func.type == "attribute" and q is None:
            method = func.child_by_field_name("attribute")
            if method.text == b"to" and complete:
                positional = [x for x in node.child_by_field_name("arguments").named_children
                              if x.type not in ("keyword_argument", "comment")]
                if "device" in bound:
                    d = bound["device"]
                    edit = Edit(d.start_byte, d.end_byte, text)
                elif positional and a.dtype_of(positional[0]) is None \
                        and a.device_value(positional[0], positional[0].start_byte) is not None:
                    edit = Edit(positional[0].start_byte, positional[0].end_byte, text)
            elif method.text in (b"cpu", b"cuda"):
                edit = Edit(method.start_byte, node.end_byte, f"to({text})")
        elif q is not None and q == f"torch.{short}" and (short in FACTORIES or short in LIKE) and complete:
            if "device" in bound:
                d = bound["device"]
                edit = Edit(d.start_byte, d.end_byte, text)
            else:
                args = node.child_by_field_name("arguments")
                last = [x for x in args.named_children if x.type != "comment"]
                if last:
                    edit = Edit(last[-1].end_byte, last[-1].end_byte, f", device={text}")
                else:
                    edit = Edit(args.start_byte + 1, args.start_byte + 1, f"device={text}")
            return Fix(f"Create it with device={text}", (edit,), Applicability.UNSAFE)
    if edit is None:
        if node.type in ("identifier", "attribute", "call", "subscript", "parenthesized_expression"):
            edit = Edit(value.end_byte, value.end_byte, f".to({text})")
        else:
            src = data[value.start_byte:value.end_byte].decode()
            edit = Edit(value.start_byte, value.end_byte, f"({src}).to({text})")
    return Fix(f"Move it to {text}", (edit,), Applicability.UNSAFE)


RULE = InputDeviceMismatch()
