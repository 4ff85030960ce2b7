import os

from aoti_lsp import lazyre
from aoti_lsp.analysis.devices import (quote, ConsistencyRule, IndexChoice, analysis, artifact_related, delete_argument,
                              related, snippet)
from aoti_lsp.analysis.findings import Applicability, Edit, Finding, Fix, Related, Severity
from aoti_lsp.rules import Rule

# what sets a compile-time device, as spelt: `device="cuda:0"`, `.cuda()`, `.to("cuda")`
_DEVICE_ARG = lazyre.compile(r"""device\s*=\s*(["'])([a-z]+)(:\d+)?\1""")
_TO = lazyre.compile(r"""to\((["'])([a-z]+)(:\d+)?\1\)""")


class LoadDeviceMismatch(ConsistencyRule, Rule):
    code = "AOTI101"
    name = "load-device-mismatch"
    summary = "A compiled model is loaded on another device type than it was compiled for"
    severity = Severity.ERROR
    explanation = """\
AOTInductor compiles for one device type: the device of the example inputs (and of the model's
parameters) at compile time. The loader must run it on that device type; only the index may
differ (`cuda:0` at compile time, `cuda:1` at load time is fine).

- `torch._export.aot_load(so_path, device)` takes the device from its caller. A CUDA-compiled
  model loaded with `"cpu"` fails at load, no segfault (measured on torch 2.11+cu130 (H200)):
  `Mixed-device constants are only supported when the secondary device is CPU. Constant '...' was
  compiled for a non-CPU device. ... In AOTI, you must compile and load on the same device type.`,
  then `create_func_(...) API call failed`. A CPU-compiled `.so` loaded on `"cuda"` is not
  measured yet.
- `torch._inductor.aoti_load_package(path, device_index=-1)` takes the device *type* from the
  package (`AOTI_DEVICE_KEY` in its `wrapper_metadata.json`); only the index can be chosen. A
  package compiled for CPU given any `device_index` (0 included) fails with
  `RuntimeError: Incorrect device passed to aoti_runner_cpu` (measured on torch 2.13 (CPU) and
  torch 2.11+cu130 (H200)).
- `device_index=None` fails on any package: `TypeError: __init__(): incompatible constructor arguments`
  (measured on torch 2.13 (CPU)). It is what `device.index` gives for `torch.device("cpu")`, for
  `torch.device("cuda")` without an index, and for a CPU tensor's `.device`: typically a
  distributed-init helper that returns `torch.device("cpu")` on hosts without CUDA.
- A CUDA package given an index past the host's GPUs fails at load with
  `CUDA error: invalid device ordinal` (measured on torch 2.11+cu130 (H200), `device_index=1` on
  a 1-GPU host); how many GPUs the serving host has is not known here, so it is not reported.

Device values are followed through `torch.device(...)` objects, their `.type` and `.index`,
variables, a parameter's default, the returns of a helper of the same file (also unpacked:
`rank, device = init_distributed()`), each branch of `a if c else b`, and `x.device` of a
tensor whose device is known. A branch that tests the device (`device.index if device.type ==
"cuda" else -1`, `if device.index is not None:`) is read as such.

The compile device is read from the example inputs (`.cuda()`, `.to("cuda:0")`, `device=` of
the factories, `torch.device(...)`, constants, `with torch.device(...)`,
`torch.set_default_device(...)`), else from the model (`.cuda()`, `.to(...)`, also in place:
`model.cuda()` as a statement); CPU example inputs are not read as a CPU package when the
exported module's class, in the same file, names an accelerator itself (`.cuda()`, `"cuda"`,
`torch.accelerator.current_accelerator()`: inputs passed for their sizes, work made on the
device; measured on an H200, such a package records `cuda`). The compile site is found through the compile call's return
value or through the artifact's path (`aot_inductor.output_path`, `package_path`): in this file,
in another file of the project, or, for a `.pt2` that exists on disk, in the package's own
metadata. Nothing is reported when either side is unknown: a device computed at run time
(`"cuda" if torch.cuda.is_available() else "cpu"`), a function parameter, a config attribute."""
    fix_explanation = """\
- `aot_load(so, "cpu")` for a CUDA-compiled model: two ways out, and which one is right is the
  user's decision, so both are only offered in the editor (unsafe, editor only: never applied
  by `--fix` or fix-all): load it on the compile device (`aot_load(so, "cuda")`, with its index when
  the compile side names one) and feed it inputs on that device; or compile it for the device it
  is served on (each `device="cuda"`, `.cuda()`, `.to("cuda")` that sets the example inputs' and
  the model's device names `cpu`; offered when every one of them is spelt so). The deprecated-API migration of such
  a load (AOTI002) is held back too: it would drop `device="cpu"` and hide the mismatch.
- `aoti_load_package(cpu_package, device_index=N)`: unsafe (applied with `--unsafe-fixes`):
  the `device_index` argument is dropped.
- `device_index=device.index` that can be `None`, on a package not known to be for cpu:
  unsafe: `device.index if device.type == "cuda" else -1` (the index is passed only for a CUDA
  device; -1 is the loader's default). A literal `device_index=None` is dropped."""
    invalid = (
        'import torch\nmodel = MyModel().cuda()\nx = torch.randn(2, 10, device="cuda")\n'
        'so = torch._export.aot_compile(model, (x,))\nrunner = torch._export.aot_load(so, "cpu")\n',
        'import torch\nep = torch.export.export(MyModel(), (torch.randn(2, 8),))\n'
        'torch._inductor.aoti_compile_and_package(ep, package_path="m.pt2")\n'
        'runner = torch._inductor.aoti_load_package("m.pt2", device_index=1)\n',
        'import torch\ndef device():\n    if not torch.cuda.is_available():\n        return torch.device("cpu")\n'
        '    return torch.device("cuda", 0)\nrunner = torch._inductor.aoti_load_package(P, device_index=device().index)\n',
    )
    valid = (
        'import torch\nx = torch.randn(2, 10, device="cuda:0")\nso = torch._export.aot_compile(model, (x,))\n'
        'runner = torch._export.aot_load(so, "cuda:1")\n',
        'import torch\ndev = "cuda" if torch.cuda.is_available() else "cpu"\n'
        'x = torch.randn(2, 10, device=dev)\nso = torch._export.aot_compile(model, (x,))\n'
        'runner = torch._export.aot_load(so, "cpu")\n',
        'import torch\ndef load(path, device=torch.device("cuda", 0)):\n'
        '    return torch._inductor.aoti_load_package(path, device_index=device.index)\n',
    )

    def check(self, ctx):
        a = analysis(ctx)
        for load in a.loads():
            art = a.artifact(load)
            if not load.old:
                found = device_index_finding(self, ctx, a, load, art)
                if found is not None:
                    yield found
                continue
            if art is None or art.device is None:
                continue
            compiled = art.device
            at = load.call.start_byte
            if load.old:
                if load.device_node is None:
                    continue
                loaded = a.device_value(load.device_node, at)
                if loaded is None or loaded.type == compiled.type:
                    continue
                if compiled.type == "cuda" and loaded.type == "cpu":
                    effect = f"load fails: {quote('cuda_loaded_on_cpu')}"
                else:
                    effect = "it fails to load"  # cpu -> cuda: not measured yet
                said = art.compiled_for()
                message = f"{said[0].upper()}{said[1:]} loaded on `{loaded.spelled}`: {effect}"
                node = load.device_node
                # a decision, not a repair (compile for the load device, or load and feed on the
                # compile device): offered in the editor, never applied by --fix or fix-all
                fix = Fix(f'Load on "{compiled.spelled}" (and feed it {compiled.type} inputs)',
                          (Edit(node.start_byte, node.end_byte, f'"{compiled.spelled}"'),), Applicability.DISPLAY)
                rel = (artifact_related(art) + related(loaded.evidence, f"loaded on {loaded.type}", skip=(node.start_byte, node.end_byte))
                       + old_load_related(load))
                other = compile_for(ctx, a, load, art, loaded.type)
                yield Finding(self.code, message, node.start_byte, node.end_byte, fix=fix, related=rel,
                              severity=self.severity, alternatives=(other,) if other else ())


