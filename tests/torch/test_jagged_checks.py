"""What torch 2.13 (CPU) does with the checks people put in an exported forward, measured
with export + aoti_compile_and_package + a run of the package on empty input; and a bag's
`values[-1:]` (the values of a jagged pair), which segfaults there and AOTI201 now reports.

AOTI202's messages say what is measured here: a check on a traced size (`torch._check`,
`assert`) is gone from the package; `torch._assert_async` stays in the exported graph but
the package never runs it; a check on a data-dependent value (`.item()`) is kept as a
run-time assertion (`Expected u0 >= 1 but received 0`), and AOTI202 does not report those.

One subprocess builds the nine packages (3 min alone on 2 cores with a warm cache, up to
17 min when the cores are shared); each package runs in its own subprocess, so a segfault
fails one assertion, not the session.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.source import Source

pytestmark = pytest.mark.torch

MODELS = '''\
import torch
from torch.export import Dim


def tail(values, lengths):
    return values.sum(0) + lengths.sum().to(values.dtype)


class CheckSize(torch.nn.Module):
    def forward(self, values, lengths):
        torch._check(lengths.shape[0] > 0)
        return tail(values, lengths)


class CheckRelation(torch.nn.Module):
    def forward(self, values, lengths):
        torch._check(values.shape[0] >= lengths.shape[0])
        return tail(values, lengths)


class CheckItem(torch.nn.Module):
    def forward(self, values, lengths):
        n = lengths.sum().item()
        torch._check(n > 0)
        return tail(values, lengths)


class CheckIsSize(torch.nn.Module):
    def forward(self, values, lengths):
        n = lengths.sum().item()
        torch._check_is_size(n)
        return tail(values, lengths)


class AssertAsync(torch.nn.Module):
    def forward(self, values, lengths):
        torch._assert_async(lengths.sum() > 0)
        return tail(values, lengths)


class AssertAsyncLast(torch.nn.Module):
    def forward(self, values, lengths):
        torch._assert_async(torch.cumsum(lengths, 0)[-1] == values.shape[0])
        return tail(values, lengths)


class AssertSize(torch.nn.Module):
    def forward(self, values, lengths):
        assert lengths.shape[0] > 0
        return tail(values, lengths)


class AssertItem(torch.nn.Module):
    def forward(self, values, lengths):
        assert lengths.sum().item() > 0
        return tail(values, lengths)


class BagTail(torch.nn.Module):
    def forward(self, values, lengths):
        return values[-1:].sum(0) * lengths.shape[0]


NAMES = ["CheckSize", "CheckRelation", "CheckItem", "CheckIsSize", "AssertAsync", "AssertAsyncLast",
         "AssertSize", "AssertItem", "BagTail"]
DYNAMIC = {"values": {0: Dim("N", min=0)}, "lengths": {0: Dim("B", min=0)}}


def build():
    out = {}
    for name in NAMES:
        ep = torch.export.export(globals()[name](), (torch.randn(5, 4), torch.tensor([2, 3])), dynamic_shapes=DYNAMIC)
        names = {getattr(n.target, "__name__", "").split(".")[0] for n in ep.graph.nodes if n.op == "call_function"}
        ops = sorted(x for x in names if "assert" in x and "metadata" not in x)
        torch._inductor.aoti_compile_and_package(ep, package_path=f"{name}.pt2")
        out[name] = ops
    return out
'''

CASES = {
    "full": "(torch.randn(5, 4), torch.tensor([2, 3]))",
    "empty": "(torch.empty(0, 4), torch.empty(0, dtype=torch.long))",
    "no_values": "(torch.empty(0, 4), torch.zeros(2, dtype=torch.long))",
}

RUN = textwrap.dedent('''\
    import json, sys, torch
    run = torch._inductor.aoti_load_package(sys.argv[1] + ".pt2")
    try:
        out = run(*{case})
        print(json.dumps({{"ok": list(out.shape)}}))
    except RuntimeError as e:
        print(json.dumps({{"error": str(e).splitlines()[0]}}))
''')


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    pytest.importorskip("torch")
    cache = Path(__file__).resolve().parents[2] / ".cache" / "inductor"
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": os.environ.get("TORCHINDUCTOR_CACHE_DIR", str(cache)),
           "PYTHONWARNINGS": "ignore"}
    root = tmp_path_factory.mktemp("checks")
    (root / "models.py").write_text(MODELS)
    build = subprocess.run([sys.executable, "-c", "import json, models; print(json.dumps(models.build()))"],
                           cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stderr[-3000:]
    graph_ops = json.loads(build.stdout.strip().splitlines()[-1])

    def run(name: str, case: str):
        script = root / f"run_{case}.py"
        script.write_text(RUN.format(case=CASES[case]))
        res = subprocess.run([sys.executable, str(script), name], cwd=root, env=env, capture_output=True,
                             text=True, timeout=300)
        if res.returncode == -signal.SIGSEGV:
            return "segfault"
        assert res.returncode == 0, res.stderr[-2000:]
        return json.loads(res.stdout.strip().splitlines()[-1])

    return graph_ops, run


@pytest.mark.parametrize("name", ["CheckSize", "CheckRelation", "AssertSize"])
def test_checks_on_traced_sizes_are_gone_from_the_package(measured, name):
    graph_ops, run = measured
    assert graph_ops[name] == []  # not even in the exported graph
    assert run(name, "empty") == {"ok": [4]}
    if name == "CheckRelation":  # N = 0 < B = 2 violates it: not checked either
        assert run(name, "no_values") == {"ok": [4]}


@pytest.mark.parametrize("name", ["CheckItem", "AssertItem"])
def test_checks_on_data_dependent_values_are_kept_as_run_time_assertions(measured, name):
    graph_ops, run = measured
    assert graph_ops[name] == ["_assert_scalar"]
    assert run(name, "full") == {"ok": [4]}
    assert run(name, "empty") == {"error": "Expected u0 >= 1 but received 0"}


def test_check_is_size_is_kept_and_true_on_empty_input(measured):
    graph_ops, run = measured
    assert graph_ops["CheckIsSize"] == ["_assert_scalar"]  # u0 >= 0
    assert run("CheckIsSize", "empty") == {"ok": [4]}


@pytest.mark.parametrize("name", ["AssertAsync", "AssertAsyncLast"])
def test_assert_async_stays_in_the_graph_but_the_package_never_runs_it(measured, name):
    import torch

    graph_ops, run = measured
    assert graph_ops[name] == ["_assert_async"]
    with pytest.raises(RuntimeError):  # eager on CPU: it does raise
        torch._assert_async(torch.tensor(False))
    # not even the out-of-bounds `cumsum(lengths)[-1]` that only feeds it is run: no crash
    assert run(name, "empty") == {"ok": [4]}


def test_values_tail_of_a_bag_segfaults_and_is_reported(measured):
    _, run = measured
    assert run("BagTail", "full") == {"ok": [4]}
    assert run("BagTail", "empty") == "segfault"
    # AOTI201 sees it (the values of a jagged pair are jagged), and only it in these models
    src = MODELS + "\n\nrunner = torch._inductor.aoti_load_package('BagTail.pt2')\n"
    found = [(f.code, f.message) for f in analyze(Source.from_text(src, "models.py"), Config()).findings
             if f.code in ("AOTI201", "AOTI202")]
    assert found == [("AOTI201", "`values[-1:]` slices out of bounds when jagged input `values` is empty")]


MAKE_FX = '''
import json
import torch
from torch.fx.experimental.proxy_tensor import make_fx


class Pool(torch.nn.Module):
    def forward(self, values, lengths):
        if lengths.numel() == 0:
            return values.new_zeros(values.shape[1:])
        return values.sum(0) / lengths.sum()


args = (torch.randn(4, 8), torch.tensor([1, 3]))
fx = make_fx(Pool(), tracing_mode="symbolic")(*args)
empty = (torch.randn(0, 8), torch.tensor([], dtype=torch.long))
print(json.dumps({"code": fx.code, "eager": Pool()(*empty).tolist(), "graph": [str(v) for v in fx(*empty).tolist()]}))
'''


def test_make_fx_traces_an_empty_input_guard_away_and_aoti202_says_so(tmp_path, torch_env):
    """mattersim, nequip and aoti_mlip trace their model with make_fx, then export the graph: the
    `if lengths.numel() == 0` branch is decided at the example (no compile needed to see it: the
    graph the package is built from has no test, and on empty input gives nan where the model
    gives zeros). AOTI202 reports the guard of a class make_fx traces, naming make_fx."""
    from conftest import run_python

    res = run_python(["-c", MAKE_FX], torch_env, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    seen = json.loads(res.stdout.strip().splitlines()[-1])
    assert "numel" not in seen["code"] and "eq" not in seen["code"]
    assert seen["eager"] == [0.0] * 8 and seen["graph"] == ["nan"] * 8
    source = MAKE_FX.split("empty =")[0] + "ep = torch.export.export(fx, args)\n" \
        "torch._inductor.aoti_compile_and_package(ep, package_path='pool.pt2')\n"
    found = analyze(Source(source.encode(), str(tmp_path / "m.py")), Config()).findings
    assert [f.code for f in found] == ["AOTI202"] and found[0].message.startswith("make_fx's trace drops")
