"""Notebooks in a project (issue 26): a notebook that compiles an artifact and a `.py` that
loads it (or the other way round) are one project for the cross-file rules and the migration;
the pre-commit hook given only a staged notebook finds the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clirun import run

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]


def notebook(*cells: str, markdown_first: bool = True) -> str:
    """An nbformat 4 notebook, written as nbformat writes it (indent 1, sorted keys)."""
    out = [{"cell_type": "markdown", "id": "md", "metadata": {}, "source": ["# notes"]}] if markdown_first else []
    for n, text in enumerate(cells):
        lines = text.split("\n")
        out.append({"cell_type": "code", "execution_count": n + 1, "id": f"c{n}", "metadata": {},
                    "outputs": [], "source": [line + "\n" for line in lines[:-1]] + [lines[-1]]})
    nb = {"cells": out, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1, sort_keys=True) + "\n"


COMPILE_CELLS = ("import torch\n%matplotlib inline", "model = torch.nn.Linear(8, 4)",
                 'ep = torch.export.export(model, (torch.randn(4, 8),))\n'
                 'torch._inductor.aoti_compile_and_package(ep, package_path="out/model.pt2")')
CUDA_LOAD = 'import torch\n\nrunner = torch._inductor.aoti_load_package("out/model.pt2", device_index=0)\n'


@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    return tmp_path


def test_a_py_loading_a_notebooks_package_is_checked_against_it(proj, capsys):
    (proj / "export.ipynb").write_text(notebook(*COMPILE_CELLS))
    (proj / "serve.py").write_text(CUDA_LOAD)
    code, out, err = run(capsys, "--check", "--no-cache", "serve.py")
    assert code == 1, err
    assert "serve.py:3:61: AOTI101" in out and "compiled for `cpu` (export.ipynb:cell 4:2)" in out
    assert "note: export.ipynb:cell 4:2:1: compiled here" in out  # the related site in the notebook's terms


def test_a_notebook_loading_a_py_package_is_checked_against_it(proj, capsys):
    (proj / "make_package.py").write_text(
        'import torch\n\nep = torch.export.export(torch.nn.Linear(8, 4), (torch.randn(4, 8),))\n'
        'torch._inductor.aoti_compile_and_package(ep, package_path="out/model.pt2")\n')
    (proj / "serve.ipynb").write_text(notebook("import torch", 'runner = torch._inductor.aoti_load_package("out/model.pt2", device_index=0)'))
    code, out, err = run(capsys, "--check", "--no-cache", "serve.ipynb")
    assert code == 1, err
    assert "serve.ipynb:cell 3:1:61: AOTI101" in out
    code, out2, _ = run(capsys, "--check", "--no-cache", ".")
    assert out in out2  # the notebook named alone finds what the whole project finds in it


def test_migration_edits_the_notebook_and_the_py_together(proj, capsys):
    nb = notebook("from torch._export import aot_compile\nimport torch", "m = torch.nn.Linear(8, 4)",
                  'aot_compile(m, (torch.randn(4, 8),), options={"aot_inductor.output_path": "/tmp/x/model.so"})')
    (proj / "export.ipynb").write_text(nb)
    (proj / "serve.py").write_text('from torch._export import aot_load\n\nrunner = aot_load("/tmp/x/model.so", "cpu")\n')
    code, out, err = run(capsys, "--check", "--no-cache", "--fix", "--unsafe-fixes", "serve.py")
    assert "Fixed 2 files." in err, out + err
    assert (proj / "serve.py").read_text() == 'import torch\n\nrunner = torch._inductor.aoti_load_package("/tmp/x/model.pt2")\n'
    cells = json.loads((proj / "export.ipynb").read_text())["cells"]
    assert "".join(cells[3]["source"]).startswith("ep = torch.export.export(m, (torch.randn(4, 8),)")
    assert 'package_path="/tmp/x/model.pt2"' in "".join(cells[3]["source"])
    assert cells[0] == json.loads(nb)["cells"][0]


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


def test_precommit_with_only_a_staged_notebook_finds_the_cross_file_mismatch(tmp_path):
    """The hook as README's local snippet writes it (types_or with jupyter): only the notebook is
    staged, and its load is checked against the package a committed .py compiles."""
    user = tmp_path / "user"
    user.mkdir()
    _git(user, "init", "-q")
    (user / "make_package.py").write_text(
        'import torch\n\nep = torch.export.export(torch.nn.Linear(8, 4), (torch.randn(4, 8),))\n'
        'torch._inductor.aoti_compile_and_package(ep, package_path="out/model.pt2")\n')
    readme = (Path(__file__).parents[1] / "README.md").read_text("utf-8")
    config = readme.split("<!-- tested: pre-commit-local -->", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    (user / ".pre-commit-config.yaml").write_text(config)
    _git(user, "add", "-A")
    _git(user, "commit", "-qm", "base", "--no-verify")
    (user / "serve.ipynb").write_text(notebook("import torch", 'runner = torch._inductor.aoti_load_package("out/model.pt2", device_index=0)'))
    _git(user, "add", "serve.ipynb")
    venv_bin = str(Path(sys.executable).parent)
    res = subprocess.run(PRE_COMMIT + ["run", "aoti-lsp"], cwd=user, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}",
                              "PRE_COMMIT_HOME": str(tmp_path / "pc-home")})
    assert res.returncode == 1, res.stdout + res.stderr
    assert "serve.ipynb:cell 3:1:61: AOTI101" in res.stdout
