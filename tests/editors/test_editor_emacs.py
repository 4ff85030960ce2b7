"""Emacs 28 + eglot (Debian's emacs-nox, elpa-eglot) with the docs/editors.md snippet:
diagnostics, quick fix, save."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from editor_support import (
    DEPRECATED,
    FLAGGED_LINE,
    FLAGGED_PREFIX,
    HERE,
    check_migrated,
    doc_snippet,
    editor_env,
    missing_tool,
    require_executable,
)

ELPA = Path("/usr/share/emacs/site-lisp/elpa")


def test_emacs_eglot_diagnostic_quickfix_save(workspace: Path, artifacts: Path, aoti_lsp_executable: Path, tmp_path: Path):
    emacs = require_executable("emacs")
    if not list(ELPA.glob("eglot-*")):
        missing_tool(f"eglot is not installed in {ELPA} (Debian elpa-eglot)")
    init = tmp_path / "init.el"
    init.write_text(doc_snippet("emacs-eglot"), encoding="utf-8")
    result_path = artifacts / "emacs-result.json"
    env = editor_env(tmp_path / "emacs-home")
    env["AOTI_RESULT"] = str(result_path)
    env["AOTI_FILE"] = str(workspace / DEPRECATED)

    proc = subprocess.run(
        ["timeout", "90", emacs, "-Q", "--batch",
         "-l", str(HERE / "emacs" / "prelude.el"), "-l", str(init), "-l", str(HERE / "emacs" / "driver.el")],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    (artifacts / "emacs-output.txt").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    assert result_path.exists(), f"emacs exited {proc.returncode} without a result: {proc.stdout}{proc.stderr}"
    result = json.loads(result_path.read_text(encoding="utf-8"))
    assert "error" not in result, (result, proc.stderr[-3000:])
    assert proc.returncode == 0, proc.stderr[-3000:]

    assert result["major_mode"] == "python-mode"
    assert result["server"] == "aoti-lsp", result["server"]
    by_code = {d["code"]: d for d in result["diagnostics"]}
    assert {"AOTI001", "AOTI002", "AOTI101"} <= set(by_code), result["diagnostics"]
    aoti001 = by_code["AOTI001"]
    assert aoti001["line"] == FLAGGED_LINE
    # eglot 1.9 speaks UTF-16 and Emacs counts characters: the call starts right after the prefix.
    assert aoti001["col"] == len(FLAGGED_PREFIX), aoti001
    assert aoti001["type"] == "eglot-warning", aoti001
    assert by_code["AOTI101"]["type"] == "eglot-error", by_code["AOTI101"]  # the device mismatch
    assert aoti001["href"] and aoti001["href"].startswith("http") and "AOTI001" in aoti001["href"], aoti001

    titles = result["actions"]
    assert any(t.startswith("aoti-lsp (AOTI001): Migrate to ") for t in titles), titles
    assert "aoti-lsp (AOTI001): Disable for this line" in titles, titles

    assert result["modified_after_write"] is False
    text = check_migrated(workspace / DEPRECATED)
    assert result["fixed_line"] == text.splitlines()[FLAGGED_LINE]
    assert "AOTI001" not in {d["code"] for d in result["diagnostics_after"]}, result["diagnostics_after"]
