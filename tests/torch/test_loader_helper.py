"""Real torch 2.13: a loader helper nothing in the project calls, beside a compile helper that
writes a .pt2 (pytorch/ao's sam2 server utilities; tests/realcode: ao-sam2-dead-load-helper).
As written, the helper cannot open what its own module makes; after --fix --unsafe-fixes it
loads the package, which answers as the model does at batch sizes other than the example's."""

import textwrap

import pytest

from conftest import run_python

pytestmark = pytest.mark.torch

UTILS = '''
from pathlib import Path

import torch


def aot_compile(model_directory, name, fn, sample_args, dynamic_shapes=None):
    path = Path(model_directory) / Path(f"{name}.pt2")
    exported = torch.export.export(fn, sample_args, dynamic_shapes=dynamic_shapes)
    return torch._inductor.aoti_compile_and_package(exported, package_path=str(path))


def aot_load(path):
    return torch._export.aot_load(path, "cpu")
'''

# a caller outside the project (a serving process), which the check does not see
DRIVER = '''
import sys
import torch
sys.path.insert(0, sys.argv[1])
import utils

class Net(torch.nn.Module):
    def forward(self, x):
        return (x * 3).relu().sum(1)

torch.manual_seed(0)
model = Net()
batch = torch.export.Dim("batch", min=1, max=64)
pkg = utils.aot_compile(sys.argv[2], "net", model, (torch.randn(8, 4),), dynamic_shapes=({0: batch},))
try:
    runner = utils.aot_load(pkg)
except Exception as exc:
    print("cannot load:", type(exc).__name__)
    sys.exit(0)
for b in (1, 3, 17):
    x = torch.randn(b, 4)
    out = runner(x)
    out = out[0] if isinstance(out, (list, tuple)) else out
    print(b, torch.allclose(out, model(x), atol=1e-5))
'''


def test_the_migrated_helper_loads_what_its_module_writes(tmp_path, torch_env):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'serving'\nversion = '0'\n")
    (project / "utils.py").write_text(UTILS.lstrip())
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(DRIVER).lstrip())
    out = tmp_path / "out"
    out.mkdir()

    before = run_python([str(driver), str(project), str(out)], torch_env)
    assert before.returncode == 0, before.stderr[-3000:]
    assert before.stdout.startswith("cannot load:"), before.stdout  # the old loader cannot open a .pt2

    fixed = run_python(["-m", "aoti_lsp", "--check", "--fix", "--unsafe-fixes", "."], torch_env, cwd=project)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "aoti_load_package(path)" in (project / "utils.py").read_text()

    after = run_python([str(driver), str(project), str(out)], torch_env)
    assert after.returncode == 0, after.stderr[-3000:]
    assert after.stdout.splitlines() == ["1 True", "3 True", "17 True"], after.stdout
