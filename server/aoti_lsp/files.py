"""Which files a check covers: Python files under the given paths, minus .gitignore'd
ones (asked of git itself when the folder is a work tree) and configured excludes."""

from __future__ import annotations

import os
import subprocess

from aoti_lsp.config import Config

PY_SUFFIXES = (".py", ".pyi")


def _git_files(folder: str) -> list[str] | None:
    try:
        out = subprocess.run(
            ["git", "-C", folder, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            capture_output=True, timeout=60, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [os.path.join(folder, p) for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def _walk(folder: str, config: Config) -> list[str]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not config.excluded(os.path.join(root, d), folder))
        found.extend(os.path.join(root, f) for f in sorted(files))
    return found


def discover(paths: list[str], config: Config) -> tuple[list[str], list[str]]:
    """(python files to check, error messages for paths that do not exist)."""
    files, errors = [], []
    for path in paths:
        if os.path.isfile(path):
            if not config.excluded(path, os.path.dirname(path) or "."):
                files.append(path)
        elif os.path.isdir(path):
            listed = _git_files(path)
            candidates = listed if listed is not None else _walk(path, config)
            files.extend(
                f for f in candidates
                if f.endswith(PY_SUFFIXES) and os.path.isfile(f) and not config.excluded(f, path)
            )
        else:
            errors.append(f"{path}: no such file or directory")
    seen, unique = set(), []
    for f in files:
        key = os.path.normpath(f)
        if key not in seen:
            seen.add(key)
            unique.append(os.path.normpath(f) if not f.startswith("./") else f[2:])
    return unique, errors
