"""Headless Neovim 0.7.2 with the docs/editors.md snippet: diagnostics, quick fix, save."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from editor_support import (
    DEPRECATED,
    FLAGGED_LINE,
    FLAGGED_PREFIX,
    HERE,
    check_migrated,
    editor_env,
    require_executable,
    doc_snippet,
)


def nvim_version(nvim: str) -> tuple[int, ...]:
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30).stdout
    match = re.search(r"NVIM v(\d+)\.(\d+)\.(\d+)", first)
    assert match, first
    return tuple(int(p) for p in match.groups())


def test_neovim_07_diagnostic_quickfix_save(workspace: Path, artifacts: Path, aoti_lsp_executable: Path, tmp_path: Path):
    nvim = require_executable("nvim")
    assert nvim_version(nvim)[:2] >= (0, 7), "the snippet targets Neovim 0.7+"
    init = tmp_path / "init.lua"
    init.write_text(doc_snippet("neovim-0.7"), encoding="utf-8")
    result_path = artifacts / "neovim-result.json"
    env = editor_env(tmp_path / "nvim-home")
    env["AOTI_RESULT"] = str(result_path)
    target = workspace / DEPRECATED

    proc = subprocess.run(
        ["timeout", "90", nvim, "--headless", "-i", "NONE", "-u", str(init), str(target),
         "-c", f"luafile {HERE / 'neovim' / 'driver.lua'}"],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    (artifacts / "neovim-output.txt").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    assert result_path.exists(), f"nvim exited {proc.returncode} without a result: {proc.stdout}{proc.stderr}"
    result = json.loads(result_path.read_text(encoding="utf-8"))
    assert "error" not in result, (result, proc.stderr)
    assert proc.returncode == 0, proc.stderr

    assert result["filetype"] == "python"
    assert result["clients"] == ["aoti-lsp"]
    by_code = {d["code"]: d for d in result["diagnostics"]}
    assert {"AOTI001", "AOTI002", "AOTI101"} <= set(by_code), result["diagnostics"]
    aoti001 = by_code["AOTI001"]
    assert aoti001["lnum"] == FLAGGED_LINE
    # Neovim 0.7 speaks UTF-16 and converts to byte columns: the call starts right after the prefix.
    assert aoti001["col"] == len(FLAGGED_PREFIX.encode("utf-8")), aoti001
    assert aoti001["severity"] == 2  # vim.diagnostic.severity.WARN
    assert by_code["AOTI101"]["severity"] == 1  # the device mismatch is an ERROR
    assert aoti001["href"] and aoti001["href"].startswith("http") and "AOTI001" in aoti001["href"], aoti001

    titles = [a["title"] for a in result["actions"]]
    assert any(t.startswith("aoti-lsp (AOTI001): Migrate to ") for t in titles), titles
    assert "aoti-lsp (AOTI001): Disable for this line" in titles, titles

    assert result["modified_after_write"] is False
    text = check_migrated(target)
    assert result["fixed_line"] == text.splitlines()[FLAGGED_LINE]
    assert "AOTI001" not in {d["code"] for d in result["diagnostics_after"]}, result["diagnostics_after"]
