"""Jupyter notebooks (issue 26): nbformat 4 files checked as one program of their code cells,
reported per cell, fixed in the right cells only. Fixtures: tests/notebooks/*.ipynb (nbformat's
layout: indent 1, sorted keys, trailing newline; mixed.ipynb: VS Code's key order, indent 2,
no trailing newline). Goldens: tests/notebooks/golden/ (`--update-goldens` rewrites them)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aoti_lsp.project import notebook
from clirun import run

HERE = Path(__file__).parent / "notebooks"
GOLDEN = HERE / "golden"


@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    for nb in HERE.glob("*.ipynb"):
        shutil.copy(nb, tmp_path / nb.name)
    return tmp_path


def _cell(text, index=0, language="python"):
    return notebook.code_cell(index, text, language)


def test_magics_are_masked_only_where_a_statement_starts():
    cell = _cell('%matplotlib inline\nx = !ls\nif x:\n    !echo hi\ndoc = """\n%s\n"""\nwhat?\ny = a != b\n')
    masked = cell.masked.split("\n")
    assert masked[0] == "pass  # aoti-lsp magic 0"
    assert masked[1] == "pass  # aoti-lsp magic 1"
    assert masked[3] == "    pass  # aoti-lsp magic 2"  # keeps the block valid
    assert masked[5] == "%s"  # inside a string: text, not a magic
    assert masked[7] == "pass  # aoti-lsp magic 3"
    assert masked[8] == "y = a != b"
    compile(cell.masked, "cell", "exec")


def test_cells_of_other_languages_are_left_out():
    assert _cell("%%bash\nls\n") is None
    assert _cell("x = 1", language="sql") is None
    timed = _cell("%%time\nx = 1\n")
    assert timed.masked == "pass  # aoti-lsp magic 0\nx = 1\n"


def test_program_rows_map_to_cells(proj):
    nb = notebook.parse((proj / "old_api.ipynb").read_bytes())
    assert [c.index for c in nb.cells] == [1, 2, 3, 5]  # markdown (0) and %%bash (4) left out
    program = nb.source
    row = program.split(b"\n").index(b"so_path = aot_compile(")
    assert notebook.cell_of("a.ipynb", program, row) == (4, 5)
    assert notebook.cell_of("a.py", program, row) is None


def test_an_unchanged_program_writes_the_file_back_byte_for_byte(proj):
    for name in ("old_api.ipynb", "mixed.ipynb"):
        raw = (proj / name).read_bytes()
        nb = notebook.parse(raw)
        assert nb.updated(nb.source) == raw


def _golden(name: str, text: str, update: bool):
    path = GOLDEN / name
    if update:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{name} differs (pytest --update-goldens rewrites it; read the diff)"


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_report_goldens(proj, capsys, fmt, update_goldens):
    code, out, err = run(capsys, "--check", "--no-cache", "--output-format", fmt, ".")
    assert code == 1, err
    out = out.replace(str(proj), "<PROJECT>")
    if fmt == "sarif":  # the results only: the rules' descriptions have their own tests
        out = json.dumps(json.loads(out)["runs"][0]["results"], indent=2, ensure_ascii=False) + "\n"
    _golden(f"report.{fmt}", out, update_goldens)
    if fmt == "text":
        assert "mixed.ipynb:cell 5:2:14: AOTI102" in out  # a device mismatch across cells
        assert "mixed.ipynb:cell 3:4:16: AOTI201" in out  # forward in cell 3, exported in cell 4
        assert "note: mixed.ipynb:cell 4:1:6: `LastItems` exported here" in out
        assert "(cell 4, line 2)" in out  # a rule's `line N` named in the notebook's terms
        assert "old_api.ipynb:cell 4:5:11: AOTI001" in out and "old_api.ipynb:cell 6:1:10: AOTI002" in out
        assert "legacy.so" not in out  # `# noqa: AOTI002` on that cell's line
    if fmt == "json":
        items = json.loads(out)
        dev = next(i for i in items if i["code"] == "AOTI102")
        assert dev["cell"] == 5 and dev["location"] == {"row": 2, "column": 14} and dev["noqa_row"] == 2
        assert dev["fix"]["edits"][0]["cell"] == 5 and dev["fix"]["edits"][0]["location"]["row"] == 2
    if fmt == "github":
        assert "file=mixed.ipynb,line=2,col=14,endLine=2,endColumn=42::cell 5: AOTI102 " in out
    if fmt == "sarif":
        results = json.loads(out)
        dev = next(r for r in results if r["ruleId"] == "AOTI102")
        assert dev["locations"][0]["properties"] == {"cell": 5}
        assert dev["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def _outside_sources(raw: bytes) -> tuple[list[str], str]:
    """(each code cell's source, the JSON text with every cell's source value cut out)."""
    text = raw.decode()
    spans = notebook._source_spans(text)
    rest, at = [], 0
    for start, end in sorted(spans.values()):
        rest.append(text[at:start])
        at = end
    rest.append(text[at:])
    return [text[s:e] for s, e in sorted(spans.values())], "\x00".join(rest)


def test_fix_round_trip_changes_only_cell_sources(proj, capsys):
    before = {n: (proj / n).read_bytes() for n in ("old_api.ipynb", "mixed.ipynb")}
    code, out, err = run(capsys, "--check", "--no-cache", "--fix", "--unsafe-fixes", ".")
    assert "Fixed 2 files." in err, err
    for name, raw in before.items():
        after = (proj / name).read_bytes()
        assert after != raw
        old_sources, old_rest = _outside_sources(raw)
        new_sources, new_rest = _outside_sources(after)
        assert new_rest == old_rest  # outputs, metadata, counts, ids, key order, indentation: the same bytes
        assert json.loads(after)["nbformat"] == 4
    assert before["mixed.ipynb"][-1:] == b"}" and (proj / "mixed.ipynb").read_bytes()[-1:] == b"}"
    assert (proj / "old_api.ipynb").read_bytes().endswith(b"}\n")
    cells = json.loads((proj / "old_api.ipynb").read_text())["cells"]
    program = "".join("".join(c["source"]) + "\n" for c in cells)
    assert "aot_compile" not in program and "aot_load" not in program
    assert "%load_ext autoreload" in program and "!mkdir -p artifacts" in program and "%%time" in program
    assert "scaled.pt2" in program
    assert cells[3]["outputs"][0]["text"] == ["CPU times: user 9 s\n"]  # outputs untouched
    mixed = json.loads((proj / "mixed.ipynb").read_text())["cells"]
    assert mixed[4]["source"][1] == 'out = runner(torch.randn(5, 8).to("cpu"), torch.tensor([2, 3]))'
    code, out, err = run(capsys, "--check", "--no-cache", ".")  # what is left: no fix for it
    assert "AOTI001" not in out and "AOTI102" not in out


def test_diff_shows_cells_and_changes_nothing(proj, capsys):
    raw = (proj / "old_api.ipynb").read_bytes()
    code, out, err = run(capsys, "--check", "--no-cache", "--diff", "--unsafe-fixes", "old_api.ipynb")
    assert code == 1
    assert "--- a/old_api.ipynb:cell 4\n+++ b/old_api.ipynb:cell 4\n" in out
    assert "-so_path = aot_compile(\n" in out and "+    package_path=OUT,\n" in out
    assert "aoti-lsp magic" not in out and "#%% aoti-lsp" not in out  # the program's own lines never shown
    assert (proj / "old_api.ipynb").read_bytes() == raw


def test_invalid_notebook_is_an_error_and_never_rewritten(proj, capsys):
    bad = proj / "broken.ipynb"
    bad.write_text('{"cells": [{"cell_type": "code", "source": ["from torch._export import aot_load\\n"]}')
    code, out, err = run(capsys, "--check", "--no-cache", "--fix", "--unsafe-fixes", "broken.ipynb")
    assert "broken.ipynb: not a notebook: invalid JSON at line 1" in err and "never rewritten" in err
    assert bad.read_text().endswith("]}")
    (proj / "v3.ipynb").write_text('{"nbformat": 3, "worksheets": []}\n')
    code, out, err = run(capsys, "--check", "--no-cache", "v3.ipynb")
    assert "v3.ipynb: not a notebook aoti-lsp reads: nbformat 4 with a list of cells expected, found nbformat 3" in err


def test_string_sources_and_empty_lists_are_written_alike(proj, capsys):
    nb = {"cells": [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": "from torch._export import aot_compile, aot_load\nimport torch\n"},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": []},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ["aot_compile(m, (torch.randn(2),), options={'aot_inductor.output_path': 'm.so'})\n",
                    "r = aot_load('m.so', 'cpu')"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = proj / "strings.ipynb"
    path.write_text(json.dumps(nb, indent=1) + "\n")
    run(capsys, "--check", "--no-cache", "--fix", "--unsafe-fixes", "strings.ipynb")
    cells = json.loads(path.read_text())["cells"]
    assert isinstance(cells[0]["source"], str) and "aot_compile" not in cells[0]["source"]
    assert cells[1]["source"] == []
    assert cells[2]["source"][-1] == "r = torch._inductor.aoti_load_package('m.pt2')"
    assert '\n   "source": [\n    "ep = ' in path.read_text()  # the list's own indentation kept


def _write(path, *cells):
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c}
                    for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb, indent=1) + "\n")


def test_noqa_warnings_and_syntax_errors_name_the_cell(proj, capsys):
    _write(proj / "nb.ipynb", "import torch\n%time x = 1",
           'r = torch._export.aot_load("a.so", "cpu")  # noqa: AOTI1O2\n',
           "def broken(:\n    pass\n")
    code, out, err = run(capsys, "--check", "--no-cache", "nb.ipynb")
    assert "nb.ipynb:cell 2:1: unknown code 'AOTI1O2' in a noqa comment" in err, err
    assert "nb.ipynb:cell 2:1:5: AOTI002" in out  # a code that names no rule suppresses nothing
    code, out, err = run(capsys, "--check", "--no-cache", "--output-format", "json", "nb.ipynb")
    note = next(i for i in json.loads(out) if i["code"] is None)
    assert note["message"].startswith("syntax error at cell 3:1:") and note["location"]["row"] == 1, note


LINES = ["import torch", "%matplotlib inline", "!pip install x", "x = !ls", "s = '''", "%not magic in a string",
         "'''", "if x:", "    %time f()", "    y = 1", "print('é😀')", "", "obj?", "a != b", "# comment", "\t"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(LINES), max_size=6), min_size=1, max_size=5), st.sampled_from([1, 2, 4]),
       st.booleans(), st.booleans(), st.data())
def test_any_notebook_round_trips_and_an_edit_stays_in_its_cell(cells, indent, trailing, as_string, data):
    texts = ["\n".join(c) for c in cells]
    raw_cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# title"]}]
    for t in texts:
        source = t if as_string else [line + "\n" for line in t.split("\n")[:-1]] + [t.split("\n")[-1]]
        raw_cells.append({"outputs": [{"output_type": "stream", "name": "stdout", "text": ["\u001b[31mok\n"]}],
                          "cell_type": "code", "source": source, "metadata": {"tags": []}, "execution_count": 3})
    raw = (json.dumps({"nbformat_minor": 5, "cells": raw_cells, "nbformat": 4, "metadata": {}}, indent=indent,
                      ensure_ascii=False) + ("\n" if trailing else "")).encode()
    nb = notebook.parse(raw)
    assert nb.updated(nb.source) == raw
    k = data.draw(st.integers(0, len(nb.cells) - 1))
    program = nb.source.decode().split("\n")
    marker = program.index(notebook.MARK.format(nb.cells[k].index + 1))
    program.insert(marker + 1, "edited = 1")  # a new first line of cell k
    new = json.loads(nb.updated("\n".join(program).encode()))
    old = json.loads(raw)
    for i, (a, b) in enumerate(zip(old["cells"], new["cells"])):
        if i == nb.cells[k].index:
            assert "".join(b["source"]) == "edited = 1\n" + "".join(a["source"])
            assert {**a, "source": None} == {**b, "source": None}
        else:
            assert a == b
