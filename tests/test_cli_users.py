"""What a new user hits on the command line (issue 23): files named but not checked, near-miss
config tables, diff headers, --fix's scope, other linters' noqa codes."""

import os

import pytest
from clirun import run

BAD = 'import torch\nso = torch._export.aot_compile(m, (x,))\n'


@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    return tmp_path


def test_a_named_file_that_is_not_python_is_a_warning_never_a_pass(proj, capsys):
    (proj / "notes.txt").write_text("torch._export.aot_load is deprecated\n")
    (proj / "nb.ipynb").write_text('{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}\n')
    (proj / "ok.py").write_text("import torch\n")
    for named in (["notes.txt"], ["nb.ipynb"], ["notes.txt", "ok.py"]):
        code, _, err = run(capsys, "--check", *named)
        assert code == 2, (named, err)
        assert "All checks passed!" not in err
        assert f"{named[0]}: not checked: not a Python file" in err
    (proj / "tool").write_text("#!/usr/bin/env python3\nimport torch\n")  # pre-commit's `python` type
    code, _, err = run(capsys, "--check", "tool")
    assert code == 0 and "All checks passed!" in err
    code, _, err = run(capsys, "--check", ".")  # a folder: only its Python files, no warning
    assert code == 0 and "not checked" not in err
