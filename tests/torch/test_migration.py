"""Real torch 2.13: the migration fix keeps the program's behaviour (issue: faithful migration)."""

import shutil
from pathlib import Path

import pytest

from conftest import run_python

pytestmark = pytest.mark.torch
HERE = Path(__file__).parent


def test_old_api_script_prints_the_same_after_migration(tmp_path, torch_env):
    script = tmp_path / "script.py"
    shutil.copy(HERE / "old_api_script.py", script)
    out_dir = tmp_path / "artifacts"
    out_dir.mkdir()

    before = run_python([str(script), str(out_dir)], torch_env)
    assert before.returncode == 0, before.stderr[-3000:]
    assert before.stdout.splitlines()[-1] == "scaled.so"

    fix = run_python(["-m", "aoti_lsp", "--check", "--fix", "--unsafe-fixes", str(script)], torch_env)
    assert fix.returncode == 0, fix.stdout + fix.stderr  # clean after the fix
    migrated = script.read_text()
    assert "aot_compile" not in migrated and "aot_load" not in migrated
    assert "torch.export.export(" in migrated and "strict=True" in migrated
    assert 'package_path=OUT' in migrated and 'scaled.pt2' in migrated

    after = run_python([str(script), str(out_dir)], torch_env)
    assert after.returncode == 0, after.stderr[-3000:]
    b, a = before.stdout.splitlines(), after.stdout.splitlines()
    assert a[:-1] == b[:-1]  # same keys, same numbers
    assert a[-1] == "scaled.pt2"  # the artifact is a package now
    assert (out_dir / "scaled.pt2").exists()
