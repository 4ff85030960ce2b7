"""Which files a check covers: Python files under the given paths, minus .gitignore'd
ones (asked of git itself when the folder is a work tree) and configured excludes; and the
project they belong to (its root, and every Python file in it, summarised for cross-file rules)."""

from __future__ import annotations

import os

from aoti_lsp.analysis.records import replace
from aoti_lsp.project.config import Config, _compiled, nearest

PY_SUFFIXES = (".py", ".pyi", ".ipynb")  # notebooks: notebook.py


def _in_work_tree(folder: str) -> bool:
    """Whether git could call `folder` part of a work tree: a `.git` at or above it, or git's own
    variables set. A tree outside git (an unpacked archive, a CI export) then starts no process
    (~5 ms: the subprocess module and a failing `git`)."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return True
    # as git finds it: from the physical folder
    return nearest(os.path.realpath(folder), lambda f: os.path.exists(os.path.join(f, ".git"))) is not None


def _git_files(folder: str, listing=None) -> list[str] | None:
    """The files git lists under `folder` (`listing`: its gitls.Listing, started earlier), or
    None: not a work tree, or git failed."""
    listing = listing or start_listing(folder)
    out = listing.output() if listing is not None else None
    if out is None:
        return None
    return [os.path.join(folder, p) for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def start_listing(folder: str):
    """`git ls-files` of a folder started now (a gitls.Listing), for `discover(..., listings)`;
    None where git is not asked (not a folder, not a work tree)."""
    if not (os.path.isdir(folder) and _in_work_tree(folder)):
        return None
    from aoti_lsp.project import gitls  # here: a tree outside git starts no process

    return gitls.Listing(folder)


def _walk(folder: str, config: Config) -> list[str]:
    """Python files below `folder`, excluded folders and files left out (no .gitignore: not a work tree)."""
    found = []
    named = _name_pattern(config)
    for root, dirs, files in os.walk(folder):
        if named is None:
            dirs[:] = sorted(d for d in dirs if not config.excluded(os.path.join(root, d), folder))
            found.extend(f for f in (os.path.join(root, n) for n in sorted(files) if n.endswith(PY_SUFFIXES))
                         if not config.excluded(f, folder))
        else:  # bare names only (the default): a name decides, the folders above are already in
            dirs[:] = sorted(d for d in dirs if not named(d))
            found.extend(os.path.join(root, n) for n in sorted(files) if n.endswith(PY_SUFFIXES) and not named(n))
    return found


def _name_pattern(config: Config):
    """A matcher of file and folder names when every exclude pattern is a bare name; else None."""
    literal, globs, anchored = _compiled(config.exclude)
    if anchored:
        return None
    # a set for plain names (the default's: no regex to compile, ~0.2 ms), a regex per glob
    return lambda name: name in literal or any(g(name) for g in globs)


def _excluder(base: str, config: Config):
    """config.excluded(f, base) for the files of one git listing, fast: with only bare-name
    patterns (the default), a folder is decided once and a file by its name."""
    named = _name_pattern(config)
    if named is None:
        return lambda f: config.excluded(f, base)
    folders: dict[str, bool] = {}

    def excluded(f: str) -> bool:
        folder, name = os.path.split(f)
        if folder not in folders:
            folders[folder] = config.excluded(folder, base) if folder else False
        return folders[folder] or named(name)

    return excluded


def checkable(path: str) -> bool:
    """Whether a named file is checked: a .py/.pyi, or a script with a python shebang (what
    pre-commit's `types: [python]` passes too)."""
    if path.endswith(PY_SUFFIXES):
        return True
    try:
        with open(path, "rb") as fh:
            first = fh.readline(256)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def not_checked(paths: list[str]) -> list[str]:
    """The named files that are not checked (a text file): a warning, never a pass."""
    return [p for p in paths if os.path.isfile(p) and not checkable(p)]


def discover(paths: list[str], config: Config, listings: dict | None = None) -> tuple[list[str], list[str]]:
    """(python files to check, error messages for paths that do not exist). A named file
    that is not Python is left out (not_checked says which). `listings`: folder -> its git
    listing, already started (start_listing)."""
    files, errors = [], []
    for path in paths:
        if os.path.isfile(path):
            if checkable(path) and not config.excluded(path, os.path.dirname(path) or "."):
                files.append(path)
        elif os.path.isdir(path):
            listed = _git_files(path, (listings or {}).get(path))
            if listed is None:
                files.extend(f for f in _walk(path, config) if os.path.isfile(f))  # not a dangling link
            else:  # git also lists files deleted from the work tree but not from the index
                excluded = _excluder(path, config)
                files.extend(f for f in listed if f.endswith(PY_SUFFIXES) and not excluded(f) and os.path.isfile(f))
        elif os.path.islink(path):
            errors.append(f"{path}: a symlink that leads nowhere (a loop, or its target is missing)")
        else:
            errors.append(f"{path}: no such file or directory")
    seen: dict = {}  # identity -> index in unique
    unique: list[str] = []
    for f in files:
        spelt = os.path.normpath(f) if not f.startswith("./") else f[2:]
        key = identity(f)
        if key in seen:  # one file by two paths (a symlink alias): checked and fixed once
            i = seen[key]
            if os.path.islink(unique[i]) and not os.path.islink(spelt):
                unique[i] = spelt  # by the file's own name rather than the alias
            continue
        seen[key] = len(unique)
        unique.append(spelt)
    return unique, errors


def identity(path: str):
    """The file a path reaches (a symlink alias and its target are one file)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return os.path.abspath(path)
    return (st.st_dev, st.st_ino)


def find_root(paths: list[str]) -> str:
    """The project root, found as ruff finds it: the nearest folder at or above the first path
    holding a `pyproject.toml` (never above a git work tree's top), else that work tree's top,
    else the common parent of the paths. Absolute."""
    return _marked_root(paths[0] if paths else ".") or _common_parent(paths or ["."])


def by_root(paths: list[str]) -> list[tuple[str, list[str]]]:
    """The named paths grouped by project (pre-commit in a monorepo names files of several):
    (root, paths) in the order first named. Paths in no project share the common parent."""
    groups: dict[str, list[str]] = {}
    loose = []
    for path in paths:
        root = _marked_root(path)
        if root is None:
            loose.append(path)
        else:
            groups.setdefault(root, []).append(path)
    if loose:
        groups.setdefault(_common_parent(loose), []).extend(loose)
    return list(groups.items())


def _marked_root(path: str) -> str | None:
    start = os.path.abspath(path)
    folder = start if os.path.isdir(start) else os.path.dirname(start)
    return nearest(folder, lambda f: os.path.isfile(os.path.join(f, "pyproject.toml"))
                   or os.path.exists(os.path.join(f, ".git")))


def _common_parent(paths: list[str]) -> str:
    absolute = [os.path.abspath(p) for p in paths]
    try:
        common = os.path.commonpath(absolute)
    except ValueError:  # different drives
        common = absolute[0]
    return common if os.path.isdir(common) else os.path.dirname(common)


def rooted(config: Config, root: str) -> Config:
    """The project's config: without a pyproject.toml, relative patterns match from the root
    (the CLI and the server then share one cache file)."""
    return config if config.source is not None else replace(config, root=root)


def project_files(paths: list[str], config: Config, root: str, needed=None,
                  meanwhile=None) -> tuple[list[str], list[str] | None, list[str]]:
    """(files to check, files to summarise, errors). The files to check are the named ones (as
    `discover` finds them, spelt as given); the files to summarise are every Python file of the
    project at `root` plus the named ones (a named file that is .gitignore'd is still checked,
    and summarised with the project: the user asked for it; one that is excluded is not).
    `needed(files to check)`: whether other files' summaries can matter to them; when not, the
    project is not listed and the files to summarise are None (only the named ones are read).
    `meanwhile()`: run while git lists the project (the imports the scan will need)."""
    check, errors = discover(paths, config)
    if any(os.path.isdir(p) and os.path.abspath(p) == root for p in paths):
        return check, check, errors  # the whole project is named: one listing serves both
    if needed is not None and not needed(check):
        return check, None, errors
    spelt = {identity(f) for f in check}
    rel = os.path.relpath(root) if not os.path.isabs(paths[0] if paths else ".") else root
    scan = list(check)
    listing = start_listing(rel)
    try:
        if meanwhile is not None:  # while git lists the project
            meanwhile()
        listed = discover([rel], config, {rel: listing} if listing is not None else None)[0]
    finally:
        if listing is not None:
            listing.close()
    for f in listed:
        a = identity(f)
        if a not in spelt:
            spelt.add(a)
            scan.append(f)
    return check, scan, errors
