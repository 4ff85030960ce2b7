"""Issue 19 items 4, 5 and 10 (the package reader), and issue 23 item 12: linear scans of the
generated code, a time budget for inspect/explain, the ZIP64 end record checked, packages that are
no regular file, an old `.so`, names printed escaped."""

from __future__ import annotations

import json
import os
import struct
import time
import zipfile
from pathlib import Path

import pytest

from aoti_lsp.analysis import budget, pt2
from aoti_lsp.triage import generated
from aoti_lsp.cli import triage as triage_cli
from aoti_lsp.analysis.pt2 import ModelSources

META = "pkg/data/aotinductor/model/abc.wrapper_metadata.json"


@pytest.fixture(autouse=True)
def fresh_cache():
    pt2._cache.clear()
    yield
    pt2._cache.clear()


def zip64_smuggler(path: Path, n: int) -> Path:
    """A real zip of `n` entries whose plain end record claims 1 entry and a 46-byte directory,
    with a ZIP64 end record (and its locator) that tells the truth: zipfile follows the ZIP64 one."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(META, json.dumps({"AOTI_DEVICE_KEY": "cpu"}))  # first: found even in a cut listing
        for i in range(n):
            zf.writestr(f"pkg/f{i}", b"")
    data = path.read_bytes()
    at = data.rfind(b"PK\x05\x06")
    _, _, _, _, entries, cd_size, cd_offset, _ = struct.unpack("<4sHHHHIIH", data[at:at + 22])
    rec = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries, cd_size, cd_offset)
    loc = struct.pack("<4sIQI", b"PK\x06\x07", 0, at, 1)
    plain = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, 46, cd_offset, 0)
    path.write_bytes(data[:at] + rec + loc + plain)
    return path


def test_zip64_record_is_checked_even_when_the_plain_one_looks_small(tmp_path, monkeypatch):
    p = zip64_smuggler(tmp_path / "m.pt2", 500)
    assert len(zipfile.ZipFile(p).infolist()) == 501  # what zipfile would read
    monkeypatch.setattr(pt2, "MAX_ENTRIES", 100)
    assert pt2.read_package(p) is None
    assert "501 entries" in pt2.read_sources(p).error
    monkeypatch.setattr(pt2, "MAX_ENTRIES", 1000)
    pt2._cache.clear()
    assert pt2.read_package(p).device()[0] == "cpu"  # under the caps it is read


def test_zip64_record_the_locator_does_not_point_at_is_checked_too(tmp_path, monkeypatch):
    """zipfile 3.11 reads the record just before the locator, not the one the locator names."""
    p = zip64_smuggler(tmp_path / "m.pt2", 500)
    data = p.read_bytes()
    at = data.rfind(b"PK\x05\x06")
    decoy = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, 1, 1, 46, 0)
    loc = bytearray(data[at - 20:at])
    loc[8:16] = struct.pack("<Q", 0)  # the locator points at a small decoy record put before the zip
    p.write_bytes(decoy + data[:at - 20] + bytes(loc) + data[at:])  # (zipfile allows a prefix)
    assert len(zipfile.ZipFile(p).infolist()) == 501
    monkeypatch.setattr(pt2, "MAX_ENTRIES", 100)
    assert pt2.read_package(p) is None


def test_old_so_is_recognised(tmp_path, capsys):
    """Issue 23 item 12: an ELF shared object is the old aot_compile output; the way on is the migration."""
    so = tmp_path / "model.so"
    so.write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 500)
    assert triage_cli.main(["inspect", str(so)]) == 2
    out = capsys.readouterr().out
    assert "ELF shared object" in out and "aot_compile" in out and "aoti_compile_and_package" in out
    assert "not a zip archive" not in out


@pytest.mark.parametrize("kind", ["fifo", "folder", "/dev/zero"])
def test_what_is_no_regular_file_says_so(tmp_path, capsys, kind):
    path = tmp_path / "m.pt2"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    t = time.perf_counter()
    assert triage_cli.main(["inspect", str(path)]) == 2
    out = capsys.readouterr().out
    assert "no such file" not in out
    assert ("a directory" if kind == "folder" else "not a regular file") in out
    assert time.perf_counter() - t < 5


def test_names_are_printed_escaped(tmp_path, capsys):
    """A U+202E (right-to-left override) in a model name would reorder the terminal line."""
    p = tmp_path / "m.pt2"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("pkg/data/aotinductor/mod\u202eel/abc.wrapper_metadata.json", json.dumps({"AOTI_DEVICE_KEY": "cpu"}))
        zf.writestr("pkg/data/aotinductor/mod\u202eel/abc.wrapper.cpp", 'inputs_info_[0].name = "arg\u202e0_1";\n')
    assert triage_cli.main(["inspect", str(p)]) == 0
    out = capsys.readouterr().out
    assert "\u202e" not in out and "\\u202e" in out


# -- item 4: linear scans ---------------------------------------------------------------------------
BASE = dict(name="m", metadata={}, wrapper_name="w.cpp")


@pytest.mark.parametrize("case", ["cpp defs", "blank lines", "many kernels", "many asserts"])
def test_generated_code_is_scanned_in_linear_time(case):
    if case == "cpp defs":  # 8.9 s before
        src = ModelSources(wrapper="", kernels=[("k.cpp", 'extern "C" void f(' * 6000)], **BASE)
    elif case == "blank lines":  # 13.3 s before (`^\s*` with re.M)
        src = ModelSources(wrapper="\n" * 60000 + "x", **BASE)
    elif case == "many kernels":  # 2.0 s before (each kernel's line counted from the start)
        body = "".join(f'extern "C" void cpp_k{i}(const float* in_ptr0)\n{{\n' + "  x;\n" * 20 + "}\n" for i in range(5000))
        src = ModelSources(wrapper="", kernels=[("k.cpp", body)], **BASE)
    else:
        body = 'extern "C" void cpp_k(const float* p)\n{\n' + 'f("index out of bounds: 0 <= tmp1 < ks0");\n' * 50000
        src = ModelSources(wrapper="", kernels=[("k.cpp", body)], **BASE)
    t = time.perf_counter()
    model = generated.parse(src)
    assert time.perf_counter() - t < 1.5
    if case == "many kernels":
        assert len(model.kernels) == 5000 and model.kernels["cpp_k4999"].line == 4999 * 23 + 1
    if case == "many asserts":
        asserts = model.kernels["cpp_k"].asserts
        assert len(asserts) == 50000 and asserts[0][1] == 3 and asserts[-1][1] == 50002


def test_kernel_lines_are_the_same_as_counted_from_the_start():
    text = "// head\n" + "".join(f'\nextern "C" void cpp_k{i}(const float* a, long b)\n{{\n' + "x;\n" * i + "}\n"
                                 for i in range(30))
    model = generated.parse(ModelSources(wrapper="", kernels=[("k.cpp", text)], **BASE))
    for name, k in model.kernels.items():
        assert k.line == text.count("\n", 0, text.index(f"void {name}(")) + 1
        assert k.params == ["a", "b"]


@pytest.mark.parametrize("command", ["inspect", "explain"])
def test_inspect_and_explain_have_a_time_budget(tmp_path, capsys, monkeypatch, command):
    p = tmp_path / "m.pt2"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr(META, json.dumps({"AOTI_DEVICE_KEY": "cpu"}))
    log = tmp_path / "crash.log"
    log.write_text("index out of bounds: 0 <= tmp3 < ks0\n")

    def endless(*args, **kwargs):
        while True:
            pass

    monkeypatch.setattr(budget, "SECONDS", 0.5)
    monkeypatch.setattr(generated, "parse", endless)
    args = ["inspect", str(p)] if command == "inspect" else ["explain", str(log), "--package", str(p)]
    t = time.perf_counter()
    assert triage_cli.main(args) == 2
    assert time.perf_counter() - t < 10
    assert "too slow" in capsys.readouterr().err
