"""Reading an AOTInductor `.pt2` package without torch: bounded, never extracted, names untrusted.

A package is a zip whose entries sit under a root folder named after the file stem (none in
torch 2.6's); `<root>/data/aotinductor/<model>/<hash>.wrapper_metadata.json` holds
`{"AOTI_DEVICE_KEY": "cpu" | "cuda", ...}` (`*.kernel_metadata.json` holds the same keys).

One reader (`Archive`) serves the device look-up of the rules (`read_package`) and
`inspect` / `explain` (`read_sources`):
- the end-of-central-directory record (and its ZIP64 form) is checked before `zipfile` reads the
  directory: at most MAX_ENTRIES entries and MAX_DIRECTORY bytes, inside the file;
- a member is read only when its claimed size is under the caller's cap, and no more than the cap
  is ever decompressed (a member that lies about its size is cut off); MAX_TOTAL bytes per archive;
- a corrupt member (bad deflate/lzma/bzip2 data, CRC error) is skipped: the ones after it still count;
- member names are only matched as text: a name with `..`, a leading `/`, a backslash or a control
  character never matches a package path, and nothing is ever written to disk.
Verdicts (good or bad) are cached by (real path, mtime, size): an editor re-checking on every
keystroke costs one `os.stat`.
"""

from __future__ import annotations

import json
import lzma
import os
import re
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass, field

from aoti_lsp.analysis import reads

MAX_ENTRIES = 20_000
MAX_DIRECTORY = 8 * 1024 * 1024
MAX_METADATA = 64 * 1024
MAX_SOURCE = 16 * 1024 * 1024  # wrapper.cpp / kernel.cpp of a big model
MAX_TOTAL = 64 * 1024 * 1024  # decompressed per archive, all members together
DEVICE_KEY = "AOTI_DEVICE_KEY"
# the root folder is optional: torch 2.6's packages (`version` 0, `archive_format` "pt2", at the top)
# put `data/aotinductor/<model>/<hash>.cpp`, `<hash>_metadata.json` and `<hash>.so` at the top
_METADATA = re.compile(r"^(?:[^/]+/)?data/aotinductor/([^/]+)/[^/]+_metadata\.json$")
_SOURCE = re.compile(r"^(?:[^/]+/)?data/aotinductor/([^/]+)/([^/]+?)"
                     r"(\.wrapper\.cpp|\.kernel\.cpp|\.wrapper_metadata\.json|(?<!\.kernel)_metadata\.json|\.cpp)$")
_KERNEL_INFO = re.compile(r"^(?:[^/]+/)?data/aotinductor/([^/]+)/(?:[^/]+/)*kernel_information\.json$")
# a source entry's kind (_SOURCE's third group): torch 2.6's `<hash>.cpp` is the wrapper with its kernels
_KINDS = {".wrapper.cpp": "wrapper.cpp", ".cpp": "wrapper.cpp", ".kernel.cpp": "kernel.cpp",
          ".wrapper_metadata.json": "wrapper_metadata.json", "_metadata.json": "wrapper_metadata.json"}
_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"
_CACHE_MAX = 256
_CACHE_LIMITS = {"sources": 4}  # sources hold whole wrapper/kernel texts: keep few
_cache: dict[tuple, object] = {}
# what a corrupt member or archive raises inside zipfile and the decompressors
_ERRORS = (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError,
           ValueError, zlib.error, lzma.LZMAError, struct.error, UnicodeDecodeError, OverflowError)


# issue 23 item 12: what `inspect`/`explain` say of the old API's output (aoti-facts.md: given to
# aoti_load_package it fails with "Failed to initialize zip archive")
ELF_SO = ("an ELF shared object, not a .pt2 package: the `.so` that the deprecated `torch._export.aot_compile` "
          "writes (`aoti_load_package` cannot load it: \"Failed to initialize zip archive\"); migrate the compile to "
          "`torch.export.export` + `torch._inductor.aoti_compile_and_package`, which writes a .pt2 "
          "(`aoti-lsp --check --fix --unsafe-fixes` rewrites it; `aoti-lsp rule AOTI001`)")


class PackageError(Exception):
    """The file is not a package this reader will open (the message says why)."""


def safe_name(name: str) -> bool:
    """A member name that is plain relative text: matched against package paths, never used as one."""
    parts = name.split("/")
    return (bool(name) and not name.startswith("/") and "\\" not in name and ".." not in parts
            and not any(ord(c) < 32 or c == "\x7f" for c in name) and ":" not in parts[0])


