"""Device and input shapes of real code (a sweep of public code, stop 35). The PyTorch recipe
times `model(example_inputs)`, a one-tensor tuple, inside `timed(lambda: ...)` while both names
are bound more than once in the script. A loaded package flattens its arguments (pytree leaves),
and a lambda handed to a call runs in that call. Look-alikes in our own words; unsafe and safe
twins. No torch here: tests/torch checks what the package does."""

from __future__ import annotations

from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.source import Source
from aoti_lsp.project.config import Config

HEAD = """import torch

with torch.inference_mode():
    example = (torch.randn(2, 3, 32, 32),)
    ep = torch.export.export(Net(), example)
    torch._inductor.aoti_compile_and_package(ep, package_path="net.pt2")


def measure(fn):
    return fn()


"""


def found(body: str) -> list[tuple[str, str, str]]:
    text = HEAD + body
    out = analyze(Source.from_text(text, "bench.py"), Config()).findings
    data = text.encode()
    return [(f.code, data[f.start:f.end].decode(), f.message) for f in out]


def aoti103(body: str) -> list[tuple[str, str]]:
    return [(text, message.split(":")[0]) for code, text, message in found(body) if code == "AOTI103"]


SMALL = "Input 0 has shape (1, 3, 32, 32), compiled for (2, 3, 32, 32) with dim 0 static"


def test_a_tuple_of_inputs_is_flattened_as_the_runner_does():
    assert aoti103('net = torch._inductor.aoti_load_package("net.pt2")\nnet((torch.randn(1, 3, 32, 32),))\n') == \
        [("(torch.randn(1, 3, 32, 32),)", SMALL)]
    assert aoti103('net = torch._inductor.aoti_load_package("net.pt2")\nnet([torch.randn(1, 3, 32, 32)])\n') == \
        [("[torch.randn(1, 3, 32, 32)]", SMALL)]
    body = 'net = torch._inductor.aoti_load_package("net.pt2")\nxs = (torch.randn(1, 3, 32, 32),)\n'
    assert aoti103(body + "net(xs)\n") == [("xs", SMALL)]
    assert aoti103(body + "net(*xs)\n") == [("*xs", SMALL)]
    # safe twins: the compiled shape, in the same wrappings
    ok = 'net = torch._inductor.aoti_load_package("net.pt2")\nys = (torch.randn(2, 3, 32, 32),)\n'
    assert aoti103(ok + "net(ys)\nnet(*ys)\nnet((torch.randn(2, 3, 32, 32),))\n") == []


def test_an_unknown_unpacked_input_stops_the_count():
    # `*rest` may hold any number of tensors: the input after it is not known to be input 1
    body = ('net = torch._inductor.aoti_load_package("net.pt2")\n'
            "def serve(rest):\n    return net(*rest, torch.randn(1, 3, 32, 32))\n")
    assert aoti103(body) == []


def test_a_lambda_handed_to_a_call_reads_the_names_that_reach_the_call():
    # both names bound twice in the script (the recipe's shape): the lambda runs inside measure()
    body = ('net = torch._inductor.aoti_load_package("net.pt2")\n'
            "example = (torch.randn(1, 3, 32, 32),)\n"
            "measure(lambda: net(example))\n"
            "net = Net()\n"
            "example = torch.randn(5, 3, 32, 32)\n"
            "measure(lambda: net(example))\n")
    assert aoti103(body) == [("example", SMALL)]  # the second lambda calls the eager module: nothing to say


def test_a_lambda_kept_for_later_reads_whichever_binding_is_live_then():
    # stored, not handed to a call: it runs after `example` is bound again (batch 2): no finding
    body = ('net = torch._inductor.aoti_load_package("net.pt2")\n'
            "example = (torch.randn(1, 3, 32, 32),)\n"
            "run = lambda: net(example)\n"
            "example = (torch.randn(2, 3, 32, 32),)\n"
            "run()\n")
    assert aoti103(body) == []


