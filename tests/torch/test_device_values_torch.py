"""The look-alike projects of issue 21 run with real torch 2.13 (CPU): each unsafe twin fails (or
runs unchecked) exactly as its AOTI101 / AOTI103 message says, and its safe twin runs. The texts
compared are taken from aoti-lsp's own message, not written here. Three AOTI compiles."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aoti_lsp.analysis.devices import MEASURED

pytestmark = pytest.mark.torch
REPO = Path(__file__).resolve().parents[2]
PROJECTS = REPO / "tests" / "projects"
AOTI = str(Path(sys.executable).with_name("aoti-lsp"))


@pytest.fixture
def env():
    pytest.importorskip("torch")
    return {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(REPO / ".cache" / "inductor"), "PYTHONWARNINGS": "ignore"}


def run(folder: Path, script: str, env: dict, check_inputs: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in env.items() if k != "AOTI_RUNTIME_CHECK_INPUTS"}
    if check_inputs:
        env["AOTI_RUNTIME_CHECK_INPUTS"] = "1"
    return subprocess.run([sys.executable, script], cwd=folder, env=env, capture_output=True, text=True, timeout=600)


def messages(folder: Path, code: str) -> list[str]:
    """Each finding's message with its related notes, one string per finding, in line order."""
    res = subprocess.run([AOTI, "--check", ".", "--no-cache", "--output-format", "json"], cwd=folder,
                         capture_output=True, text=True, timeout=300)
    return ["\n".join([f["message"], *(r["message"] for r in f.get("related", []))])
            for f in sorted(json.loads(res.stdout), key=lambda f: f["location"]["row"]) if f["code"] == code]


def quoted_check(message: str) -> str:
    """The text the finding's note says AOTI_RUNTIME_CHECK_INPUTS=1 raises."""
    return re.search(r"`AOTI_RUNTIME_CHECK_INPUTS=1` torch raises \(measured on torch 2.13 \(CPU\)\): `([^`]+)`",
                     message).group(1)


def twins(name: str, tmp_path: Path) -> tuple[Path, Path]:
    out = []
    for suffix in ("", "_ok"):
        dest = tmp_path / f"{name}{suffix}"
        shutil.copytree(PROJECTS / f"{name}{suffix}", dest, ignore=shutil.ignore_patterns("expected"))
        out.append(dest)
    return out[0], out[1]


def test_device_index_of_a_cpu_device_is_none(tmp_path, env):
    unsafe, safe = twins("device_index_helper", tmp_path)
    (message,) = messages(unsafe, "AOTI101")
    assert "the loader raises `TypeError`" in message
    # the whole text the hover quotes as measured (`Measured on torch 2.13 (CPU): ...`)
    said = MEASURED["index_none"][0]
    assert said == "TypeError: __init__(): incompatible constructor arguments"
    built = run(unsafe, "build.py", env)  # on this CPU-only host: a cpu package
    assert built.returncode == 0, built.stderr[-3000:]
    shutil.copy(unsafe / "ranker.pt2", safe / "ranker.pt2")
    failed = run(unsafe, "serve.py", env)
    assert failed.returncode == 1 and said in failed.stderr, failed.stderr[-3000:]
    ok = run(safe, "serve.py", env)
    assert ok.returncode == 0 and ok.stdout.strip() == "(4, 4)", ok.stderr[-3000:]
    assert messages(safe, "AOTI101") == []


def test_dim_bounds_across_files(tmp_path, env):
    unsafe, safe = twins("dim_bounds", tmp_path)
    below, above = messages(unsafe, "AOTI103")
    assert "silently accepted (unchecked)" in below and "(measured on torch 2.13 (CPU))" in below
    built = run(unsafe, "export_model.py", env)
    assert built.returncode == 0, built.stderr[-3000:]
    shutil.copy(unsafe / "classifier.pt2", safe / "classifier.pt2")
    unchecked = run(unsafe, "smoke.py", env)  # the message: no run-time check, it runs
    assert unchecked.returncode == 0, unchecked.stderr[-3000:]
    assert unchecked.stdout.split() == ["(1,", "4)", "(33,", "4)"]
    checked = run(unsafe, "smoke.py", env, check_inputs=True)
    assert checked.returncode == 1 and quoted_check(below) in checked.stderr, checked.stderr[-3000:]
    # the second call's text: run it alone (the first call stops the script)
    (unsafe / "smoke_above.py").write_text((unsafe / "smoke.py").read_text().replace(
        "print(tuple(runner(torch.randn(1, 8)).shape))\n", ""))
    checked = run(unsafe, "smoke_above.py", env, check_inputs=True)
    assert checked.returncode == 1 and quoted_check(above) in checked.stderr, checked.stderr[-3000:]
    ok = run(safe, "smoke.py", env, check_inputs=True)
    assert ok.returncode == 0 and ok.stdout.split() == ["(2,", "4)", "(32,", "4)"], ok.stderr[-3000:]
    assert messages(safe, "AOTI103") == []


def test_dim_auto_size_one_in_the_same_file(tmp_path, env):
    unsafe, safe = twins("dim_auto", tmp_path)
    (message,) = messages(unsafe, "AOTI103")
    assert "dynamic (`Dim.AUTO`) and traced as >= 2" in message
    unchecked = run(unsafe, "serve.py", env)  # exports, then serves one row
    assert unchecked.returncode == 0 and unchecked.stdout.strip() == "(1, 4)", unchecked.stderr[-3000:]
    script = "import serve\nprint(tuple(serve.serve_one().shape))\n"
    (unsafe / "again.py").write_text(script)
    checked = run(unsafe, "again.py", env, check_inputs=True)
    assert checked.returncode == 1 and quoted_check(message) in checked.stderr, checked.stderr[-3000:]
    shutil.copy(unsafe / "scorer.pt2", safe / "scorer.pt2")
    (safe / "again.py").write_text(script)
    ok = run(safe, "again.py", env, check_inputs=True)
    assert ok.returncode == 0 and ok.stdout.strip() == "(1, 4)", ok.stderr[-3000:]
    assert messages(safe, "AOTI103") == []