def printable(name: str) -> str:
    """A member name for display: control characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def check_directory(fh, size: int) -> tuple[int, int, int]:
    """(entries, directory size, directory offset) from the end record, or PackageError when the
    record is missing, points outside the file, or claims more than the caps allow."""
    tail_len = min(size, 22 + 65535)
    fh.seek(size - tail_len)
    tail = fh.read(tail_len)
    at = tail.rfind(_EOCD)
    while at >= 0 and len(tail) - at < 22:
        at = tail.rfind(_EOCD, 0, at)
    if at < 0:
        fh.seek(0)
        if fh.read(4) == b"\x7fELF":
            raise PackageError(ELF_SO)
        raise PackageError("not a zip archive (no end-of-central-directory record)")
    _, disk, cd_disk, _, entries, cd_size, cd_offset, _ = struct.unpack("<4sHHHHIIH", tail[at:at + 22])
    eocd_pos = size - tail_len + at
    records = [(entries, cd_size, eocd_pos)]
    loc = tail[at - 20:at] if at >= 20 else b""
    if len(loc) == 20 and loc.startswith(_EOCD64_LOCATOR):
        # zipfile reads the ZIP64 record whenever its locator is there, whatever the plain record
        # says (issue 19 item 5: a plain record claiming 1 entry smuggled 300k past the caps); it
        # takes the record just before the locator (3.11), later versions the one the locator
        # points at: both are checked
        (rec_pos,) = struct.unpack("<Q", loc[8:16])
        for pos in sorted({rec_pos, eocd_pos - 20 - 56}):
            if not 0 <= pos <= size - 56:
                continue
            fh.seek(pos)
            rec = fh.read(56)
            if rec.startswith(_EOCD64):
                n64, _, size64, offset64 = struct.unpack("<QQQQ", rec[24:56])
                records.append((n64, size64, pos))
                if pos == rec_pos:
                    cd_offset = offset64
        if len(records) == 1:
            raise PackageError("ZIP64 end record missing")
    elif entries == 0xFFFF or cd_size == 0xFFFFFFFF or cd_offset == 0xFFFFFFFF:
        raise PackageError("ZIP64 end record without its locator")
    if disk != 0 or cd_disk != 0:
        raise PackageError("multi-disk zip archives are not read")
    for n, cd, end in records[1:] or records:  # the ZIP64 values are what zipfile reads when present
        if n > MAX_ENTRIES:
            raise PackageError(f"{n} entries in the zip directory (more than {MAX_ENTRIES} are not read)")
        if cd > MAX_DIRECTORY:
            raise PackageError(f"zip directory of {cd} bytes (more than {MAX_DIRECTORY} are not read)")
        if cd > end or n * 46 > cd:
            raise PackageError("zip directory size does not fit the file")
        entries, cd_size = n, cd
    return entries, cd_size, cd_offset


@dataclass(frozen=True)
class Member:
    name: str
    size: int  # as claimed by the directory
    compressed: int


class Archive:
    """An opened, checked zip: its members, and bounded reads of them. Use as a context manager."""

    def __init__(self, path: str):
        self.path = path
        self.skipped: list[str] = []  # "<name>: why" for members that could not be read
        self._fh = open(path, "rb")
        try:
            size = os.fstat(self._fh.fileno()).st_size
            check_directory(self._fh, size)
            self._fh.seek(0)
            self._zf = zipfile.ZipFile(self._fh)
        except PackageError:
            self._fh.close()
            raise
        except _ERRORS as exc:
            self._fh.close()
            raise PackageError(f"not a readable zip archive ({type(exc).__name__}: {exc})") from None
        infos = self._zf.infolist()[:MAX_ENTRIES]
        self.budget = MAX_TOTAL
        self.members = [Member(i.filename, i.file_size, i.compress_size) for i in infos]
        self._by_member = dict(zip(map(id, self.members), infos))

    def __enter__(self) -> "Archive":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._zf.close()
        self._fh.close()

    def safe_members(self) -> list[Member]:
        return [m for m in self.members if safe_name(m.name)]

    def read(self, member: Member, cap: int) -> bytes | None:
        """The member's bytes, or None (and a line in `skipped`) when it claims or decompresses to
        more than `cap` bytes, or its data is corrupt."""
        info = self._by_member[id(member)]
        if info.file_size > cap:
            self.skipped.append(f"{printable(member.name)}: {info.file_size} bytes (more than {cap} are not read)")
            return None
        cap = min(cap, self.budget)
        try:
            with self._zf.open(info) as fh:
                data = fh.read(cap + 1)
        except _ERRORS as exc:
            self.skipped.append(f"{printable(member.name)}: corrupt ({type(exc).__name__}: {exc})")
            return None
        self.budget -= len(data)
        if len(data) > cap:
            self.skipped.append(f"{printable(member.name)}: decompresses to more than {cap} bytes")
            return None
        return data


def open_archive(path: str | os.PathLike) -> Archive:
    try:
        return Archive(os.fspath(path))
    except OSError as exc:
        raise PackageError(f"cannot read {os.fspath(path)!r}: {exc.strerror or exc}") from None
    except (ValueError, TypeError) as exc:
        raise PackageError(str(exc)) from None


def _cached(kind: str, path, build):
    try:
        os.stat(path)  # most paths asked about do not exist: one stat settles them (no realpath)
        real = os.path.realpath(path)
        st = os.stat(real)
    except (OSError, ValueError, TypeError):
        return build(None)
    if not os.path.isfile(real):
        return build(None)
    key = (kind, real, st.st_mtime_ns, st.st_size)
    if key not in _cache:
        same_kind = [k for k in _cache if k[0] == kind]
        if len(same_kind) >= _CACHE_LIMITS.get(kind, _CACHE_MAX):
            _cache.pop(same_kind[0])
        _cache[key] = build(real)
    return _cache[key]


# -- the rules' look-up: which device ----------------------------------------------------------
@dataclass(frozen=True)
class PackageInfo:
    path: str  # real path of the .pt2 file
    devices: tuple[tuple[str, str, str], ...]  # (model name, AOTI_DEVICE_KEY, metadata entry name)

    def device(self, model: str = "model") -> tuple[str, str] | None:
        """(device type, metadata entry) of one model of the package; the only model when
        `model` is not among several. None when the package does not say."""
        named = [d for d in self.devices if d[0] == model]
        chosen = named or (self.devices if len({d[0] for d in self.devices}) == 1 else ())
        kinds = {d[1] for d in chosen}
        if len(kinds) != 1:
            return None
        wrapper = [d for d in chosen if d[2].endswith("wrapper_metadata.json")]
        return chosen[0][1], (wrapper or list(chosen))[0][2]


def read_package(path: str | os.PathLike) -> PackageInfo | None:
    """The devices a `.pt2` package was compiled for, or None when `path` is not a readable
    AOTI package (missing, not a zip, directory over the caps, no readable metadata)."""
    reads.record(os.path.abspath(path))  # a cached check result depends on this package
    return _cached("devices", path, _read_devices)


def _metadata(data: bytes | None) -> dict | None:
    if data is None:
        return None
    try:
        meta = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return meta if isinstance(meta, dict) else None


def _read_devices(real: str | None) -> PackageInfo | None:
    if real is None:
        return None
    found: list[tuple[str, str, str]] = []
    try:
        with open_archive(real) as ar:
            for m in ar.safe_members():
                match = _METADATA.match(m.name)
                if match is None:
                    continue
                device = (_metadata(ar.read(m, MAX_METADATA)) or {}).get(DEVICE_KEY)
                if isinstance(device, str) and device:
                    found.append((match.group(1), device, m.name))
    except PackageError:
        return None
    return PackageInfo(real, tuple(found)) if found else None


# -- inspect / explain: the generated sources ---------------------------------------------------
@dataclass
class ModelSources:
    name: str
    wrapper: str | None = None  # wrapper.cpp text
    wrapper_name: str | None = None
    kernels: list[tuple[str, str]] = field(default_factory=list)  # (member name, kernel.cpp text)
    metadata: dict = field(default_factory=dict)
    kernel_information: dict | None = None


@dataclass
class Sources:
    path: str
    models: dict[str, ModelSources] = field(default_factory=dict)
    members: list[Member] = field(default_factory=list)
    unsafe_names: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    error: str | None = None  # the archive could not be opened at all


def read_sources(path: str | os.PathLike) -> Sources:
    """Everything `inspect` and `explain` read from a package (bounded; cached like the devices)."""
    return _cached("sources", path, lambda real: _read_sources(real, os.fspath(path)))


def _not_read(path: str) -> str:
    """Why a path is not opened as a package (a FIFO would block, /dev/zero never end)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return "no such file" if isinstance(exc, FileNotFoundError) else (exc.strerror or str(exc))
    except ValueError as exc:
        return str(exc)
    if stat.S_ISDIR(st.st_mode):
        return "a directory, not a .pt2 file"
    return "not a regular file (a FIFO, a device or a socket): not read"