ACCEL = """import torch
from torch.export import Dim


class Masks(torch.nn.Module):
    def forward(self, rows):
        return torch.arange(rows.shape[0] * 2, device={where})


gpu = torch.device("cuda", 1)
sizes = (torch.empty(3, dtype=torch.int32),)  # a stand-in: only its size is read
ep = torch.export.export(Masks(), sizes, dynamic_shapes=({{0: Dim.DYNAMIC}},))
torch._inductor.aoti_compile_and_package(ep, package_path="masks.pt2")
masks = torch._inductor.aoti_load_package("masks.pt2", device_index=gpu.index)
"""


def test_cpu_stand_ins_do_not_make_a_cpu_package_when_the_module_names_an_accelerator():
    """attention-gym's shape: CPU example inputs used for their sizes, the module's own tensors
    made on the accelerator. Measured on an H200 (torch 2.11+cu130, `torch.arange(n,
    device=torch.accelerator.current_accelerator())` from a CPU int32 stand-in): the package
    records "cuda", loads with and without device_index=0 and runs on CPU inputs; its twin made
    where its inputs are records "cpu", and device_index=0 raises `Incorrect device passed to
    aoti_runner_cpu`. AOTI101 said "compiled for cpu" of the first."""
    text = ACCEL.format(where="torch.accelerator.current_accelerator()")
    assert [f.code for f in analyze(Source.from_text(text, "masks.py"), Config()).findings] == []
    # the twin whose module stays where its inputs are: a CPU package, and the index is for CUDA
    text = ACCEL.format(where="rows.device")
    assert [f.code for f in analyze(Source.from_text(text, "masks.py"), Config()).findings] == ["AOTI101"]


CUDA = """import torch
ep = torch.export.export(Net().cuda(), (torch.randn(2, 8, device="cuda"),))
runner = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep, package_path="n.pt2"))
"""


def test_a_cpu_input_inside_a_tuple_is_found_where_it_is_passed_and_moved_where_it_is_made():
    body = ("xs = (torch.randn(2, 8),)\n"
            "runner(xs)\n"
            "runner(*xs)\n"
            "runner((torch.randn(2, 8),))\n"
            "runner(torch.randn(2, 8, device='cuda'), extra=[torch.ones(3)])\n")
    text = CUDA + body
    found = [f for f in analyze(Source.from_text(text, "serve.py"), Config()).findings if f.code == "AOTI102"]
    data = text.encode()
    assert [data[f.start:f.end].decode() for f in found] == ["xs", "*xs", "torch.randn(2, 8)", "torch.ones(3)"]
    made = data.index(b"torch.randn(2, 8)")  # the first two are fixed where xs is made
    assert [(e.start, e.text) for e in found[0].fix.edits] == [(made + len("torch.randn(2, 8"), ', device="cuda"')]
    assert found[0].fix.edits == found[1].fix.edits
    # safe twins: the tensors on the package's device, in the same wrappings
    ok = CUDA + "ys = (torch.randn(2, 8, device='cuda'),)\nrunner(ys)\nrunner(*ys)\nrunner([torch.randn(2, 8).cuda()])\n"
    assert [f.code for f in analyze(Source.from_text(ok, "serve.py"), Config()).findings] == []


def test_a_cpu_flag_traced_beside_a_cuda_tensor_is_where_the_model_wants_it():
    """A PyTorch issue's reproduction: `(torch.rand(28, 28, device="cuda"), torch.tensor(1))`
    exported, compiled, loaded with device="cuda" and called with `*inputs`: the flag was a CPU
    tensor when traced (`.item()` reads it), so a CPU flag is no mismatch."""
    text = ("import torch\n"
            "inputs = (torch.rand(28, 28, device='cuda'), torch.tensor(1))\n"
            "model = M().cuda()\n"
            "ep = torch.export.export(model, inputs, strict=False)\n"
            "path = torch._inductor.aot_compile(ep.module(), inputs)\n"
            "loaded = torch._export.aot_load(path, device='cuda')\n"
            "loaded(*inputs)\n"
            "loaded(torch.rand(28, 28, device='cuda'), torch.tensor(0))\n")
    assert [f.code for f in analyze(Source.from_text(text, "repro.py"), Config()).findings] == ["AOTI001", "AOTI002"]
    # the twin traced with both on CUDA: a CPU flag is on the wrong device
    cuda = text.replace("torch.tensor(1))\n", "torch.tensor(1, device='cuda'))\n", 1)
    assert [f.code for f in analyze(Source.from_text(cuda, "repro.py"), Config()).findings] == \
        ["AOTI001", "AOTI002", "AOTI102"]


