"""The noqa quick fix's edit covers only what changes on the line (its end, or its noqa
comment): applied, it gives the line `add_code` makes, on every fixture and example."""

from __future__ import annotations

from pathlib import Path

import pytest

from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.noqa import add_code
from aoti_lsp.analysis.source import Source
from aoti_lsp.lsp.convert import noqa_edit

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(p for folder in ("tests/fixtures", "examples") for p in (ROOT / folder).rglob("*.py"))


def _apply(source: Source, edit: dict) -> bytes:
    """`edit` (UTF-8 positions) applied to the source's bytes."""
    r = edit["range"]
    start = source.lines.starts[r["start"]["line"]] + r["start"]["character"]
    end = source.lines.starts[r["end"]["line"]] + r["end"]["character"]
    return source.data[:start] + edit["newText"].encode() + source.data[end:]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_noqa_edit_makes_the_line_add_code_makes(path):
    source = Source(path.read_bytes(), str(path))
    for finding in analyze(source).findings:
        edit = noqa_edit(source, finding, "utf-8")
        line = source.lines.line_of(finding.start)
        raw = source.lines.line_bytes(line)
        body = raw[:-1] if raw.endswith(b"\r") else raw
        start = source.lines.starts[line]
        want = source.data[:start] + add_code(body.decode(), finding.code).encode() + source.data[start + len(body):]
        assert _apply(source, edit) == want
        assert edit["range"]["start"]["line"] == edit["range"]["end"]["line"] == line
        assert "\n" not in edit["newText"] and len(edit["newText"]) <= len(finding.code) + 12


def test_a_code_joins_an_existing_noqa_comment_in_place():
    source = Source(b"import torch\nso = torch._export.aot_compile(m, (x,))  # noqa: E501  why\n", "t.py")
    (finding,) = [f for f in analyze(source).findings if f.code == "AOTI001"]
    edit = noqa_edit(source, finding, "utf-16")
    assert edit["newText"] == ", AOTI001" and edit["range"]["start"] == edit["range"]["end"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_the_noqa_edit_counts_units_as_positions_do(encoding):
    """Its columns are counted on its line directly: the same as LineIndex.position says."""
    data = ("import torch\nso = torch._export.aot_compile(m, ('é😀',))  # noqa: E501 \N{SNOWMAN}\n"
            "so = torch._export.aot_compile(m, ('é😀',))   \r\n").encode()
    source = Source(data, "t.py")
    findings = [f for f in analyze(source).findings if f.code == "AOTI001"]
    assert len(findings) == 2
    for finding in findings:
        edit = noqa_edit(source, finding, encoding)
        line = source.lines.line_of(finding.start)
        body = source.lines.line_bytes(line).decode()
        new = add_code(body.rstrip("\r"), finding.code)
        head = next((i for i, (a, b) in enumerate(zip(body, new)) if a != b), min(len(body), len(new)))
        start = source.lines.starts[line] + len(body[:head].encode())
        assert (edit["range"]["start"]["line"], edit["range"]["start"]["character"]) == \
            source.lines.position(start, encoding)