def _read_sources(real: str | None, given: str) -> Sources:
    if real is None:
        return Sources(given, error=f"{given}: {_not_read(given)}")
    out = Sources(real)
    try:
        with open_archive(real) as ar:
            out.members = list(ar.members)
            out.unsafe_names = [printable(m.name) for m in ar.members if not safe_name(m.name)]
            for m in ar.safe_members():
                src, info = _SOURCE.match(m.name), _KERNEL_INFO.match(m.name)
                if src is None and info is None:
                    continue
                model = out.models.setdefault((src or info).group(1), ModelSources((src or info).group(1)))
                if info is not None:
                    model.kernel_information = _metadata(ar.read(m, MAX_SOURCE))
                    continue
                kind = _KINDS[src.group(3)]
                if kind == "wrapper_metadata.json":
                    model.metadata = _metadata(ar.read(m, MAX_METADATA)) or model.metadata
                    continue
                data = ar.read(m, MAX_SOURCE)
                if data is None:
                    continue
                text = data.decode("utf-8", "replace")
                if kind == "wrapper.cpp":
                    model.wrapper, model.wrapper_name = text, m.name
                else:
                    model.kernels.append((m.name, text))
            out.skipped = list(ar.skipped)
    except PackageError as exc:
        out.error = f"{given}: {exc}"
    return out