def device_index_finding(rule, ctx, a, load, art) -> Finding | None:
    """`device_index=` that fails on some path: `None` on any package (a CPU device's `.index`),
    any index on a package compiled for cpu."""
    if load.index_node is None:
        return None
    node, arg = load.index_node, load.index_arg
    choices = a.index_choices(node, load.call.start_byte)
    nones = [c for c in choices if c is not None and c.known and c.value is None]
    cpu = art is not None and art.device is not None and art.device.type == "cpu"
    ints = [c for c in choices if c is not None and (not c.known or c.value is not None and c.value >= 0)] if cpu else []
    if not nones and not ints:
        return None
    text = snippet(ctx.source.node_text(node))
    literal = node.type in ("integer", "none", "unary_operator")

    def source(c: IndexChoice) -> str:
        if literal or not c.evidence:
            return ""
        ev = c.evidence[0]
        line = f", line {ctx.source.lines.line_of(ev.start) + 1}" if ev.path is None else ""
        what = ev.what if ev.what.count("`") <= 2 else ev.what[:ev.what.index("`", 1) + 1]  # the code, not the why
        return f" ({what}{line})"

    if literal:
        head = f"`device_index={text}`" + (f" on {art.compiled_for()}" if cpu else "")
        message = f"{head}: " + (f"the loader raises {quote('index_none')}" if nones else quote("index_on_cpu"))
    elif not ints:
        message = f"`device_index={text}` can be `None`{source(nones[0])}: the loader raises {quote('index_none')}"
    else:
        parts = ([f"{quote('index_none')} for `None`{source(nones[0])}"] if nones else []) + [
            f"{quote('index_on_cpu')} for an index{source(ints[0])}"]
        message = f"`device_index={text}` on {art.compiled_for()}: " + ", ".join(parts)
    rel = artifact_related(art) if art is not None and art.device is not None else []
    for c in nones[:1] + ints[:1]:
        if not literal:
            role = "`None` here" if c in nones else "an index here"
            rel += related(c.evidence[:1], role)
    return Finding(rule.code, message, arg.start_byte, arg.end_byte, fix=_index_fix(ctx, node, arg, cpu),
                   related=rel, severity=rule.severity)


