"""`aoti-lsp explain` / `inspect` on packages that torch 2.13 compiles here (CPU) from the failing
jagged models of tests/packages/cuda/models.py, run on empty input in a subprocess: the real
error text is the input. One compile process, two models (LastItemGather, TotalFromLastOffset);
7-25 s per model with the project's TORCHINDUCTOR_CACHE_DIR."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from aoti_lsp.triage import explain, inspect_pkg
from pkgs import PACKAGES

pytestmark = pytest.mark.torch
REPO = Path(__file__).resolve().parents[2]
MODELS = PACKAGES / "cuda" / "models.py"

COMPILE = """
import sys, torch
from torch.export import Dim
sys.path.insert(0, sys.argv[1])
from models import VARIANTS, example
for name in ("LastItemGather", "TotalFromLastOffset"):
    ep = torch.export.export(VARIANTS[name]().eval(), example("cpu"), dynamic_shapes=({0: Dim.AUTO}, {0: Dim.AUTO}))
    torch._inductor.aoti_compile_and_package(ep, package_path=f"{sys.argv[2]}/{name}.pt2")
"""
RUN = """
import sys, torch
sys.path.insert(0, sys.argv[1])
from models import cases
runner = torch._inductor.aoti_load_package(sys.argv[2])
print(runner(*cases("cpu")[sys.argv[3]]))
"""


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("pkgs")
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(REPO / ".cache" / "inductor"), "PYTHONWARNINGS": "ignore"}
    res = subprocess.run([sys.executable, "-c", COMPILE, str(MODELS.parent), str(out)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return out


def run(package: Path, case: str, **env):
    full = {**os.environ, "PYTHONWARNINGS": "ignore", **env}
    return subprocess.run([sys.executable, "-c", RUN, str(MODELS.parent), str(package), case], env=full,
                          capture_output=True, text=True, timeout=300)


def test_index_error_of_a_real_package_is_traced_to_forward(packages):
    pkg = packages / "LastItemGather.pt2"
    res = run(pkg, "zero_lengths")  # values (0, 4), lengths [0, 0]: the gather index is out of range
    assert res.returncode != 0
    assert "index out of bounds: 0 <= tmp" in res.stderr and "Exception raised from cpp_fused_" in res.stderr
    (e,) = explain.explain(res.stderr, str(pkg), [str(MODELS)])
    assert e.kind == "index-out-of-bounds"
    steps = [s.text for s in e.trace]
    assert any(s.startswith("the call passes `s") for s in steps)
    (inp,) = [s for s in e.trace if s.text.startswith("input 0, dimension 0")]
    assert "`values` of forward" in inp.text
    assert {s.line for s in e.trace if s.path == str(MODELS) and s.line != 6} == {7, 9, 10}
    # the kernel line the log names is the assertion inside the package
    kernel = next(s for s in e.trace if "asserts" in s.text)
    assert f".kernel.cpp:{kernel.line}" in res.stderr
    # CLI, from stdin, as a user pastes it
    cli = subprocess.run([sys.executable, "-m", "aoti_lsp", "explain", "-", "--package", str(pkg), "--source", str(MODELS)],
                         input=res.stderr, capture_output=True, text=True, timeout=60)
    assert cli.returncode == 1 and f"{MODELS}:10: index:" in cli.stdout


def test_runtime_check_fix_turns_the_crash_into_the_explained_message(packages):
    pkg = packages / "LastItemGather.pt2"
    res = run(pkg, "zero_lengths", AOTI_RUNTIME_CHECK_INPUTS="1")
    assert "input_handles[0]: dim value is too small at 0, expected it to be >= 2, but got: 0" in res.stderr
    (e,) = explain.explain(res.stderr, str(pkg), [str(MODELS)])
    assert e.kind == "dim-too-small" and "input 0, dimension 0 is 0" in e.cause
    assert any("`values` of forward" in s.text for s in e.trace)
    assert run(pkg, "normal").returncode == 0


def test_segfault_gets_the_checklist(packages):
    pkg = packages / "TotalFromLastOffset.pt2"
    res = run(pkg, "empty")  # offsets[-1] of an empty batch: the kernel reads before the buffer
    assert res.returncode in (-signal.SIGSEGV, 128 + signal.SIGSEGV), (res.returncode, res.stderr[-2000:])
    log = res.stderr or f"Segmentation fault (exit code {res.returncode})"
    found = explain.explain(log + f"\nexit code {res.returncode}\n", str(pkg))
    assert [e.kind for e in found] == ["crash"]
    assert any("is dynamic" in s.text for s in found[0].trace)


def test_inspect_real_cpu_package(packages):
    info = inspect_pkg.inspect(str(packages / "LastItemGather.pt2"))
    (m,) = info["models"]
    assert m["device"] == "cpu" and m["cpu_isa"] is not None
    values, lengths = m["inputs"]
    assert values["dtype"] == "float32" and values["dims"][1]["size"] == 4
    assert values["dims"][0]["min"] == 2 and lengths["dims"][0]["min"] == 2
    assert any(k.startswith("cpp_fused_") for k in m["kernels"])
