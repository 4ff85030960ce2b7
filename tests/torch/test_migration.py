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


EDIT_THE_MODULE = """
import torch
class M(torch.nn.Module):
    def forward(self, x):
        return x + (x.shape[0] * 2)
dim0 = torch.export.Dim.DYNAMIC(max=100)
ep = torch.export.export(M(), (torch.randn(5, 5),), dynamic_shapes={"x": (dim0, torch.export.Dim.STATIC)})
gm = ep.module()
before = (len(ep.graph.nodes), len(gm.graph.nodes))
nodes = list(gm.graph.nodes)
nodes[3].replace_all_uses_with(nodes[3].meta["val"])
gm.graph.eliminate_dead_code()
print(before[0], len(ep.graph.nodes), before[1], len(gm.graph.nodes))
"""


def test_an_edit_of_the_module_does_not_reach_its_program(tmp_path, torch_env):
    """Why the migration refuses to compile `ep` for `gm = ep.module()` edited by hand (torch-xpu-ops'
    test_T244632748): `ep.module()` is a new graph; the edit changes it and leaves `ep` as it was."""
    script = tmp_path / "edit.py"
    script.write_text(EDIT_THE_MODULE)
    out = run_python([str(script)], torch_env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    ep_before, ep_after, gm_before, gm_after = map(int, out.stdout.split())
    assert ep_after == ep_before
    assert gm_after < gm_before


BROKEN_FALLBACK = """
import sys
import torch


def build(model, x, out):
    try:
        from torch._inductor.aoti_compile_and_package import aoti_compile_and_package

        print("new path")
        if "--dry" in sys.argv:
            return None
        return aoti_compile_and_package(torch.export.export(model, (x,)), package_path=out)
    except ImportError:
        from torch._inductor import aot_compile

        print("old path")
        if "--dry" in sys.argv:
            return None
        return aot_compile(model, (x,))


build(torch.nn.Linear(2, 2), torch.randn(1, 2), "m.pt2")
"""


def test_a_fallback_whose_new_import_always_fails_gets_the_import_fixed(tmp_path, torch_env):
    """inductor-rs imports aoti_compile_and_package as a module: the import always fails (torch
    2.13: ModuleNotFoundError, a subclass of ImportError), so the old call always ran, unreported.
    Now reported, and the fix imports the function from torch._inductor: the new path runs."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    script = tmp_path / "gen.py"
    script.write_text(BROKEN_FALLBACK)
    before = run_python([str(script), "--dry"], torch_env, cwd=tmp_path, timeout=300)
    assert before.returncode == 0 and before.stdout.strip() == "old path", before.stdout + before.stderr[-2000:]
    found = run_python(["-m", "aoti_lsp", "--check", "gen.py"], torch_env, cwd=tmp_path)
    assert found.returncode == 1 and "names a function, not a module" in found.stdout, found.stdout + found.stderr
    fix = run_python(["-m", "aoti_lsp", "--check", "--fix", "--unsafe-fixes", "gen.py"], torch_env, cwd=tmp_path)
    assert fix.returncode == 0, fix.stdout + fix.stderr  # the fallback is a fallback again: nothing to report
    assert "from torch._inductor import aoti_compile_and_package" in script.read_text()
    after = run_python([str(script), "--dry"], torch_env, cwd=tmp_path, timeout=300)
    assert after.returncode == 0 and after.stdout.strip() == "new path", after.stdout + after.stderr[-2000:]
