"""Fuzzing the CLI and the fixes (issue 11) with the invariants of the issue. Few examples in CI;
`make fuzz` runs thousands (AOTI_FUZZ=long).

Files are the rule fixtures, with a header (BOM, shebang, cookie), a line ending (\\n, \\r\\n, \\r)
and a few mutations (lines duplicated, dropped, re-indented with tabs or spaces, nested deeper,
hostile lines inserted) applied."""

import io
import os
import re
import stat
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aoti_lsp import budget
from aoti_lsp.cli import main
from aoti_lsp.engine import analyze
from aoti_lsp.fixer import fix_source
from aoti_lsp.layout import BOM, compile_error, header_end
from aoti_lsp.positions import LineIndex
from aoti_lsp.source import Source

LONG = os.environ.get("AOTI_FUZZ") == "long"
FUZZ = settings(
    max_examples=3000 if LONG else 25,
    deadline=timedelta(seconds=60 if LONG else 20),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    derandomize=not LONG,  # CI: the same examples every run
)
FIXTURES = sorted(str(p.read_text("utf-8")) for p in (Path(__file__).parent / "fixtures").rglob("*.py"))
HOSTILE = [
    "global torch", "import torch as torch", "from torch._export import *", "\ttorch._export.aot_load(p, 'cpu')",
    "x = '\ufeff'", "é😀 = 1", "if x:", "    pass", "\x0c", "r = torch._export.aot_load(" * 3,
    "def forward(self, lengths):", "    return lengths.cumsum(0)[-1]", "# -*- coding: latin-1 -*-", "return r",
    "so = torch._export.aot_compile(m, (x,))", "torch._export.aot_load(so, 'cuda')(x.cpu())", "\\",
]
# string literals whose value holds a lone surrogate (issue 19 item 2): they reach messages
SURROGATES = ["r = torch._export.aot_load('\\ud800.so', 'cpu')", "r = torch._inductor.aoti_load_package('\\udfff\\ud83d.so')",
              "p = '\\udcff.pt2'", "torch._inductor.aoti_load_package(p)"]
HOSTILE += SURROGATES
HEADERS = ["", "#!/usr/bin/env python\n", "# -*- coding: utf-8 -*-\n", "#!/usr/bin/python3\n# coding: utf-8\n"]


@pytest.fixture(autouse=True, scope="module")
def short_budget():
    """A file that hits a slow path (e.g. `global torch` before the look-up rewrite) is cut after
    2 s, not 20: the invariant is that it ends, with a note."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(budget, "SECONDS", 2.0)
        yield


@st.composite
def files(draw) -> bytes:
    lines = draw(st.sampled_from(FIXTURES)).splitlines()
    for _ in range(draw(st.integers(0, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["dup", "drop", "tab", "indent", "hostile", "nest"]))
        if kind == "dup":
            lines.insert(i, lines[i])
        elif kind == "drop":
            del lines[i]
        elif kind == "tab":
            lines[i] = re.sub(r"^( {4})+", lambda m: "\t" * (len(m.group()) // 4), lines[i])
        elif kind == "indent":
            lines[i] = " " * draw(st.integers(1, 9)) + lines[i]
        elif kind == "hostile":
            lines.insert(i, draw(st.sampled_from(HOSTILE)))
        else:  # deeper than Python's or libcst's limits, now and then
            depth = draw(st.sampled_from([3, 30, 120]))
            lines[i:i] = [" " * d + "if x:" for d in range(depth)] + [" " * depth + "y = torch._export.aot_load(p, 'cpu')"]
    header = draw(st.sampled_from(HEADERS))
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = (header + "\n".join(lines) + "\n").replace("\n", eol)
    return (BOM if draw(st.booleans()) else b"") + text.encode("utf-8")


def endings(data: bytes) -> set[bytes]:
    return set(re.findall(rb"\r\n|\r|\n", data))


def head_lines(data: bytes, n: int) -> list[bytes]:
    return LineIndex(data).data[: header_end(data)].splitlines()[:n]


@FUZZ
@given(files(), st.booleans())
def test_fixes_keep_the_file_valid_and_its_layout(data, unsafe):
    source = Source(data, "fuzz.py")
    checked = analyze(source)
    assert not [e for e in checked.errors if "internal error" in e]
    fixed = fix_source(source, unsafe=unsafe)
    assert not [e for e in fixed.errors if "internal error" in e]
    out = fixed.data
    if compile_error(data) is not None:
        assert out == data  # Python rejects it: never rewritten
        return
    assert compile_error(out) is None  # Python-valid stays Python-valid
    assert out.startswith(BOM) == data.startswith(BOM)
    assert head_lines(out, 2) == head_lines(data, 2)  # shebang and cookie stay on lines 1-2
    if len(endings(data)) == 1:
        assert endings(out) <= endings(data)  # no foreign line ending
    again = fix_source(Source(out, "fuzz.py"), unsafe=unsafe)
    assert again.data == out  # fix twice == fix once


@FUZZ
@given(files())
def test_cli_fix_keeps_mode_and_never_fails_internally(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("cli")
    path = folder / "m.py"
    path.write_bytes(data)
    path.chmod(0o640)
    code = main(["--check", "--fix", "--unsafe-fixes", "-q", "--output-format", "json", str(path)])
    assert code in (0, 1)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in folder.iterdir() if p.name != ".aoti_lsp_cache"] == ["m.py"]  # no temp file left behind
    if compile_error(data) is None:
        assert compile_error(path.read_bytes()) is None


@st.composite
def surrogate_files(draw) -> bytes:
    """A fixture with literals holding lone surrogates inserted."""
    lines = draw(st.sampled_from(FIXTURES)).splitlines()
    for line in draw(st.lists(st.sampled_from(SURROGATES), min_size=1, max_size=4)):
        lines.insert(draw(st.integers(0, len(lines))), line)
    return ("\n".join(lines) + "\n").encode()


@FUZZ
@given(surrogate_files(), st.sampled_from(["text", "json", "sarif", "github"]))
def test_every_output_format_survives_any_text(tmp_path_factory, data, fmt):
    path = tmp_path_factory.mktemp("fmt") / "m.py"
    path.write_bytes(data)
    pipe = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # strict, as a real pipe's stdout
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "stdout", pipe)
        code = main(["--check", "--no-cache", "--output-format", fmt, str(path)])
        pipe.flush()
    assert code in (0, 1)
    pipe.buffer.getvalue().decode("utf-8")  # strict: nothing UTF-8 cannot carry


@FUZZ
@given(st.binary(max_size=300), st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400), st.binary(max_size=8)), max_size=8))
def test_line_index_edits_match_a_rebuild(data, edits):
    index = LineIndex(data)
    for a, b, new in edits:
        start, end = sorted((min(a, len(data)), min(b, len(data))))
        data = data[:start] + new + data[end:]
        index = index.edited(start, end, new, data)
        assert index.starts == LineIndex(data).starts