NAMED = """import torch
from torch.export import Dim


class Net(torch.nn.Module):
    def forward(self, x, y{extra}):
        return x + y.sum()


batch = Dim("batch", min=2, max=32)
ep = torch.export.export(Net(), (torch.randn(4, 8), torch.randn(3)), dynamic_shapes={spec})
net = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))
"""


def named(spec: str, calls: str, extra: str = "") -> list[tuple[str, str]]:
    text = NAMED.format(spec=spec, extra=extra) + calls
    data = text.encode()
    return [(data[f.start:f.end].decode(), f.message.split(":")[0])
            for f in analyze(Source.from_text(text, "named.py"), Config()).findings if f.code == "AOTI103"]


def test_dynamic_shapes_keyed_by_the_forwards_parameter_names():
    """torch's own recipes key `dynamic_shapes` by argument name (`{"x": {0: batch}}`): read by
    the forward's parameters, an input left out is static (it compared rank and dtype only)."""
    calls = "net(torch.randn(1, 8), torch.randn(3))\nnet(torch.randn(6, 8), torch.randn(5))\n"
    assert named('{"x": {0: batch}}', calls) == [
        ("torch.randn(1, 8)", 'Input 0 has size 1 on dim 0, below `min=2` of `Dim("batch", min=2, max=32)`'),
        ("torch.randn(5)", "Input 1 has shape (5,), compiled for (3,) with dim 0 static")]
    # twins: the same ranges as a tuple; both dims dynamic; inside the ranges
    assert named('({0: batch}, None)', calls) == named('{"x": {0: batch}}', calls)
    assert named('{"x": {0: batch}, "y": {0: Dim("n")}}', calls) == [
        ("torch.randn(1, 8)", 'Input 0 has size 1 on dim 0, below `min=2` of `Dim("batch", min=2, max=32)`')]
    assert named('{"x": {0: batch}}', "net(torch.randn(6, 8), torch.randn(3))\n") == []


def test_dynamic_shapes_keyed_by_a_name_the_forward_does_not_take_positionally_are_not_read():
    # `*rest`, a keyword-only input, a class this file does not define: rank and dtype only, as before
    calls = "net(torch.randn(6, 8), torch.randn(5))\n"
    assert named('{"z": {0: batch}}', calls, extra=", *, z=None") == []
    text = NAMED.format(spec='{"x": {0: batch}}', extra="").replace("class Net(torch.nn.Module)", "class Other(torch.nn.Module)")
    text = "from models import Net\n" + text + calls
    assert [f for f in analyze(Source.from_text(text, "named.py"), Config()).findings if f.code == "AOTI103"] == []


def test_dynamic_shapes_keyed_by_name_read_across_a_positional_only_marker():
    """`def forward(self, x, /, y)`: both are positional (names.positional_names, the scope's own
    parameter reading); the reading stopped at `/` and left the dict unread."""
    calls = "net(torch.randn(1, 8), torch.randn(3))\n"
    text = NAMED.format(spec='{"y": {0: Dim("n")}, "x": {0: batch}}', extra="").replace("(self, x, y", "(self, x, /, y")
    found = [f.message.split(":")[0] for f in analyze(Source.from_text(text + calls, "named.py"), Config()).findings
             if f.code == "AOTI103"]
    assert found == ['Input 0 has size 1 on dim 0, below `min=2` of `Dim("batch", min=2, max=32)`']
