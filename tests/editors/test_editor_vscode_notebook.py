"""A notebook in a real VS Code (issue 26): code-server with the built .vsix opens a notebook
in its own notebook editor (VS Code's built-in ipynb support, offline) and shows the server's
findings in the cells and in the Problems panel (tests/editors/vscode/notebook.cjs)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from editor_support import HERE, REPO
from test_editor_vscode import PLAYWRIGHT, code_server  # noqa: F401  (the fixture)

NOTEBOOKS = REPO / "tests" / "notebooks"


def test_vscode_notebook_cells_get_findings(code_server, workspace: Path, artifacts: Path):  # noqa: F811
    shutil.copy(NOTEBOOKS / "mixed.ipynb", workspace / "export.ipynb")
    result_path = artifacts / "vscode-notebook-result.json"
    env = dict(code_server["env"])
    env.update({"AOTI_URL": code_server["url"], "AOTI_FOLDER": str(workspace), "AOTI_ARTIFACTS": str(artifacts),
                "AOTI_RESULT": str(result_path), "PLAYWRIGHT_CORE": str(PLAYWRIGHT)})
    proc = subprocess.run([code_server["node"], str(HERE / "vscode" / "notebook.cjs")], env=env,
                          capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    (artifacts / "notebook-output.txt").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    result = json.loads(result_path.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result.get('error')}\nsteps: {result['steps']}\nartifacts: {artifacts}"
    before = "\n".join(result["problemsBefore"])
    # the device mismatch across cells (an error), the jagged forward exported in another cell
    assert "AOTI102" in before and "AOTI201" in before, before
    assert "of a cell above" in before  # the compile's line, named from the cell of the call
    # and the deprecated load (AOTI002; the `# noqa: AOTI002` line stays out)
    assert result["squiggles"] == {"warning": 2, "error": 1}, result["squiggles"]
    # the quick fix, offered in the cell (the extension's selector takes notebook cells), edited it
    assert any('Move it to "cpu"' in a for a in result["actions"]), result["actions"]
    assert "AOTI102" not in "\n".join(result["problems"])
    # the two warnings stay, also once the Problems panel has pushed their cells out of view
    assert result["problemCounts"] == "Warnings: 2", result["problemCounts"]  # and no error
