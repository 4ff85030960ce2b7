"""Golden fixtures (TorchFix style), found under tests/fixtures/<CODE>/:

- `<name>.py`          -> `<name>.expected`: every finding of the whole rule set, one per line
                          `row:col-endrow:endcol CODE message` (1-based, code-point columns)
- `<name>.in.py`       -> `<name>.out.py`: the file after `--fix --unsafe-fixes`
- `<name>/` (a folder) -> `<name>.expected`: the folder checked as one project (cross-file);
                          lines are prefixed with the file's path inside the folder.
Run `pytest tests/test_goldens.py --update-goldens` to rewrite them, then read the diff.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.fixes.fixer import fix_source
from aoti_lsp.analysis.positions import UTF32
from aoti_lsp.project.project import Project, summarize
from aoti_lsp.analysis.source import Source

FIXTURES = Path(__file__).parent / "fixtures"


def render(findings, source, prefix: str = "") -> str:
    lines = []
    for f in findings:
        (r, c), (er, ec) = source.lines.position(f.start, UTF32), source.lines.position(f.end, UTF32)
        lines.append(f"{prefix}{r + 1}:{c + 1}-{er + 1}:{ec + 1} {f.code} {f.message}")
    return "\n".join(lines) + ("\n" if lines else "")


def check_file(path: Path) -> str:
    source = Source(path.read_bytes(), str(path))
    return render(analyze(source, Config()).findings, source)


def check_project(folder: Path) -> str:
    files = sorted(folder.rglob("*.py"))
    sources = [Source(f.read_bytes(), str(f)) for f in files]
    project = Project()
    for s in sources:
        project.update(s.path, summarize(s))
    out = []
    for s in sources:
        rel = Path(s.path).relative_to(folder).as_posix()
        out.append(render(analyze(s, Config(), project=project).findings, s, prefix=f"{rel}:"))
    return "".join(out)


def fix_file(path: Path) -> str:
    return fix_source(Source(path.read_bytes(), str(path)), Config(), unsafe=True).data.decode()


def cases():
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        for item in sorted(folder.iterdir()):
            if item.is_dir():
                yield "project", item, item.with_name(item.name + ".expected")
            elif item.name.endswith(".in.py"):
                yield "fix", item, item.with_name(item.name[: -len(".in.py")] + ".out.py")
            elif item.suffix == ".py" and not item.name.endswith(".out.py"):
                yield "check", item, item.with_suffix(".expected")


# -- the package read from disk (AOTI102/disk_package.py) ---------------------------------------
# The real CUDA package: ../shared's (2.4 MB, beside the repository, absent from users' clones),
# else tests/real_cuda's (the same, less its .so). This stand-in holds only what the reader looks at,
# copied from it: the zip layout and the wrapper metadata. AOTI_SHARED_DIR moves ../shared (set it
# to a missing folder to check that the suite passes without it).
SHARED = Path(os.environ.get("AOTI_SHARED_DIR") or Path(__file__).resolve().parents[1].parent / "shared")
_WHOLE = SHARED / "fixtures" / "cuda" / "LastItemGather.pt2"
# else the same real package vendored less its 2.3 MB .so (tests/real_cuda/README.md)
REAL_CUDA_PACKAGE = _WHOLE if _WHOLE.is_file() else Path(__file__).parent / "real_cuda" / "LastItemGather.pt2"
STAND_IN = FIXTURES / "AOTI102" / "LastItemGather.pt2"
STAND_IN_METADATA = (b'{"AOTI_DEVICE_KEY": "cuda", "AOTI_PLATFORM": "linux", "AOTI_MACHINE": "x86_64", '
                     b'"AOTI_CPU_ISA": "AVX512 AVX512_VNNI AMX_TILE", "AOTI_COMPUTE_CAPABILITY": "90"}')


def stand_in_package() -> bytes:
    """The stand-in's bytes, built the same way every time (fixed dates)."""
    buf = io.BytesIO()
    entries = {
        "LastItemGather/archive_format": b"pt2",
        "LastItemGather/archive_version": b"0",
        "LastItemGather/data/aotinductor/model/cow5wsvoder73t3j2fpdgykd4wbamkmmcjwgofes3yjf36bn6inr.wrapper_metadata.json":
            STAND_IN_METADATA,
    }
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, data in entries.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()
