"""Hostile `.pt2` files: the reader stays bounded, never extracts, never trusts member names,
and a bad member does not hide a good one after it."""

from __future__ import annotations

import json
import os
import struct
import time
import zipfile
from pathlib import Path

import pytest

from aoti_lsp.analysis import pt2

META = "pkg/data/aotinductor/model/abc.wrapper_metadata.json"


def meta(device="cuda") -> bytes:
    return json.dumps({"AOTI_DEVICE_KEY": device, "AOTI_PLATFORM": "linux"}).encode()


def make_zip(path: Path, members: list[tuple[str, bytes]], method=zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", method) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


@pytest.fixture(autouse=True)
def fresh_cache():
    pt2._cache.clear()
    yield
    pt2._cache.clear()


def test_valid_package(tmp_path):
    p = make_zip(tmp_path / "m.pt2", [("pkg/archive_format", b"pt2"), (META, meta("cuda"))])
    assert pt2.read_package(p).device() == ("cuda", META)


def test_a_torch_2_6_package_without_a_root_folder(tmp_path):
    """atomicarchitects/bond-predictor commits packages of torch 2.6's layout: `data/aotinductor/
    model/<hash>.cpp` and `<hash>_metadata.json` at the top of the zip (no root folder, no
    `.wrapper` in the names). Their device was not read, nor their wrapper shown by inspect."""
    old = "data/aotinductor/model/cp7y_metadata.json"
    p = make_zip(tmp_path / "m.pt2", [("version", b"1"), ("archive_format", b"pt2"), (old, meta("cpu")),
                                      ("data/aotinductor/model/cp7y.cpp", b"// wrapper and kernels"),
                                      ("data/aotinductor/model/cp7y.so", b"\x7fELF")])
    assert pt2.read_package(p).device() == ("cpu", old)
    model = pt2.read_sources(p).models["model"]
    assert model.wrapper == "// wrapper and kernels" and model.metadata["AOTI_DEVICE_KEY"] == "cpu"


def test_a_kernel_metadata_is_not_read_as_the_wrappers(tmp_path):
    p = make_zip(tmp_path / "m.pt2", [("pkg/archive_format", b"pt2"), (META, meta("cuda")),
                                      ("pkg/data/aotinductor/model/k.kernel_metadata.json", b"{}"),
                                      ("pkg/data/aotinductor/model/cw.wrapper.cpp", b"// w"),
                                      ("pkg/data/aotinductor/model/ck.kernel.cpp", b"// k")])
    model = pt2.read_sources(p).models["model"]
    assert model.metadata["AOTI_DEVICE_KEY"] == "cuda"
    assert model.wrapper == "// w" and [k for _, k in model.kernels] == ["// k"]


def test_not_a_zip(tmp_path):
    for i, data in enumerate([b"", b"\x7fELF" + b"\0" * 200, os.urandom(5000), b"PK\x05\x06"]):
        p = tmp_path / f"{i}.pt2"
        p.write_bytes(data)
        assert pt2.read_package(p) is None
        assert "not a" in pt2.read_sources(p).error
    assert pt2.read_package(tmp_path / "missing.pt2") is None
    assert pt2.read_package(tmp_path) is None  # a folder


def _end_record(entries: int, cd_size: int, cd_offset: int) -> bytes:
    return struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, entries, entries, cd_size, cd_offset, 0)


def test_huge_claimed_directory_is_refused_quickly(tmp_path):
    # a sparse 5 GiB file whose end record claims a 4 GiB directory: zipfile alone read it all
    p = tmp_path / "huge.pt2"
    with open(p, "wb") as fh:
        fh.truncate(5 * 1024**3)
        fh.seek(0, os.SEEK_END)
        fh.write(_end_record(10, 4 * 1024**3 - 2, 1024))
    t = time.perf_counter()
    assert pt2.read_package(p) is None
    assert "zip directory of" in pt2.read_sources(p).error
    assert time.perf_counter() - t < 2


def test_a_million_entries_is_bounded(tmp_path):
    # ZIP64 end record claiming 1,000,000 entries (a 46 MB directory) in a sparse file
    p = tmp_path / "many.pt2"
    cd_size = 1_000_000 * 46
    with open(p, "wb") as fh:
        fh.truncate(cd_size + 100)
        fh.seek(0, os.SEEK_END)
        rec_pos = fh.tell()
        fh.write(struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, 1_000_000, 1_000_000, cd_size, 100))
        fh.write(struct.pack("<4sIQI", b"PK\x06\x07", 0, rec_pos, 1))
        fh.write(_end_record(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF))
    t = time.perf_counter()
    assert pt2.read_package(p) is None
    assert "1000000 entries" in pt2.read_sources(p).error
    assert time.perf_counter() - t < 2
    # and a real archive just over the cap is refused from its end record alone
    many = make_zip(tmp_path / "real.pt2", [(f"pkg/f{i}", b"") for i in range(pt2.MAX_ENTRIES + 1)] + [(META, meta())])
    assert pt2.read_package(many) is None


