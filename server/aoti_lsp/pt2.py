"""Reading an AOTInductor `.pt2` package without torch: which device was it compiled for?

A package is a zip whose entries sit under a root folder named after the file stem;
`<root>/data/aotinductor/<model>/<hash>.wrapper_metadata.json` holds
`{"AOTI_DEVICE_KEY": "cpu" | "cuda", ...}` (`*.kernel_metadata.json` holds the same keys).
Reads are bounded: at most MAX_ENTRIES central-directory entries are looked at, a metadata
entry larger than MAX_METADATA bytes is skipped, and no more than that is ever decompressed.
Results are cached by (real path, mtime, size), so an editor re-checking on every keystroke
costs one `os.stat`.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from dataclasses import dataclass

MAX_ENTRIES = 20_000
MAX_METADATA = 64 * 1024
DEVICE_KEY = "AOTI_DEVICE_KEY"
_METADATA = re.compile(r"(?:^|/)data/aotinductor/([^/]+)/[^/]+_metadata\.json$")
_cache: dict[tuple[str, int, int], "PackageInfo | None"] = {}
_CACHE_MAX = 256
_reads: set[str] | None = None  # while a result is cached (cache.recording): every package path asked for


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
    AOTI package (missing, not a zip, no metadata, metadata too large or not JSON)."""
    if _reads is not None:
        _reads.add(os.path.abspath(path))
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except (OSError, ValueError):
        return None
    if not os.path.isfile(real):
        return None
    key = (real, st.st_mtime_ns, st.st_size)
    if key in _cache:
        return _cache[key]
    info = _read(real)
    if len(_cache) >= _CACHE_MAX:
        _cache.pop(next(iter(_cache)))
    _cache[key] = info
    return info


def _read(real: str) -> PackageInfo | None:
    found: list[tuple[str, str, str]] = []
    try:
        with zipfile.ZipFile(real) as zf:
            for n, entry in enumerate(zf.infolist()):
                if n >= MAX_ENTRIES:
                    break
                m = _METADATA.search(entry.filename)
                if m is None or entry.file_size > MAX_METADATA:
                    continue
                with zf.open(entry) as fh:
                    raw = fh.read(MAX_METADATA + 1)
                if len(raw) > MAX_METADATA:
                    continue
                try:
                    meta = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, ValueError):
                    continue
                device = meta.get(DEVICE_KEY) if isinstance(meta, dict) else None
                if isinstance(device, str) and device:
                    found.append((m.group(1), device, entry.filename))
    except (OSError, zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError):
        return None
    if not found:
        return None
    return PackageInfo(real, tuple(found))
