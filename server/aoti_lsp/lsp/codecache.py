"""The code attrs and cattrs generate at the server's start, kept between starts (as .pyc files are).

lsprotocol defines ~570 attrs classes. attrs compiles generated source for each class's methods,
and cattrs for each type pygls converts: ~940 `compile()` calls, ~105 ms of a ~280 ms start
(issue 23 item 5). The same source yields the same code object on the same Python, so the code
objects are stored with marshal, keyed by (file name, mode, source digest), in
`$XDG_CACHE_HOME/aoti-lsp/` (default `~/.cache/aoti-lsp/`): a folder only this tool writes, one
file per Python bytecode version, never in a project. It is read only from a folder and a file
you own that nobody else can write; a missing, foreign or corrupt one is ignored, and compiling
happens as before.
"""

import __future__
import hashlib
import importlib.util
import marshal
import os
import stat
import sys
import tempfile

# a file that holds more than this keeps only what the last start used (no unbounded growth)
MAX_ENTRIES = 10_000
MAX_BYTES = 64 << 20

_codes: dict = {}  # key -> code object, read from the file
_new: dict = {}  # compiled this start
_used: set = set()
_counts = [0, 0]  # read from the cache, compiled
_path: str | None = None
_installed = False


def cache_path() -> str | None:
    """The cache file, or None where no absolute cache folder is known (no HOME: `~` would be
    a folder of that name in the working directory, a user's project)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None
    tag = importlib.util.MAGIC_NUMBER.hex() + "-" + sys.implementation.cache_tag
    return os.path.join(base, "aoti-lsp", f"generated-code-{tag}.marshal")


def _yours(st: os.stat_result, kind) -> bool:
    """A `kind` (stat.S_ISDIR/S_ISREG) that you own and nobody else can write: only then is
    the code in it run (as Python runs your own .pyc files)."""
    return kind(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _load(path: str) -> dict:
    try:
        if not _yours(os.lstat(os.path.dirname(path)), stat.S_ISDIR):  # a symlink is not a folder here
            return {}
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not _yours(st, stat.S_ISREG) or st.st_size > MAX_BYTES:
                return {}
            data = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


def _compiler(module):
    """A `compile` for `module`: its future flags (what its own calls inherit), and the cache."""
    flags = 0
    for name, value in vars(module).items():
        if isinstance(value, __future__._Feature) and getattr(__future__, name, None) is value:
            flags |= value.compiler_flag

    def compile_(source, filename, mode, *args, **kwargs):
        if args or kwargs or not isinstance(source, str) or not isinstance(filename, str):
            return compile(source, filename, mode, *args, **kwargs)
        key = (filename, mode, flags, hashlib.sha1(source.encode(), usedforsecurity=False).digest())
        code = _codes.get(key)
        if code is not None:
            _counts[0] += 1
        elif (code := _new.get(key)) is None:
            code = _new[key] = compile(source, filename, mode, flags, True)
            _counts[1] += 1
        _used.add(key)
        return code

    return compile_


def install() -> None:
    """Reads the cache and gives attrs' and cattrs' code generators a `compile` that uses it.
    Call before lsprotocol is imported."""
    global _path, _installed
    if _installed or os.environ.get("AOTI_LSP_NO_CODE_CACHE"):
        return
    try:
        import attr._make
        import cattrs.gen
        import cattrs.gen.typeddicts

        modules = (attr._make, cattrs.gen, cattrs.gen.typeddicts)
        _path = cache_path()
    except Exception:  # another attrs/cattrs layout: the server starts as before
        return
    if _path is None:
        return
    _codes.update(_load(_path))
    for module in modules:
        # they call the builtin by its global name: a module global comes first
        module.compile = _compiler(module)
    _installed = True


def save() -> bool:
    """Writes the cache when this start compiled something new (atomically: a file of its own,
    renamed over). Returns whether it wrote."""
    if not _installed or not _new or _path is None:
        return False
    keep = {**_codes, **_new}
    if len(keep) > MAX_ENTRIES:
        keep = {k: v for k, v in keep.items() if k in _used}
    try:
        os.makedirs(os.path.dirname(_path), mode=0o700, exist_ok=True)
        if not _yours(os.lstat(os.path.dirname(_path)), stat.S_ISDIR):
            return False  # another user's folder (a shared XDG_CACHE_HOME), or a symlink
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(_path), prefix=".generated-code-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                marshal.dump(keep, f)
            os.replace(tmp, _path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    _codes.update(_new)
    _new.clear()
    return True


def counts() -> tuple[int, int]:
    """(code objects this process took from the cache, compiled): for the log and tests."""
    return _counts[0], _counts[1]
