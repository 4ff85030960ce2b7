"""Shared set-up for the real-editor tests (VS Code via code-server, Neovim 0.7, Emacs 28 + eglot).

Each test copies a fixture into a fresh git workspace, starts a real editor on it, lets the editor's
own LSP client talk to `aoti-lsp serve`, applies the migration quick fix and saves; then the file on
disk is checked here, in Python.

A missing editor skips its test with the reason, except under CI (env CI set), where it fails:
`scripts/setup-editors.sh` installs them all.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from editor_support import ARTIFACTS, FIXTURES, venv_bin  # noqa: E402


@pytest.fixture(scope="session")
def server_version() -> str:
    """The server the editors will start: the one installed next to this interpreter."""
    proc = subprocess.run(
        [sys.executable, "-m", "aoti_lsp", "--version"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and proc.stdout.startswith("aoti-lsp "), (
        f"{sys.executable} -m aoti_lsp --version failed: {proc.stdout}{proc.stderr}"
    )
    return proc.stdout.split()[1]


@pytest.fixture(scope="session")
def aoti_lsp_executable(server_version: str) -> Path:
    """The `aoti-lsp` console script; the Neovim and Emacs snippets run it from PATH."""
    exe = venv_bin() / "aoti-lsp"
    assert exe.exists(), f"no aoti-lsp console script next to {sys.executable}"
    return exe


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A git repository (eglot's project root) holding a copy of the fixtures."""
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURES, ws)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> Path:
    path = ARTIFACTS / re.sub(r"[^\w.-]+", "_", request.node.name)
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path

