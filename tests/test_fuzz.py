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
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from aoti_lsp.analysis import budget
from aoti_lsp.cli.main import main
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.fixes.fixer import fix_source
from aoti_lsp.fixes.layout import BOM, compile_error, header_end
from aoti_lsp.analysis.positions import LineIndex
from aoti_lsp.analysis.source import Source

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


# -- issue 19: a generator per class of attack ------------------------------------------------------
@FUZZ
@given(n=st.integers(1, 40), shared=st.sampled_from(["'m.so'", "P", "os.path.join(D, 'm.so')"]),
       compile_=st.booleans())
def test_shared_artifacts_never_pass(tmp_path_factory, n, shared, compile_):
    """Many loads of one artifact path: findings (exit 1) or a skip (exit 2), never a pass."""
    lines = ["import os", "import torch", "D = 'out'", "P = 'm.so'"]
    if compile_:
        lines.append(f"so = torch._export.aot_compile(m, (x,), options={{'aot_inductor.output_path': {shared}}})")
    lines += [f"r{i} = torch._export.aot_load({shared}, 'cpu')" for i in range(n)]
    path = tmp_path_factory.mktemp("shared") / "m.py"
    path.write_text("\n".join(lines) + "\n")
    for seconds in (2.0, 1e-6):
        budget.SECONDS = seconds
        try:
            code = main(["--check", "-q", "-j", "1", "--no-cache", str(path)])
        finally:
            budget.SECONDS = 2.0
        assert code in (1, 2)


@FUZZ
@given(entries=st.sampled_from(["dir", "file", "link to outside", "fifo", "dev zero", "ours link", "foreign"]),
       shape=st.sampled_from(["folder is a link", "folder", "folder is a file"]))
def test_a_planted_cache_never_reaches_outside(tmp_path_factory, entries, shape):
    """Whatever a repository ships as `.aoti_lsp_cache`, nothing outside the project changes and
    the run ends with its findings."""
    from aoti_lsp.project import cache as cachemod

    base = tmp_path_factory.mktemp("planted")
    outside, project = base / "outside", base / "proj"
    outside.mkdir()
    project.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    (outside / f"{'a' * 24}.json").write_text("keep too\n")
    os.utime(outside / f"{'a' * 24}.json", ns=(10**9, 10**9))
    (project / "m.py").write_text("import torch\nr = torch._export.aot_load(p, 'cpu')\n")
    folder = project / cachemod.DIR
    if shape == "folder is a link":
        folder.symlink_to(outside, target_is_directory=True)
    elif shape == "folder is a file":
        folder.write_text("x")
    else:
        assert main(["--check", "-q", "-j", "1", str(project / "m.py")]) == 1  # the cache file, named as it is read
        name = next(folder.glob("*.json"))
        name.unlink()
        if entries == "dir":
            name.mkdir()
        elif entries == "file":
            name.write_bytes(os.urandom(64))
        elif entries == "link to outside":
            name.symlink_to(outside / "keep.txt")
        elif entries == "fifo":
            os.mkfifo(name)
        elif entries == "dev zero":
            name.symlink_to("/dev/zero")
        elif entries == "ours link":
            name.symlink_to(outside / f"{'a' * 24}.json")
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    for _ in range(2):
        assert main(["--check", "-q", "-j", "1", str(project / "m.py")]) == 1
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before


@FUZZ
@given(real=st.sampled_from([0, 10, 60, 120]), plain_n=st.sampled_from([0, 1, 0xFFFF]) | st.integers(0, 0xFFFF),
       plain_size=st.sampled_from([46, 0xFFFFFFFF]) | st.integers(0, 2**32 - 1), zip64=st.booleans(),
       n64=st.none() | st.integers(0, 2**40), size64=st.none() | st.integers(0, 2**40),
       point=st.sampled_from(["right", "zero", "far", "decoy"]))
@example(real=120, plain_n=1, plain_size=46, zip64=True, n64=None, size64=None, point="right")  # the issue's
@example(real=120, plain_n=1, plain_size=46, zip64=True, n64=None, size64=None, point="zero")
def test_zip64_end_records_never_smuggle_entries(tmp_path_factory, real, plain_n, plain_size, zip64, n64, size64, point):
    """Whatever the end records claim, zipfile is never left to read more than MAX_ENTRIES."""
    import struct
    import time
    import zipfile

    from aoti_lsp.analysis import pt2

    path = tmp_path_factory.mktemp("zip64") / "m.pt2"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pkg/data/aotinductor/model/a.wrapper_metadata.json", '{"AOTI_DEVICE_KEY": "cpu"}')
        for i in range(real):
            zf.writestr(f"pkg/f{i}", b"")
    data = path.read_bytes()
    at = data.rfind(b"PK\x05\x06")
    _, _, _, _, true_n, true_size, offset, _ = struct.unpack("<4sHHHHIIH", data[at:at + 22])
    tail = b""
    if zip64:
        n64 = true_n if n64 is None else n64  # None: the truth, behind a plain record that may lie
        size64 = true_size if size64 is None else size64
        rec = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, n64, n64, size64, offset)
        pos = {"right": at, "zero": 0, "far": 2**50, "decoy": at}[point]
        tail = rec + struct.pack("<4sIQI", b"PK\x06\x07", 0, pos, 1)
    plain = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, plain_n, plain_n, plain_size, offset, 0)
    path.write_bytes(data[:at] + tail + plain)
    read = []
    real_init = zipfile.ZipFile.__init__

    def counting(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        read.append(len(self.filelist))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pt2, "MAX_ENTRIES", 50)
        mp.setattr(zipfile.ZipFile, "__init__", counting)
        pt2._cache.clear()
        t = time.perf_counter()
        pt2.read_sources(path)
        pt2.read_package(path)
        assert time.perf_counter() - t < 5
    pt2._cache.clear()
    assert all(n <= 50 for n in read), read