def _index_fix(ctx, node, arg, cpu: bool) -> Fix | None:
    """A cpu package takes no index: drop it. Else a device's `.index` is passed only for CUDA."""
    if not cpu and node.type == "attribute" and _plain_chain(node.child_by_field_name("object")):
        obj = ctx.source.node_text(node.child_by_field_name("object"))
        new = f'{obj}.index if {obj}.type == "cuda" else -1'
        return Fix("Pass device_index only for a CUDA device (-1, the default, otherwise)",
                   (Edit(node.start_byte, node.end_byte, new),), Applicability.UNSAFE)
    if cpu or node.type == "none":
        start, end = delete_argument(ctx.source.data, arg)
        return Fix("Drop device_index", (Edit(start, end, ""),), Applicability.UNSAFE)
    return None


def _plain_chain(node) -> bool:
    """`device`, `self.device`: read twice by the fix, so no call may hide inside."""
    return node is not None and (node.type == "identifier" or node.type == "attribute"
                                 and _plain_chain(node.child_by_field_name("object")))


def old_load_related(load) -> list[Related]:
    """The deprecated loader behind a device finding, named (AOTI002 sorts below the errors it
    causes in a Problems list): its migration decides the device too."""
    if not load.old:
        return []
    func = load.call.child_by_field_name("function") or load.call
    name = func.text.decode("utf-8", "replace")
    return [Related(func.start_byte, func.end_byte, f"loaded with the deprecated `{name}` (AOTI002): "
                    "its replacement, aoti_load_package, loads on the device the package was compiled for")]


def compile_for(ctx, a, load, art, target: str) -> Fix | None:
    """The other way out of a load on another device: compile for the load device. Each place
    that sets the compile device (the example inputs' `device=`, `.cuda()`, `.to("cuda")`, and
    the model's) names `target` instead; None when one of them is spelt another way."""
    if art.origin == "disk" or art.device is None:
        return None
    evidence = list(art.device.evidence)
    if art.origin == "compile":
        site = a.compile_at(art.site.start)
        model = a.tensor_device(site.model, site.model.start_byte) if site is not None and site.model is not None else None
        if model is not None and model.evidence:
            evidence.append(model.evidence[0])
    edits, here = [], os.path.abspath(ctx.source.path)
    for ev in evidence:
        path = None if ev.path is None or os.path.abspath(ev.path) == here else os.path.abspath(ev.path)
        data = ctx.source.data if path is None else (ctx.project.context(path).source.data
                                                     if ctx.project is not None and ctx.project.context(path) else None)
        if data is None:
            return None
        text = data[ev.start:ev.end].decode("utf-8", "replace")
        if (m := _DEVICE_ARG.fullmatch(text)) or (m := _TO.fullmatch(text)):
            new = text[:m.start(2)] + target + text[m.end(3) if m.group(3) else m.end(2):]
        elif text.startswith("cuda(") and target == "cpu":
            new = "cpu()"
        else:
            return None
        edits.append(Edit(ev.start, ev.end, new, path))
    if not edits:
        return None
    return Fix(f"Compile it for {target} (its example inputs and model on {target})", tuple(sorted(set(edits), key=lambda e: (e.path or "", e.start))),
               Applicability.DISPLAY)


RULE = LoadDeviceMismatch()
