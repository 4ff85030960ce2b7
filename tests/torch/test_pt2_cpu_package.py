"""A real CPU package compiled with torch 2.13: aoti-lsp reads its device without torch, and
what AOTI101 / AOTI103 say about it is what torch does. One compile (7-25 s on 2 cores)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.pt2 import read_package
from aoti_lsp.rules import rule_by_code
from aoti_lsp.analysis.source import Source

pytestmark = pytest.mark.torch
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(scope="module")
def package(torch, tmp_path_factory) -> Path:
    """`x * 2 + 1` compiled for cpu from a (2, 8) float32 example, no dynamic dims."""

    class Affine(torch.nn.Module):
        def forward(self, x):
            return x * 2 + 1

    path = tmp_path_factory.mktemp("pkg") / "affine.pt2"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TORCHINDUCTOR_CACHE_DIR", str(REPO / ".cache" / "inductor"))
        ep = torch.export.export(Affine(), (torch.randn(2, 8),))
        out = torch._inductor.aoti_compile_and_package(ep, package_path=str(path))
    assert isinstance(out, str)  # the path alone (torch 2.1's old compile returned (path, program): migrate.py)
    return Path(out)


def findings(text: str, path: str, code: str):
    return [f for f in analyze(Source.from_text(text, path), Config()).findings if f.code == code]


def test_device_read_without_torch(package):
    info = read_package(package)
    assert info is not None
    device, entry = info.device()
    assert device == "cpu"
    assert entry.endswith("wrapper_metadata.json") and "/data/aotinductor/model/" in entry
    # and in a fresh interpreter, without importing torch at all
    code = ("import sys; from aoti_lsp.analysis.pt2 import read_package; d = read_package(sys.argv[1]).device()[0]; "
            "assert 'torch' not in sys.modules; print(d)")
    res = subprocess.run([sys.executable, "-c", code, str(package)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "cpu"


def test_device_index_on_a_cpu_package(torch, package, tmp_path):
    for index in (0, 1):  # AOTI101 says "any device_index": 0 fails too
        with pytest.raises(RuntimeError, match="Incorrect device passed to aoti_runner_cpu"):
            torch._inductor.aoti_load_package(str(package), device_index=index)
    torch._inductor.aoti_load_package(str(package), device_index=-1)  # the default is fine
    # AOTI101 finds it from the package on disk alone (no compile call in the file)
    app = tmp_path / "app.py"
    text = f"import torch\nrunner = torch._inductor.aoti_load_package({str(package)!r}, device_index=0)\n"
    (found,) = findings(text, str(app), "AOTI101")
    assert found.message == "`device_index=0` on the package `affine.pt2` compiled for `cpu`: `Incorrect device`"
    assert "Incorrect device passed to aoti_runner_cpu" in rule_by_code("AOTI101").explanation  # the why: rule page
    assert found.related[0].path == str(package.resolve())


def test_static_dim_and_dtype_mismatch_are_silent(torch, package, tmp_path):
    runner = torch._inductor.aoti_load_package(str(package))
    x = torch.randn(3, 8)
    out = runner(x)  # no error: the compiled code assumes dim 0 is 2
    assert out.shape == (2, 8) and torch.allclose(out, x[:2] * 2 + 1)
    y = torch.randn(2, 8, dtype=torch.float64)
    out = runner(y)  # no error: float64 memory read as float32
    assert out.dtype == torch.float32 and not torch.allclose(out.double(), y * 2 + 1)
    # AOTI_RUNTIME_CHECK_INPUTS=1, read at run time, in the process that calls the model
    code = "import sys, torch; torch._inductor.aoti_load_package(sys.argv[1])(torch.randn(3, 8))"
    res = subprocess.run([sys.executable, "-c", code, str(package)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "AOTI_RUNTIME_CHECK_INPUTS": "1"})
    assert res.returncode != 0
    assert "unmatched dim value at 0, expected: 2, but got: 3" in res.stderr
    # and AOTI103 reports both calls when the compile site is in the file
    text = ("import torch\n"
            "ep = torch.export.export(Affine(), (torch.randn(2, 8),))\n"
            f"path = torch._inductor.aoti_compile_and_package(ep, package_path={str(package)!r})\n"
            "runner = torch._inductor.aoti_load_package(path)\n"
            "runner(torch.randn(3, 8))\n"
            "runner(torch.randn(2, 8, dtype=torch.float64))\n")
    shape, dtype = findings(text, str(tmp_path / "serve.py"), "AOTI103")
    assert shape.message == "Input 0 has shape (3, 8), compiled for (2, 8) with dim 0 static: silently accepted (unchecked)"
    assert dtype.message == "Input 0 is float64, compiled for float32: silently accepted (unchecked)"
    assert "unmatched dim value at 1" in rule_by_code("AOTI103").explanation and \
        "`AOTI_RUNTIME_CHECK_INPUTS=1`" in rule_by_code("AOTI103").explanation


def test_the_runner_flattens_its_arguments_and_aoti103_reads_them_so(torch, package, tmp_path):
    """A one-tensor tuple, a list or `*xs` is the tensor itself to a loaded package (pytree
    leaves): the PyTorch recipe's `model(example_inputs)`. AOTI103 reads them so."""
    runner = torch._inductor.aoti_load_package(str(package))
    x = torch.randn(3, 8)
    for out in (runner((x,)), runner([x]), runner(*(x,))):
        assert out.shape == (2, 8) and torch.allclose(out, x[:2] * 2 + 1)  # read as the static (2, 8)
    text = ("import torch\n"
            "ep = torch.export.export(Affine(), (torch.randn(2, 8),))\n"
            f"path = torch._inductor.aoti_compile_and_package(ep, package_path={str(package)!r})\n"
            "runner = torch._inductor.aoti_load_package(path)\n"
            "xs = (torch.randn(3, 8),)\n"
            "runner(xs)\nrunner([torch.randn(3, 8)])\nrunner(*xs)\n")
    found = findings(text, str(tmp_path / "serve.py"), "AOTI103")
    assert [f.message.split(":")[0] for f in found] == ["Input 0 has shape (3, 8), compiled for (2, 8) with dim 0 static"] * 3


def test_loaded_packages_unpack_into_the_session_temp_folder(torch, package):
    """torch unpacks each loaded package into `$TMPDIR/aotinductor_*`, removed when the runner
    is freed, never when the process crashes (the segfault tests): tests/conftest.py gives the
    session a private TMPDIR, removed at the end."""
    private = os.environ.get("AOTI_TESTS_TMPDIR")
    assert private and os.environ["TMPDIR"] == private
    before = {p.name for p in Path(private).glob("aotinductor_*")}
    runner = torch._inductor.aoti_load_package(str(package))
    assert {p.name for p in Path(private).glob("aotinductor_*")} - before
    del runner
