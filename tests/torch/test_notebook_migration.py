"""Real torch 2.13: a notebook's migration keeps what its cells print (issue 26). The cells
run in order in one namespace (a plain exec, as a kernel would run them; IPython lines and
non-Python cells are skipped), before and after `aoti-lsp --fix --unsafe-fixes`."""

import json
import shutil
from pathlib import Path

import pytest

from conftest import run_python

pytestmark = pytest.mark.torch
NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "old_api.ipynb"

RUN_CELLS = r'''
import json, sys
nb = json.load(open(sys.argv[1]))
ns = {"__name__": "__main__"}
for n, cell in enumerate(nb["cells"], 1):
    if cell["cell_type"] != "code":
        continue
    lines = "".join(cell["source"]).split("\n")
    if lines[0].startswith("%%"):
        if lines[0][2:].split()[0] not in ("time", "timeit", "capture"):
            continue  # %%bash ...: not Python
        lines = lines[1:]
    code = "\n".join(l for l in lines if not l.lstrip().startswith(("%", "!")))
    exec(compile(code, f"<cell {n}>", "exec"), ns)
'''


def test_migrated_notebook_prints_the_same(tmp_path, torch_env):
    nb = tmp_path / "export.ipynb"
    shutil.copy(NOTEBOOK, nb)
    (tmp_path / "run_cells.py").write_text(RUN_CELLS)
    (tmp_path / "artifacts").mkdir()  # the notebook's `!mkdir -p artifacts`, skipped by the plain exec

    before = run_python(["run_cells.py", str(nb)], torch_env, cwd=tmp_path)
    assert before.returncode == 0, before.stderr[-3000:]
    assert before.stdout.splitlines()[-1] == "scaled.so"

    fix = run_python(["-m", "aoti_lsp", "--check", "--no-cache", "--fix", "--unsafe-fixes", str(nb)], torch_env, cwd=tmp_path)
    assert fix.returncode == 0, fix.stdout + fix.stderr
    program = "".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"])
    assert "aot_compile(" not in program and "aot_load(" not in program and "scaled.pt2" in program

    after = run_python(["run_cells.py", str(nb)], torch_env, cwd=tmp_path)
    assert after.returncode == 0, after.stderr[-3000:]
    b, a = before.stdout.splitlines(), after.stdout.splitlines()
    assert a[:-1] == b[:-1]  # same keys, same numbers
    assert a[-1] == "scaled.pt2"
    assert (tmp_path / "artifacts" / "scaled.pt2").exists()
