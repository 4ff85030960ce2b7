"""The project's files read as text where a plan must know what else names something: another
caller of a function, a C++ runner, a build file. A bounded walk, done only where a plan asks,
once per project version."""

from __future__ import annotations

import os

from aoti_lsp.analysis.source import absolute

SKIP_DIRS = {".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", "build", "dist", ".aoti_lsp_cache",
             ".tox", ".mypy_cache", ".pytest_cache", "site-packages"}
MOST = 5000  # files read at most; past it nothing is concluded from what was not found


class TooMany(Exception):
    """The project holds more files than a plan reads."""


def tree(root: str, wanted, most: int = MOST, strict: bool = False):
    """The project's files whose name `wanted` accepts (build, VCS and environment folders
    skipped), in a stable order, `most` of them at most; `strict`: raises TooMany past them (a
    caller concluding from what is absent), else stops (one looking for what is there)."""
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        if any(name.endswith(".so") for name in files):
            continue  # an artifact folder: what stands beside a .so was written with it
        for name in sorted(files):
            if wanted(name):
                seen += 1
                if seen > most:
                    if strict:
                        raise TooMany(root)
                    return
                yield absolute(os.path.join(folder, name))


def mentioning(ctx, word: str) -> list | None:
    """Contexts of the project's Python files that spell `word`, this file first; None where
    that cannot be told (no project root, more files than a plan reads): a caller concluding
    from what is absent must then not conclude."""
    project = ctx.project
    root = getattr(project, "root", None) if project is not None else None
    if not root:
        return None
    here = ctx.source.abspath
    # the tree is read once per project version (the editor plans on every analysis)
    paths = project.memo(f"spelling {root} {word}", lambda: _spelling(root, word.encode()))
    if paths is None:
        return None
    out = [ctx]
    for path in paths:
        other = project.context(path) if path != here else None
        if other is not None:
            out.append(other)
    return out


def _spelling(root: str, data: bytes) -> list[str] | None:
    out = []
    try:
        for path in tree(root, lambda name: name.endswith(".py"), strict=True):
            try:
                with open(path, "rb") as fh:
                    if data in fh.read(4 << 20):
                        out.append(path)
            except OSError:
                continue
    except TooMany:
        return None
    return out
