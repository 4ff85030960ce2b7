"""Helpers shared by the real-editor tests (imported by conftest.py and the test modules)."""

from __future__ import annotations

import ast
import os
import re
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
DOC = REPO / "docs" / "editors.md"
EDITORS_DIR = Path(os.environ.get("AOTI_EDITORS_DIR", REPO / ".editors"))
ARTIFACTS = Path(os.environ.get("AOTI_EDITORS_ARTIFACTS", HERE / "artifacts"))
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
SETUP_HINT = "run scripts/setup-editors.sh"

# The fixture every editor opens: a line with non-ASCII text (2-byte é, 4-byte/2-UTF-16-unit 😀)
# before the flagged call, so a column in the wrong unit shows up as a broken edit.
DEPRECATED = "deprecated_api.py"
FLAGGED_LINE = 4  # 0-based line of the aot_compile call
FLAGGED_PREFIX = 'label = "é😀"; so = '
UNUSED_IMPORT = "unused_import.py"  # a deprecated import never used: a safe fix, for "Fix all"
STATEMENT_PREFIX = 'label = "é😀"; '  # what precedes the flagged statement


def missing_tool(message: str) -> None:
    """Skip (developer machine) or fail (CI) because an editor or helper is not installed."""
    message = f"{message} ({SETUP_HINT})"
    if IN_CI:
        pytest.fail(f"CI is set and {message}", pytrace=False)
    pytest.skip(message)


def require_executable(name: str, path: str | Path | None = None) -> str:
    found = str(path) if path and Path(path).exists() else shutil.which(name)
    if not found:
        missing_tool(f"{name} is not installed")
    return found


def doc_snippet(name: str) -> str:
    """The code block that follows `<!-- tested: NAME -->` in docs/editors.md."""
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"<!-- tested: {re.escape(name)} -->\s*```\w*\n(.*?)```", text, re.S)
    assert match, f"docs/editors.md has no block marked <!-- tested: {name} -->"
    return match.group(1)


def venv_bin() -> Path:
    return Path(sys.executable).parent


def editor_env(home: Path) -> dict[str, str]:
    """Environment for an editor process: the server's console script first on PATH, and every
    XDG/HOME dir inside the test's temp folder so no editor writes into the real home."""
    env = dict(os.environ)
    env["PATH"] = f"{venv_bin()}{os.pathsep}{env.get('PATH', '')}"
    for var, sub in (
        ("HOME", "home"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(home / sub)
    return env


def start_server_once(env: dict[str, str], cwd: Path) -> None:
    """One server session (initialize, shutdown, exit) with `env`, as a user's earlier session
    leaves the generated-code cache (`$XDG_CACHE_HOME/aoti-lsp/`, lsp/codecache.py): a window the
    tests time is a fresh window, not the machine's first start ever."""
    frames = b""
    for msg in ({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
                {"method": "initialized", "params": {}}, {"id": 2, "method": "shutdown"}, {"method": "exit"}):
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        frames += b"Content-Length: %d\r\n\r\n" % len(body) + body
    proc = subprocess.run([sys.executable, "-m", "aoti_lsp", "serve"], input=frames, env=env, cwd=cwd,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    if not env.get("AOTI_LSP_NO_CODE_CACHE"):
        assert list((Path(env["XDG_CACHE_HOME"]) / "aoti-lsp").glob("generated-code-*")), "no code cache written"


def check_migrated(path: Path) -> str:
    """The saved file has the AOTI001 call migrated on its line, nothing else broken."""
    original = (FIXTURES / path.name).read_text(encoding="utf-8").splitlines()
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[:FLAGGED_LINE] == original[:FLAGGED_LINE], text
    fixed = lines[FLAGGED_LINE]
    # Columns in the wrong unit would cut into the string before the call or leave a piece of it.
    assert fixed.startswith(STATEMENT_PREFIX), text
    assert re.search(r"\bso = torch\._inductor\.aoti_compile_and_package\(", fixed), text
    assert "torch.export.export(model, (x,)" in fixed, text
    assert "torch._export.aot_compile" not in text, text
    ast.parse(text)
    return text