def test_corrupt_deflate_does_not_hide_the_next_member(tmp_path, monkeypatch):
    bad = "pkg/data/aotinductor/model/aaa.kernel_metadata.json"
    p = make_zip(tmp_path / "c.pt2", [(bad, meta("cpu") * 50), (META, meta("cuda"))], zipfile.ZIP_DEFLATED)
    data = bytearray(p.read_bytes())
    with zipfile.ZipFile(p) as zf:
        info = zf.getinfo(bad)
    start = info.header_offset + 30 + len(bad.encode())
    data[start:start + 8] = b"\xff" * 8  # invalid deflate block type
    p.write_bytes(bytes(data))
    with pytest.raises(Exception) as err:
        with zipfile.ZipFile(p) as zf:
            zf.read(bad)
    assert "zlib" in type(err.value).__module__ or "Error" in type(err.value).__name__
    opened = []
    real_open = pt2.open_archive
    monkeypatch.setattr(pt2, "open_archive", lambda path: opened.append(path) or real_open(path))
    info = pt2.read_package(p)
    assert info is not None and info.devices == (("model", "cuda", META),)
    assert pt2.read_package(p) is info  # the verdict is cached: the zip is opened once
    assert len(opened) == 1
    sources = pt2.read_sources(p)
    assert sources.error is None and sources.models["model"].metadata["AOTI_DEVICE_KEY"] == "cuda"


def test_corrupt_lzma_member(tmp_path):
    bad = "pkg/data/aotinductor/model/aaa.kernel_metadata.json"
    p = make_zip(tmp_path / "l.pt2", [(bad, meta("cpu") * 50), (META, meta("cuda"))], zipfile.ZIP_LZMA)
    data = bytearray(p.read_bytes())
    with zipfile.ZipFile(p) as zf:
        info = zf.getinfo(bad)
    start = info.header_offset + 30 + len(bad.encode()) + 9  # past the 4-byte header and 5 properties
    data[start:start + 16] = b"\xff" * 16
    p.write_bytes(bytes(data))
    assert pt2.read_package(p).devices == (("model", "cuda", META),)


def test_dotdot_and_absolute_names_are_never_trusted(tmp_path):
    evil = ["../data/aotinductor/model/x.wrapper_metadata.json",
            "pkg/../../data/aotinductor/model/x.wrapper_metadata.json",
            "/pkg/data/aotinductor/model/x.wrapper_metadata.json",
            "pkg/data/aotinductor/../model/x.wrapper_metadata.json",
            "pkg\\data\\aotinductor\\model\\x.wrapper_metadata.json",
            "pkg/data/aotinductor/mo\x1bdel/x.wrapper_metadata.json"]
    p = make_zip(tmp_path / "e.pt2", [(n, meta("cuda")) for n in evil])
    before = sorted(os.listdir(tmp_path)), sorted(os.listdir(tmp_path.parent))
    assert pt2.read_package(p) is None
    sources = pt2.read_sources(p)
    assert sources.models == {}
    assert len(sources.unsafe_names) == len(evil)
    assert all(c.isprintable() for n in sources.unsafe_names for c in n)
    assert (sorted(os.listdir(tmp_path)), sorted(os.listdir(tmp_path.parent))) == before  # nothing written


def test_huge_member_is_skipped_and_bounded(tmp_path):
    wrapper = "pkg/data/aotinductor/model/abc.wrapper.cpp"
    big = b"/" * (pt2.MAX_SOURCE + 10)  # deflates to a few KB, claims 16 MB
    p = make_zip(tmp_path / "h.pt2", [(META.replace("abc", "big"), b"{" + b" " * pt2.MAX_METADATA + b"}"),
                                      (wrapper, big), (META, meta("cpu"))], zipfile.ZIP_DEFLATED)
    assert p.stat().st_size < 200_000
    assert pt2.read_package(p).device()[0] == "cpu"
    sources = pt2.read_sources(p)
    assert sources.models["model"].wrapper is None
    assert any("abc.wrapper.cpp" in s and "not read" in s for s in sources.skipped)


def test_member_that_lies_about_its_size_is_cut_off(tmp_path):
    p = make_zip(tmp_path / "lie.pt2", [(META, b" " * 200_000 + meta("cpu"))], zipfile.ZIP_DEFLATED)
    data = bytearray(p.read_bytes())
    name = META.encode()
    # claim 100 bytes in both the local and the central header
    local = data.index(b"PK\x03\x04")
    data[local + 22:local + 26] = struct.pack("<I", 100)
    central = data.index(b"PK\x01\x02")
    data[central + 24:central + 28] = struct.pack("<I", 100)
    assert name in data
    p.write_bytes(bytes(data))
    assert pt2.read_package(p) is None  # 100 bytes of spaces are no JSON, and nothing more is read


def test_caches_are_bounded(tmp_path):
    for i in range(6):
        p = make_zip(tmp_path / f"{i}.pt2", [(META, meta())])
        assert pt2.read_sources(p).error is None
        assert pt2.read_package(p) is not None
    kinds = [k[0] for k in pt2._cache]
    assert kinds.count("sources") == pt2._CACHE_LIMITS["sources"] and kinds.count("devices") == 6
