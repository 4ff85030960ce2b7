"""Minimal `.pt2` packages built from the generated texts in tests/packages/ (no .so, no torch)."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

PACKAGES = Path(__file__).parent / "packages"
_REPO = Path(__file__).resolve().parents[1]
# the real CUDA package: ../shared's whole one beside the repository (CI, the main checkout; or
# AOTI_SHARED), else the one vendored in tests/real_cuda (the same package less its .so)
VENDORED_PT2 = Path(__file__).parent / "real_cuda" / "LastItemGather.pt2"
_WHOLE = Path(os.environ.get("AOTI_SHARED", _REPO.parent / "shared")) / "fixtures" / "cuda" / "LastItemGather.pt2"
SHARED_PT2 = _WHOLE if _WHOLE.is_file() else VENDORED_PT2


def build(folder: Path, out: Path, provenance: bool = False, replace: dict[str, str] | None = None) -> Path:
    """`<stem>/data/aotinductor/model/<hash>.<member>` for each text of `folder` (and its
    kernel_information.json when `provenance`), with `replace` applied to the texts."""
    root = f"{out.stem}/data/aotinductor/model"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{out.stem}/archive_format", "pt2")
        for name, member in (("wrapper.cpp", "cw.wrapper.cpp"), ("wrapper_metadata.json", "cw.wrapper_metadata.json"),
                             ("kernel.cpp", "ck.kernel.cpp")):
            if (folder / name).exists():
                zf.writestr(f"{root}/{member}", _text(folder / name, replace))
        if provenance:
            zf.writestr(f"{root}/kernel_information.json", _text(folder / "kernel_information.json", replace))
    return out


def _text(path: Path, replace: dict[str, str] | None) -> str:
    text = path.read_text(encoding="utf-8")
    for old, new in (replace or {}).items():
        text = text.replace(old, new)
    return text
