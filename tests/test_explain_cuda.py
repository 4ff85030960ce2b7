"""`explain` on the CUDA texts torch really printed: two runs on an H200 (torch 2.11.0+cu130), the
first by hand (81 scenarios, `runs-torch2.11-cu130-h200-first.json`, copied from
../shared/fixtures/cuda/runs/) and one by scripts/cuda_measure.py (`runs-torch2.11-cu130-h200.json`).
Each failing AOTI scenario's stderr is the input; the user files in packages/cuda/user/ are the
measured scenarios written as a user would, for `--source`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from types import SimpleNamespace

import pytest

from aoti_lsp.triage import explain
from aoti_lsp.triage.explain import INPUT_DEVICE, LOAD_DEVICE, SHAPE
from pkgs import PACKAGES, build

CUDA = PACKAGES / "cuda"
RUNS = {f.name: json.loads(f.read_text()) for f in sorted(CUDA.glob("runs-*.json"))}
USER = CUDA / "user"

# scenario -> (kind, what is wrong); a failing scenario missing here fails test_every_failing_run
EXPECTED = {
    "cpu_pkg_cuda_input": ("out-device", INPUT_DEVICE),
    "cpu_pkg_device_index_0": ("incorrect-device", LOAD_DEVICE),
    "cuda_pkg_cpu_input": ("same-device", INPUT_DEVICE),
    "cuda_pkg_cpu_input_CHECK_INPUTS": ("unmatched-device", INPUT_DEVICE),
    "old_load_cuda_so_cuda_cpu_input": ("same-device", INPUT_DEVICE),
    "old_load_cuda_so_cuda_cpu_input_CHECK_INPUTS": ("unmatched-device", INPUT_DEVICE),
    "cuda_pkg_device_index_1": ("invalid-device-ordinal", LOAD_DEVICE),
    "cuda_pkg_wrong_batch_CHECK_INPUTS": ("unmatched-dim", SHAPE),
    "old_load_cuda_so_on_cpu": ("mixed-device-constants", LOAD_DEVICE),
    "old_load_cuda_so_on_cpu_CHECK_INPUTS": ("mixed-device-constants", LOAD_DEVICE),
    "old_load_cuda_so_on_cpu_cuda_input": ("mixed-device-constants", LOAD_DEVICE),
    "pt2_given_to_old_loader": ("elf-header", None),
    "so_given_to_new_loader": ("not-a-package", None),
    "jag_run_FirstItemStarts_empty": ("negative-size", SHAPE),
    "jag_run_GuardedTotal_empty": ("illegal-memory-access", SHAPE),
    "jag_run_TotalFromLastOffset_empty": ("illegal-memory-access", SHAPE),
}
for _m in ("LastItemGather", "LastItemIndexCopy", "FirstItemStarts"):
    for _case in ("zero_lengths", "some_zero"):
        EXPECTED[f"jag_run_{_m}_{_case}"] = ("index-out-of-bounds", SHAPE)
for _m in ("LastItemGather", "LastItemIndexCopy", "FirstItemStarts", "TotalFromLastOffset", "GuardedTotal"):
    for _case in ("empty", "zero_lengths"):
        EXPECTED[f"jag_run_{_m}_{_case}_CHECK_INPUTS"] = ("dim-too-small", SHAPE)
# the user files (packages/cuda/user/) run as they are
EXPECTED.update({
    "user_so_on_cpu": ("mixed-device-constants", LOAD_DEVICE),
    "user_cuda_pkg_cpu_input": ("same-device", INPUT_DEVICE),
    "user_cpu_pkg_cuda_input": ("out-device", INPUT_DEVICE),
    "user_device_index": ("invalid-device-ordinal", LOAD_DEVICE),
    "user_wrong_batch_CHECK_INPUTS": ("unmatched-dim", SHAPE),
    # `aot_load("lin.so", "cpu")`: dlopen does not look in the current folder for a bare name,
    # so this fails before the device mismatch would
    "user_two_files": ("so-not-found", None),
})
EXPECTED["jag_run_FirstItemStarts_some_zero_CHECK_INPUTS"] = ("index-out-of-bounds", SHAPE)  # lengths >= 2 pass the check


def log_of(res: dict) -> str:
    """What the run printed on stderr. The record keeps its last 6,000 characters and, whole, the
    key lines: those cut from the tail (a long C++ trace after them) are put back in front."""
    return "\n".join(k for k in res["key"] if k not in res["stderr"]) + "\n" + res["stderr"]


def aoti_runs():
    """(file, scenario, result) of every package run (compiles and eager runs are not AOTI errors)."""
    for name, runs in RUNS.items():
        for scenario, res in sorted(runs.items()):
            if scenario != "_meta" and "compile" not in scenario and not scenario.startswith(("jag_eager", "migration")):
                yield pytest.param(name, scenario, res, id=f"{name[:-5]}:{scenario}")


def test_both_runs_are_there():
    assert set(RUNS) == {"runs-torch2.11-cu130-h200.json", "runs-torch2.11-cu130-h200-first.json"}
    measured = RUNS["runs-torch2.11-cu130-h200.json"]["_meta"]
    assert (measured["torch"], measured["device"], measured["device_count"]) == ("2.11.0+cu130", "NVIDIA H200", 1)


@pytest.mark.parametrize("name, scenario, res", list(aoti_runs()))
def test_every_failing_run_is_explained(name, scenario, res):
    found = [(e.kind, e.wrong) for e in explain.explain(log_of(res), None)]
    if res["rc"] == 0:  # warnings and the deprecation banner are no error
        assert found == [], scenario
        return
    assert scenario in EXPECTED, f"a new measured text: {res['key'][-3:]}"
    assert found == [EXPECTED[scenario]]


@pytest.mark.parametrize("scenario, phase", [("old_load_cuda_so_on_cpu", "at load"), ("cuda_pkg_device_index_1", "at load"),
                                             ("cuda_pkg_cpu_input", "at the call"), ("cpu_pkg_cuda_input", "at the call")])
def test_the_wrapper_error_says_when(scenario, phase):
    for runs in RUNS.values():
        (e,) = explain.explain(log_of(runs[scenario]), None)
        assert [s.text for s in e.trace if s.text.startswith("it failed")] == [
            next(f"it failed {w}" for w in (explain._WHEN_LOAD, explain._WHEN_CALL) if w.startswith(phase))]


def test_device_messages_say_which_way():
    run = RUNS["runs-torch2.11-cu130-h200.json"]
    (e,) = explain.explain(run["cpu_pkg_cuda_input"]["stderr"], None)  # a CPU package given CUDA inputs
    assert e.cause.startswith("an input on `cuda:0` reached a package compiled for `cpu`")
    assert e.fixes[0] == "move the inputs to `cpu` before the call (AOTI102)"
    (e,) = explain.explain(run["cuda_pkg_cpu_input"]["stderr"], None)  # a CUDA package given CPU inputs
    assert e.cause.startswith("an input on `cpu` reached a model compiled for `cuda:0`: `mat1` of `wrapper_CUDA_addmm_out_out`")
    (e,) = explain.explain(run["cuda_pkg_cpu_input_CHECK_INPUTS"]["stderr"], None)
    assert e.cause == "input 0 is on device type 0, the package was compiled for 11(cuda)"
    (e,) = explain.explain(run["old_load_cuda_so_on_cpu"]["stderr"], None)
    assert "constant `L__self___weight`" in e.cause and "loaded on `cpu`" in e.cause
    assert "aoti_load_package(path)" in e.fixes[0]


def test_cuda_event_and_illegal_access():
    run = RUNS["runs-torch2.11-cu130-h200.json"]
    (e,) = explain.explain(run["jag_run_TotalFromLastOffset_empty"]["stderr"], None)
    assert e.kind == "illegal-memory-access"
    assert any(s.text.startswith("`Failed to destroy CUDA event ...: an illegal memory access") for s in e.trace)
    # a log cut down to its last line: the follow-on is all there is, and it says so
    last = run["jag_run_LastItemGather_zero_lengths"]["stderr"].strip().splitlines()[-1]
    assert last.startswith("Failed to destroy CUDA event")
    (e,) = explain.explain(last, None)
    assert (e.kind, e.wrong) == ("device-assert", SHAPE)
    assert any(s.text.startswith("`Failed to destroy CUDA event ...: device-side assert") for s in e.trace)
    # another CUDA error than the measured ones, after the same wrapper: the follow-on alone explains
    (e,) = explain.explain(last.replace("device-side assert triggered", "unspecified launch failure"), None)
    assert (e.kind, e.wrong) == ("cuda-event", None) and "printed before this line" in e.cause
    (e,) = explain.explain(run["cuda_pkg_cpu_input"]["stderr"].strip().splitlines()[-1], None)
    assert (e.kind, e.wrong) == ("run-failed", None)


def test_index_assert_traced_through_the_package(tmp_path):
    (tmp_path / "p").mkdir()
    pkg = build(CUDA / "LastItemGather", tmp_path / "p" / "LastItemGather.pt2")
    log = RUNS["runs-torch2.11-cu130-h200.json"]["jag_run_LastItemGather_zero_lengths"]["stderr"]
    (e,) = explain.explain(log, str(pkg), [str(CUDA / "models.py")])
    lines = {s.line for s in e.trace if s.path == str(CUDA / "models.py")}
    assert {6, 7, 9, 10} <= lines  # `values` of forward, cumsum, where, values[idx]
    assert "thread [0,0,0]" in e.trace[0].text
    assert e.cause.endswith("(the package was traced with `arg0_1` dimension 0 >= 2)")


def test_without_package_no_claim_about_the_trace():
    # issue 23 item 11: without --package nothing is known about the traced sizes
    log = RUNS["runs-torch2.11-cu130-h200.json"]["jag_run_LastItemGather_zero_lengths"]["stderr"]
    (e,) = explain.explain(log, None)
    assert "traced" not in e.cause and any("no package given" in s.text for s in e.trace)


def sites(scenario, user_file):
    """The text `user_file` printed when it ran on the GPU, explained with that file as --source."""
    run = RUNS["runs-torch2.11-cu130-h200.json"][scenario]
    assert run["files"] == [user_file]
    (e,) = explain.explain(run["stderr"], None, [str(USER / user_file)])
    path = os.path.abspath(USER / user_file)
    return e, [(s.line, s.text) for s in e.trace if s.path == path]


def test_source_load_device():
    e, steps = sites("user_so_on_cpu", "so_on_cpu.py")
    assert e.wrong == LOAD_DEVICE
    assert (8, 'load: `aot_load(so, "cpu")`: loads on `cpu` (compiled for `cuda`)') in steps
    assert any(line == 7 and "compiled for `cuda`" in text for line, text in steps)
    assert not any(t.startswith("call:") for _, t in steps)  # the calls are not what is wrong
    e, steps = sites("user_device_index", "device_index.py")
    assert (7, "load: `torch._inductor.aoti_load_package(path, device_index=1)`: device_index=1 (compiled for `cuda`)") in steps


def test_source_input_device():
    e, steps = sites("user_cuda_pkg_cpu_input", "cuda_pkg_cpu_input.py")
    assert e.wrong == INPUT_DEVICE
    assert (10, "call: `runner(x)`: input 0 on `cpu` (package compiled for `cuda`)") in steps
    assert any(line == 9 and text.startswith("device of `x` set here") for line, text in steps)
    assert (5, 'compile device set here: `device="cuda"`') in steps
    assert not any(t.startswith("load:") for _, t in steps)
    e, steps = sites("user_cpu_pkg_cuda_input", "cpu_pkg_cuda_input.py")
    assert (9, "call: `runner(x)`: input 0 on `cuda` (package compiled for `cpu`)") in steps
    assert (8, 'device of `x` set here: `.to("cuda")`') in steps


def test_source_unreadable_or_unrelated(tmp_path):
    missing, binary = tmp_path / "gone.py", tmp_path / "b.py"
    binary.write_bytes(b"\x00\x01")
    log = RUNS["runs-torch2.11-cu130-h200.json"]["old_load_cuda_so_on_cpu"]["stderr"]
    (e,) = explain.explain(log, None, [str(missing), str(binary), str(CUDA / "models.py")])
    assert not [s for s in e.trace if s.path]


def test_cli_json_and_text(tmp_path):
    log = tmp_path / "run.log"
    log.write_text(RUNS["runs-torch2.11-cu130-h200.json"]["cuda_pkg_cpu_input"]["stderr"])
    res = subprocess.run([sys.executable, "-m", "aoti_lsp", "explain", str(log), "--source", str(USER / "cuda_pkg_cpu_input.py"),
                          "--output-format", "json"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1, res.stderr
    (item,) = json.loads(res.stdout)
    assert item["kind"] == "same-device" and item["wrong"] == "input device"
    assert {"path": os.path.abspath(USER / "cuda_pkg_cpu_input.py"), "line": 10,
            "text": "call: `runner(x)`: input 0 on `cpu` (package compiled for `cuda`)"} in item["trace"]
    text = subprocess.run([sys.executable, "-m", "aoti_lsp", "explain", str(log)], capture_output=True, text=True, timeout=60).stdout
    assert "  wrong: input device" in text


def test_lsp_command_locates_the_sites():
    from aoti_lsp.lsp import triage

    path = os.path.abspath(USER / "so_on_cpu.py")
    saved = (USER / "so_on_cpu.py").read_bytes()
    log = RUNS["runs-torch2.11-cu130-h200.json"]["old_load_cuda_so_on_cpu"]["stderr"]

    def located(data):
        ls = SimpleNamespace(docs={"u": SimpleNamespace(path=path, data=data)})
        (item,) = triage.run(ls, [{"log": log}])["items"]
        assert item["wrong"] == "load device"
        return {s["location"]["range"]["start"]["line"] for s in item["trace"] if "location" in s}

    assert located(saved) == {6, 7}  # 0-based: the compile and the load
    assert located(b"# an unsaved line\n" + saved) == {7, 8}  # the editor's text, not the file's


def test_migration_measured_on_cuda(tmp_path):
    """old_cuda.py and new_cuda.py printed the same on the GPU (an old CUDA `.so` project, migrated); new_cuda.py is what the migration
    writes today (else the measurement is of another text: re-run scripts/cuda_measure.py)."""
    run = RUNS["runs-torch2.11-cu130-h200.json"]
    old, new = run["migration_old_cuda"], run["migration_new_cuda"]
    assert old["rc"] == new["rc"] == 0 and old["stdout"] == new["stdout"] and old["stdout"].startswith("cuda:0 (6, 4)")
    assert "scaled.so" in old["artifacts"] and "scaled.pt2" in new["artifacts"]
    copy = tmp_path / "new_cuda.py"
    shutil.copy(CUDA / "migration" / "old_cuda.py", copy)
    res = subprocess.run([sys.executable, "-m", "aoti_lsp", "--check", "--fix", "--unsafe-fixes", "--no-cache", str(copy)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "(2 fixed, 0 remaining)" in res.stderr, res.stdout + res.stderr
    assert copy.read_text() == (CUDA / "migration" / "new_cuda.py").read_text()


def test_source_across_files():
    # the given files are one project: the load in serve.py knows the compile in build.py. (Run as
    # they are, they fail earlier, at dlopen: user_two_files; the text is the one-file scenario's.)
    folder = USER / "two_files"
    log = RUNS["runs-torch2.11-cu130-h200.json"]["old_load_cuda_so_on_cpu"]["stderr"]
    (e,) = explain.explain(log, None, [str(folder / "serve.py"), str(folder / "build.py")])
    steps = [(os.path.basename(s.path), s.line, s.text) for s in e.trace if s.path]
    assert ("serve.py", 5, 'load: `aot_load("lin.so", "cpu")`: loads on `cpu` (compiled for `cuda`)') in steps
    assert any(f == "build.py" and line == 6 and "compiled for `cuda`" in t for f, line, t in steps)


def test_package_says_its_device(tmp_path):
    (tmp_path / "p").mkdir()
    pkg = build(CUDA / "LastItemGather", tmp_path / "p" / "LastItemGather.pt2")
    log = RUNS["runs-torch2.11-cu130-h200.json"]["cuda_pkg_cpu_input"]["stderr"]
    (e,) = explain.explain(log, str(pkg))
    assert "the package was compiled for `cuda` (wrapper_metadata.json of `model`)" in [s.text for s in e.trace]
    log = RUNS["runs-torch2.11-cu130-h200.json"]["jag_run_LastItemGather_zero_lengths_CHECK_INPUTS"]["stderr"]
    assert not any("compiled for" in s.text for s in explain.explain(log, str(pkg))[0].trace)  # a shape error


def test_source_shape():
    e, steps = sites("user_wrong_batch_CHECK_INPUTS", "wrong_batch.py")
    assert e.wrong == SHAPE and "static size 2" in e.cause
    assert (8, 'call: `runner(torch.randn(3, 10, device="cuda"))`: input 0 [3, 10]') in steps
    assert any(line == 6 and "example input 0 [2, 10] (all dims static)" in text for line, text in steps)


def test_bare_so_name_is_not_looked_for_in_the_current_folder():
    (e,) = explain.explain(RUNS["runs-torch2.11-cu130-h200.json"]["user_two_files"]["stderr"], None)
    assert "could not open `lin.so`" in e.cause and "not in the current folder" in e.cause
    assert e.fixes[0] == 'give `aot_load` a path with a folder: `os.path.abspath("lin.so")` or `./lin.so`'
