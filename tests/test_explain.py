"""`aoti-lsp explain` and `aoti-lsp inspect` on real generated code: CUDA packages (H200, torch 2.11)
and a CPU package (torch 2.13), zipped from tests/packages/; the whole CUDA package when
../shared is there."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from aoti_lsp.triage import explain, inspect_pkg
from aoti_lsp.analysis import pt2
from pkgs import PACKAGES, SHARED_PT2, build

CUDA_LOG = ("/tmp/torchinductor_root/ab/cabc.py:37: unknown: block: [0,0,0], thread: [5,0,0] "
            "Assertion `index out of bounds: 0 <= tmp9 < ks0` failed.\n")
MODELS = PACKAGES / "cuda" / "models.py"


@pytest.fixture
def cuda_pkg(tmp_path):
    (tmp_path / "cuda").mkdir()
    return build(PACKAGES / "cuda" / "LastItemGather", tmp_path / "cuda" / "LastItemGather.pt2")


@pytest.fixture
def cpu_pkg(tmp_path):
    (tmp_path / "cpu").mkdir()
    return build(PACKAGES / "cpu" / "LastItemGather", tmp_path / "cpu" / "LastItemGather.pt2")


def texts(e):
    return [s.text for s in e.trace]


def check_last_item_gather_trace(e, ks, arg_sym, kernel_prefix):
    t = texts(e)
    assert e.kind == "index-out-of-bounds"
    assert any(x.startswith(f"kernel `{kernel_prefix}") and "asserts" in x for x in t)
    assert any(f"`{ks}` is parameter" in x for x in t)
    assert f"the call passes `{arg_sym}` as `{ks}`" in t
    assert f"`int64_t {arg_sym} = arg0_1_size[0]`" in t
    (inp,) = [s for s in e.trace if s.text.startswith("input 0, dimension 0")]
    assert "`values` of forward" in inp.text and inp.path == str(MODELS) and inp.line == 6
    lines = {s.line: s.text for s in e.trace if s.path == str(MODELS) and s.line != 6}
    assert sorted(lines) == [7, 9, 10]  # cumsum (feeds the kernel), torch.where / zeros_like, values[idx]
    assert "index" in lines[10] and "cumsum" in lines[7]
    assert any(x.startswith("its input `buf") and x.endswith("Source Nodes: cumsum") for x in t)
    assert any("lower bound 2" in x for x in t)
    assert any("AOTI_RUNTIME_CHECK_INPUTS=1" in f for f in e.fixes)
    assert any("caller" in f for f in e.fixes)


def test_cuda_triton_assert_traced_to_the_python_line(cuda_pkg):
    (e,) = explain.explain(CUDA_LOG, str(cuda_pkg), [str(MODELS)])
    check_last_item_gather_trace(e, "ks0", "s59", "triton_poi_fused_")
    assert "thread [5,0,0]" in e.trace[0].text
    (src,) = [s for s in e.trace if s.text.startswith("Source Nodes")]
    assert "where, index" in src.text
    # the kernel and its call are located inside the package's wrapper.cpp
    kernel = next(s for s in e.trace if "asserts" in s.text)
    assert kernel.path.endswith("!LastItemGather/data/aotinductor/model/cw.wrapper.cpp")
    wrapper = (PACKAGES / "cuda" / "LastItemGather" / "wrapper.cpp").read_text().splitlines()
    assert 'tl.device_assert(((0 <= tmp9) & (tmp9 < ks0))' in wrapper[kernel.line - 1]
    call = next(s for s in e.trace if s.text.startswith("the call passes"))
    assert "call_triton_poi_fused_" in wrapper[call.line - 1] and "s59" in wrapper[call.line - 1]


def test_cpu_index_error_traced(cpu_pkg):
    log = (PACKAGES / "cpu" / "LastItemGather" / "zero_lengths.log").read_text()
    (e,) = explain.explain(log, str(cpu_pkg), [str(MODELS)])
    check_last_item_gather_trace(e, "ks1", "s59", "cpp_fused_")
    kernel = next(s for s in e.trace if "asserts" in s.text)
    assert kernel.path.endswith("ck.kernel.cpp") and kernel.line == 36  # the line the log names
    assert any(x.startswith("ops named in the kernel") for x in texts(e))  # CPU: no Source Nodes comment


def test_kernel_information_gives_the_python_frames(tmp_path):
    # recorded with inductor_configs={"trace.provenance_tracking_level": 1} (torch 2.13, CPU), where
    # models.py sat in this worktree: the frames are pointed at this checkout's copy
    recorded = "/work/wt/issue12/tests/packages/cuda/models.py"
    (tmp_path / "p").mkdir()
    pkg = build(PACKAGES / "cpu" / "LastItemGather", tmp_path / "p" / "LastItemGather.pt2", provenance=True,
                replace={recorded: str(MODELS)})
    log = (PACKAGES / "cpu" / "LastItemGather" / "zero_lengths.log").read_text()
    (e,) = explain.explain(log, str(pkg))  # no --source needed
    frames = [s for s in e.trace if "kernel_information.json" in s.text]
    assert [(s.path, s.line) for s in frames] == [(str(MODELS), 8), (str(MODELS), 9), (str(MODELS), 10)]
    assert "`idx = offsets - 1`" in frames[0].text
    assert inspect_pkg.inspect(str(pkg))["models"][0]["kernel_information"] is True


def test_recorded_cuda_log_of_another_compile(cuda_pkg):
    # the real CUDA text (torch.compile on an H200): 16 threads assert, one explanation; its
    # `ks1` is not what the package's kernel asserts (`ks0`): the trace says so, nothing is invented
    log = (PACKAGES / "cuda" / "torch_compile_index.log").read_text()
    (e,) = explain.explain(log, str(cuda_pkg), [str(MODELS)])
    assert e.message == "index out of bounds: 0 <= tmp9 < ks1"
    assert "Triton device assert, block [0,0,0], thread [0,0,0]" in e.trace[0].text
    assert "is it the package that crashed?" in e.trace[-1].text
    assert [x.kind for x in explain.explain("RuntimeError: CUDA driver error: device-side assert triggered", None)] == ["device-assert"]


def test_without_source_or_package(cuda_pkg):
    (e,) = explain.explain(CUDA_LOG, str(cuda_pkg))
    assert any("input 0, dimension 0: `arg0_1`" == x for x in texts(e))
    assert any("--source" in x for x in texts(e))
    (e,) = explain.explain(CUDA_LOG, None)
    assert any("no package given" in x for x in texts(e))


def test_other_messages():
    cases = {
        "RuntimeError: input_handles[0]: dim value is too small at 0, expected it to be >= 2, but got: 0": "dim-too-small",
        "input_handles[0]: dim value is too large at 0, expected to be <= 1024, but got: 2000": "dim-too-large",
        "input_handles[1]: unmatched dim value at 1, expected: 8, but got: 7": "unmatched-dim",
        "input_handles[0]: unmatched dtype, expected: 6(at::kFloat), but got: 7": "unmatched-dtype",
        "input_handles[0]: unmatched stride value at 0, expected: 8, but got: 1": "unmatched-stride",
        "input_handles[0]: unmatched device type, expected: 1(cuda), but got: 0(cpu)": "unmatched-device",
        "Expected out tensor to have device cuda:0, but got cpu instead": "out-device",
        "The specified pointer resides on host memory and is not registered with any CUDA device.": "host-pointer",
        "AssertionError: Torch not compiled with CUDA enabled": "no-cuda",
        "RuntimeError: Failed to initialize zip archive: failed finding central directory": "not-a-package",
        "RuntimeError: Error in dlopen: /x/m.pt2: invalid ELF header": "elf-header",
        "RuntimeError: Incorrect device passed to aoti_runner_cpu": "incorrect-device",
        "Fatal Python error: Segmentation fault": "crash",
    }
    for log, kind in cases.items():
        found = explain.explain(log, None)
        assert [e.kind for e in found] == [kind], log
        assert found[0].cause and found[0].fixes
    (e,) = explain.explain("input_handles[0]: dim value is too small at 0, expected it to be >= 2, but got: 0", None)
    assert "input 0, dimension 0 is 0, below the lower bound 2" in e.cause
    assert explain.explain("all good", None) == []
    assert "No known AOTInductor error" in explain.render_text([])


def test_segfault_checklist_names_the_risky_dims(cuda_pkg):
    (e,) = explain.explain("Segmentation fault (core dumped)", str(cuda_pkg))
    assert e.kind == "crash"
    assert any("input 1, dimension 0 (`arg1_1`) is dynamic" in x for x in texts(e))
    assert any("AOTI_RUNTIME_CHECK_INPUTS=1" in f for f in e.fixes)


def test_dim_too_small_names_the_input(cpu_pkg):
    (e,) = explain.explain("input_handles[1]: dim value is too small at 0, expected it to be >= 2, but got: 0",
                           str(cpu_pkg), [str(MODELS)])
    assert any("`lengths` of forward" in x for x in texts(e))


def test_huge_logs_stay_fast():
    import time

    blobs = ["x" * 4_000_000, "a.py" * 1_000_000 + "\n" + CUDA_LOG, "Exception raised from " * 200_000,
             ("Assertion `index out of bounds: 0 <= tmp1 < ks1` failed" + "y" * 5000) * 300]
    for blob in blobs:
        t = time.perf_counter()
        explain.explain(blob, None)
        assert time.perf_counter() - t < 3


def test_hostile_package_is_reported_not_raised(tmp_path):
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(b"\x7fELF" + b"\0" * 100)
    (e,) = explain.explain(CUDA_LOG, str(bad))
    assert any("package not read" in x for x in texts(e)) or any("no package" in x for x in texts(e))


def run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "aoti_lsp", *args], input=stdin, capture_output=True, text=True, timeout=60)


def test_cli_explain_text_and_json(cuda_pkg, tmp_path):
    log = tmp_path / "crash.log"
    log.write_text(CUDA_LOG)
    res = run_cli("explain", str(log), "--package", str(cuda_pkg), "--source", str(MODELS))
    assert res.returncode == 1, res.stderr
    assert f"{MODELS}:10: index: `return values[idx]" in res.stdout
    res = run_cli("explain", "-", "--package", str(cuda_pkg), "--output-format", "json", stdin=CUDA_LOG)
    (item,) = json.loads(res.stdout)
    assert item["kind"] == "index-out-of-bounds" and item["fixes"]
    assert run_cli("explain", str(tmp_path / "missing.log")).returncode == 2


def test_inspect_cuda_and_cpu(cuda_pkg, cpu_pkg, tmp_path):
    info = inspect_pkg.inspect(str(cuda_pkg))
    (m,) = info["models"]
    assert m["device"] == "cuda" and m["compute_capability"] == "90" and m["platform"] == "linux"
    assert [i["name"] for i in m["inputs"]] == ["arg0_1", "arg1_1"]
    values, lengths = m["inputs"]
    assert values["dtype"] == "float32" and [d.get("size") for d in values["dims"]] == [None, 4]
    assert values["dims"][0]["symbol"] == "s59" and values["dims"][0]["min"] == 2
    assert "rejects empty and size-1 inputs" in values["dims"][0]["flags"][0]
    assert lengths["dims"][0]["max"] == 2147483647
    assert len(m["kernels"]) == 2
    res = run_cli("inspect", str(cpu_pkg))
    assert res.returncode == 0, res.stderr
    assert "device cpu" in res.stdout and "input 1 `arg1_1`: int64[s2]" in res.stdout
    assert "cpp_fused_" in res.stdout
    assert json.loads(run_cli("inspect", str(cpu_pkg), "--output-format", "json").stdout)["models"][0]["device"] == "cpu"


def test_inspect_flags_dims_without_lower_check(tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    text = (PACKAGES / "cuda" / "TotalFromLastOffset" / "wrapper.cpp").read_text()
    (folder / "wrapper.cpp").write_text(text.replace("_size[0] < 2)", "_size[0] < -1)").replace(
        "if (arg0_1_size[0] < -1)", "if (false)"))
    (folder / "wrapper_metadata.json").write_text('{"AOTI_DEVICE_KEY": "cuda"}')
    m = inspect_pkg.inspect(str(build(folder, tmp_path / "t.pt2")))["models"][0]
    assert m["inputs"][0]["dims"][0]["flags"] == ["no lower check"]


def test_inspect_constants(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    text = (PACKAGES / "cpu" / "LastItemGather" / "wrapper.cpp").read_text()
    # the lines torch 2.13's cpp_wrapper_cpu.py writes for a weight
    text = text.replace('    inputs_info_[0].name = "arg0_1";', '    inputs_info_[0].name = "arg0_1";\n'
                        '    constants_info_[0].name = "L__self___weight";\n    constants_info_[0].dtype = at::kFloat;\n'
                        '    constants_info_[0].shape = {64, 32};')
    (folder / "wrapper.cpp").write_text(text)
    (folder / "wrapper_metadata.json").write_text('{"AOTI_DEVICE_KEY": "cpu"}')
    info = inspect_pkg.inspect(str(build(folder, tmp_path / "c.pt2")))
    assert info["models"][0]["constants"] == [{"name": "L__self___weight", "shape": "64, 32"}]
    assert "    L__self___weight [64, 32]" in inspect_pkg.render_text(info)


def test_inspect_hostile(tmp_path):
    import zipfile

    p = tmp_path / "evil.pt2"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("../evil/data/aotinductor/model/x.wrapper_metadata.json", '{"AOTI_DEVICE_KEY": "cuda"}')
        zf.writestr("e/data/aotinductor/model/x.wrapper.cpp", b"/" * (pt2.MAX_SOURCE + 1))
    res = run_cli("inspect", str(p))
    assert res.returncode == 0
    assert "member name not trusted (ignored): ../evil/" in res.stdout
    assert "member not read: e/data/aotinductor/model/x.wrapper.cpp" in res.stdout
    notzip = tmp_path / "m.so"
    notzip.write_bytes(b"\x7fELF")
    res = run_cli("inspect", str(notzip))
    assert res.returncode == 2 and "ELF shared object, not a .pt2 package" in res.stdout


@pytest.mark.skipif(not SHARED_PT2.exists(), reason="the real CUDA package is missing (tests/real_cuda/LastItemGather.pt2)")
def test_whole_cuda_package():
    (e,) = explain.explain(CUDA_LOG, str(SHARED_PT2), [str(MODELS)])
    check_last_item_gather_trace(e, "ks0", "s59", "triton_poi_fused_")
    m = inspect_pkg.inspect(str(SHARED_PT2))["models"][0]
    assert m["device"] == "cuda" and len(m["kernels"]) == 2
