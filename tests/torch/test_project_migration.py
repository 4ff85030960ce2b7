"""Real torch 2.13: `--fix --unsafe-fixes` migrates a multi-file project and it still runs.

The project (tests/torch/projects/serving): artifact paths are constants of their own module
(`os.path.join` of an env-var default), the builder imports them two ways, the server loads one
artifact through a lazily initialised global and a relative import and the other on an instance,
two artifacts in all. It is compiled and run before and after the fix; the outputs must match."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_python

pytestmark = pytest.mark.torch
PROJECT = Path(__file__).parent / "projects" / "serving"


def _aoti(args, cwd, env):
    return subprocess.run([sys.executable, "-m", "aoti_lsp", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.py"))}


def test_multi_file_project_runs_the_same_after_the_migration(tmp_path, torch_env):
    root = tmp_path / "serving"
    shutil.copytree(PROJECT, root)
    env = {**torch_env, "ARTIFACT_DIR": str(tmp_path / "artifacts-before")}

    before = run_python(["-m", "app.main"], env, cwd=root)
    assert before.returncode == 0, before.stderr[-3000:]
    assert sorted(p for p in os.listdir(tmp_path / "artifacts-before") if p.endswith(".so")) == ["ranker.so", "tower.so"]

    fixed = _aoti(["--check", "--fix", "--unsafe-fixes", "--no-cache", "."], root, torch_env)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    text = "\n".join(p.read_text() for p in (root / "app").glob("*.py"))
    assert "aot_compile" not in text and "aot_load(" not in text
    assert '"tower.pt2"' in (root / "app" / "paths.py").read_text()
    assert '"ranker.pt2"' in (root / "app" / "paths.py").read_text()

    env["ARTIFACT_DIR"] = str(tmp_path / "artifacts-after")
    after = run_python(["-m", "app.main"], env, cwd=root)
    assert after.returncode == 0, after.stderr[-3000:]
    assert after.stdout.splitlines()[-1] == before.stdout.splitlines()[-1]
    assert sorted(p for p in os.listdir(tmp_path / "artifacts-after") if p.endswith(".pt2")) == ["ranker.pt2", "tower.pt2"]

    # a second --fix changes nothing, and the project checks clean
    snapshot = _snapshot(root)
    again = _aoti(["--check", "--fix", "--unsafe-fixes", "--no-cache", "."], root, torch_env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert _snapshot(root) == snapshot
    clean = _aoti(["--check", "--no-cache", "."], root, torch_env)
    assert clean.returncode == 0 and "All checks passed!" in clean.stderr, clean.stdout + clean.stderr
