"""The on-disk cache: `.aoti_lsp_cache/` at the project root (with a `.gitignore` holding `*`,
like `.ruff_cache`), one file per tool build and configuration.

Per file (by its absolute path; a cache moved with its root is ignored): the content hash, the (mtime_ns, size, inode) it was
hashed at (so a warm run stats instead of reading: a file whose stat is unchanged is not opened), whether a rule would check it, and its
summary. Per checked file: its findings, valid only for the same content hash and the same
*project digest* (every file's summary) and the same `.pt2` packages read on disk. A run whose
output does not need fix edits (text) stores lazy fixes as stubs (findings.portable: libcst is
never imported for them); a run that needs them (JSON) takes a result holding stubs for a miss,
checks the file again and stores it with its edits built.

Never trusted (a repository can ship the folder): a file that is truncated, corrupt, written by
another build or configuration, or of the wrong shape is ignored and rebuilt. It is plain JSON
(plaindata.py: only this package's data classes and enums are built from it), never pickle, so a
cache file cannot run code. The folder is used only when it is a real folder (not a symlink)
owned by this user, and everything in it is reached through its descriptor: a file is read only
when it is a regular file of ours (opened without following a symlink, never blocking on a FIFO,
at most MAX_BYTES), written through a fresh temporary file and a rename, and pruning removes only
regular files named as this tool names them. Where the root is not writable, no cache.
"""

from __future__ import annotations

import os
import stat
import sys
import time

try:  # hashlib loads OpenSSL first (3-10 ms of a ~80 ms run); blake2b is built into CPython
    from _blake2 import blake2b
except ImportError:  # pragma: no cover
    from hashlib import blake2b

from aoti_lsp import __version__
from aoti_lsp.project import plaindata
from aoti_lsp.analysis.records import record, replace
from aoti_lsp.analysis.findings import Finding, Related, needs_edits, portable
from aoti_lsp.logs import logger

DIR = ".aoti_lsp_cache"
FORMAT = 4  # 2: JSON (plaindata), no longer pickle; 3: stamps hold the inode; 4: entries hold `reach`
MAGIC = b"AOTI-LSP-CACHE\n"
RACY_NS = 2_000_000_000  # a file changed this close to the run may change again unseen: re-hash it
KEEP = 8  # cache files kept per root (one per tool build and configuration); older ones are removed
MAX_BYTES = 256 << 20  # a cache file larger than this is not read (a planted one must not fill memory)
SUFFIX = ".json"


def content_hash(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def _tool_key() -> str:
    """This build of the tool: version, Python, tree-sitter's build, and the package's own files
    (rules, queries, data), so an edited rule invalidates without a version bump. Files are
    known by their stat (path, mtime_ns, size), never read: a run must not read ~60 files to
    find its cache (an edit, a reinstall or a checkout changes the mtime)."""
    h = blake2b(digest_size=16)
    h.update(f"{FORMAT}|{__version__}|{sys.version_info[:2]}".encode())
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the aoti_lsp package
    queries = [f for f in _module_folders("aoti_lsp.queries") if not f.startswith(pkg + os.sep)]  # editable: apart
    for folder in (pkg, *queries, *_module_folders("tree_sitter", "tree_sitter_python")):
        _stat_tree(h, folder)
    return h.hexdigest()


def _module_folders(*names: str) -> list[str]:
    """The installed folders of modules, found without importing them (a warm run never does)."""
    from aoti_lsp import find_spec

    out = []
    for name in names:
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):
            spec = None
        out.extend(spec.submodule_search_locations or [] if spec is not None else [])
    return out


def _stat_tree(h, top: str) -> None:
    walked = []
    for folder, dirs, files in os.walk(top):  # pruned as it goes (sorting the walk first listed every __pycache__)
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        walked.append((folder, files))
    for folder, files in sorted(walked):
        rel = os.path.relpath(folder, top)  # once per folder: relpath is slow
        for name in sorted(files):
            if name.endswith((".py", ".scm", ".toml", ".json", ".so", ".pyd")):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                h.update(f"{name if rel == os.curdir else os.path.join(rel, name)}\0{st.st_mtime_ns}\0{st.st_size}\0".encode())


_TOOL: str | None = None


def tool_key() -> str:
    global _TOOL
    if _TOOL is None:
        _TOOL = _tool_key()
    return _TOOL


def key_of(config) -> str:
    """The cache file's name: tool build and the whole configuration (a config change invalidates)."""
    return blake2b(f"{tool_key()}|{config!r}".encode(), digest_size=12).hexdigest()


def fingerprint(value) -> str:
    """A stable digest of a summary (sets sorted: their order changes from one process to the next)."""
    return blake2b(repr(_canon(value)).encode(), digest_size=16).hexdigest()


def _canon(v):
    if isinstance(v, dict):
        return ("d", tuple(sorted((repr(_canon(k)), _canon(x)) for k, x in v.items())))
    if isinstance(v, (set, frozenset)):
        return ("s", tuple(sorted(repr(_canon(x)) for x in v)))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_canon(x) for x in v))
    fields = getattr(type(v), "__match_args__", None)  # a record (or a dataclass): by its fields
    if fields is not None and not isinstance(v, type):
        return (type(v).__qualname__, tuple((f, _canon(getattr(v, f))) for f in fields))
    return repr(v)


@plaindata.allow
@record("stamp", "hash", "checks", "summary", "fingerprint", "reach")
class Entry:
    def __init__(self, stamp: tuple[int, int, int] | None, hash: str, checks: bool, summary: dict, fingerprint: str,
                 reach: bool = True):
        self.stamp = stamp  # (mtime_ns, size, inode) the hash was taken at; None: re-hash next time
        self.hash = hash
        self.checks = checks  # would any rule check this file (before cross-file facts are known)
        self.summary = summary
        self.fingerprint = fingerprint
        self.reach = reach  # a rule looks at it and it spells an export, AOT compile or load (runner.REACH)


def _valid_gate(g) -> tuple | None:
    """A stored gate of the right shape (tuples of two tuples of strings), else None: computed again."""
    ok = isinstance(g, tuple) and all(
        isinstance(c, tuple) and len(c) == 2 and all(isinstance(part, tuple) and all(isinstance(t, str) for t in part)
                                                     for part in c) for c in g)
    return g if ok else None


def _valid_entry(e) -> bool:
    return (isinstance(e, Entry) and isinstance(e.hash, str) and isinstance(e.checks, bool)
            and isinstance(e.summary, dict) and isinstance(e.fingerprint, str) and isinstance(e.reach, bool)
            and (e.stamp is None or (isinstance(e.stamp, tuple) and len(e.stamp) == 3
                                     and all(isinstance(x, int) for x in e.stamp))))


class Cache:
    """One project's cache for one configuration (a cache file written for another root is ignored)."""

    def __init__(self, root: str, config, enabled: bool = True):
        self.root = os.path.abspath(root)
        self.key = key_of(config)
        self.name = f"{self.key}{SUFFIX}"
        self.path = os.path.join(self.root, DIR, self.name)
        self.enabled = enabled
        self.started = time.time_ns()
        self.entries: dict[str, Entry] = {}
        self.results: dict[str, tuple] = {}  # rel -> (hash, digest, findings, deps)
        self.seen: set[str] = set()
        self.partial = False  # keep_unseen
        self.gate: tuple | None = None  # runner.gate under this build and configuration
        self.dirty = False
        if enabled:
            self._load()

    # -- paths ---------------------------------------------------------------------------------
    def rel(self, path: str) -> str:
        """The key of a file: its absolute path (the whole cache is for one root)."""
        return fast_abspath(path)

    # -- reading -------------------------------------------------------------------------------
    def _load(self) -> None:
        folder = _folder(self.root, create=False)
        if folder is None:
            return
        try:
            blob = _read(folder, self.name)
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError):
                logger(__name__).info("ignoring cache %s: %s", self.path, exc)
                self.dirty = True
            return
        finally:
            os.close(folder)
        try:
            data = self._decode(blob)
        except Exception as exc:  # anything wrong: ignored, rebuilt, overwritten on save
            logger(__name__).info("ignoring cache %s: %s", self.path, exc)
            self.dirty = True
            return
        self.entries, self.results, self.gate = data

    def set_gate(self, clauses: tuple) -> None:
        if clauses != self.gate:
            self.gate, self.dirty = clauses, True

    def _decode(self, blob: bytes):
        if not blob.startswith(MAGIC):
            raise ValueError("not an aoti-lsp cache")
        head = len(MAGIC)
        digest, payload = blob[head:head + 32], blob[head + 32:]
        if blake2b(payload, digest_size=16).hexdigest().encode() != digest:
            raise ValueError("checksum mismatch (truncated or corrupt)")
        data = plaindata.loads(payload)
        if not (isinstance(data, dict) and data.get("key") == self.key and data.get("format") == FORMAT
                and data.get("root") == self.root):
            raise ValueError("written by another build, configuration or root")
        entries, results = data.get("entries"), data.get("results")
        if not isinstance(entries, dict) or not isinstance(results, dict):
            raise ValueError("wrong shape")
        if not all(isinstance(k, str) and _valid_entry(e) for k, e in entries.items()):
            raise ValueError("wrong shape")
        for k, r in results.items():
            if not (isinstance(k, str) and isinstance(r, tuple) and len(r) == 4 and isinstance(r[0], str)
                    and isinstance(r[1], str) and isinstance(r[2], list) and isinstance(r[3], tuple)
                    and all(isinstance(f, Finding) and all(isinstance(x, Related) for x in f.related) for f in r[2])):
                raise ValueError("wrong shape")
        return entries, results, _valid_gate(data.get("gate"))

    def lookup(self, path: str) -> Entry | None:
        """The cached entry when the file's (mtime_ns, size, inode) is the one it was hashed at: the
        file is not opened."""
        rel = self.rel(path)
        entry = self.entries.get(rel)
        if entry is None or entry.stamp is None:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        if (st.st_mtime_ns, st.st_size, st.st_ino) != entry.stamp:  # a file renamed over it: another inode
            return None
        self.seen.add(rel)
        return entry

    def keep_unseen(self) -> None:
        """This run reads only some of the project's files: the others' entries are kept, not
        dropped as gone (a run that lists the project drops those of deleted files), and so are
        the results (its digest covers only what it read; a lookup still checks each result's
        digest against the whole project's)."""
        self.seen.update(self.entries)
        self.partial = True

    def store(self, path: str, stamp: tuple[int, int, int] | None, hash_: str, checks: bool, summary: dict,
              reach: bool = True) -> Entry:
        if stamp is not None and stamp[0] >= self.started - RACY_NS:
            stamp = None  # racy: the same (mtime, size) could still hide an edit
        rel = self.rel(path)
        old = self.entries.get(rel)
        fp = old.fingerprint if old is not None and old.hash == hash_ and old.summary == summary else fingerprint(summary)
        entry = Entry(stamp, hash_, checks, summary, fp, reach)
        if old != entry:
            self.entries[rel] = entry
            self.dirty = True
        self.seen.add(rel)
        return entry

    # -- results -------------------------------------------------------------------------------
    def digest(self, paths) -> str:
        """Every summary of the project: a cached result is valid only while this is unchanged."""
        h = blake2b(digest_size=16)
        for rel in sorted(self.rel(p) for p in paths):
            e = self.entries.get(rel)
            if e is not None and e.summary:
                h.update(f"{rel}\0{e.fingerprint}\0".encode())
        return h.hexdigest()

    def result(self, path: str, digest: str, spell, edits: bool = True) -> list | None:
        """Cached findings of a file, or None. `spell(abs path) -> path as this run writes it`;
        `edits`: the caller needs the fixes' edits (a result stored without them is a miss)."""
        rel = self.rel(path)
        entry, cached = self.entries.get(rel), self.results.get(rel)
        if entry is None or cached is None or cached[0] != entry.hash or cached[1] != digest:
            return None
        if edits and needs_edits(cached[2]):
            return None
        if any(_stamp(p) != s for p, s in cached[3]):
            return None  # a .pt2 package it read changed
        return [replace(f, path=path, related=[
            r if r.path is None else replace(r, path=spell(r.path)) for r in f.related]) for f in cached[2]]

    def store_result(self, path: str, digest: str, findings: list, deps: set[str], edits: bool = True) -> None:
        """`edits`: lazy fixes stored built (else as stubs, unless built already)."""
        rel = self.rel(path)
        entry = self.entries.get(rel)
        if entry is None:
            return
        # paths absolute in the cache; spelt again as the next run names its files
        stored = [replace(portable(f, edits), path=rel, related=[
            r if r.path is None else replace(r, path=fast_abspath(r.path)) for r in f.related]) for f in findings]
        self.results[rel] = (entry.hash, digest, stored, tuple(sorted((p, _stamp(p)) for p in deps)))
        self.dirty = True

    # -- writing -------------------------------------------------------------------------------
    def save(self, digest: str | None = None) -> None:
        """Write back (atomically): entries of files seen in this run, results still valid."""
        if not self.enabled:
            return
        entries = {k: e for k, e in self.entries.items() if k in self.seen}
        results = {k: r for k, r in self.results.items()
                   if k in entries and (digest is None or self.partial or r[1] == digest)}
        if not self.dirty and len(entries) == len(self.entries) and len(results) == len(self.results):
            return
        try:
            payload = plaindata.dumps({"format": FORMAT, "key": self.key, "root": self.root, "entries": entries,
                                       "results": results, "gate": self.gate})
        except (TypeError, ValueError, RecursionError) as exc:  # a summary holding something else: a bug, no cache
            logger(__name__).warning("cannot store the cache %s: %s", self.path, exc)
            self.enabled = False
            return
        blob = MAGIC + blake2b(payload, digest_size=16).hexdigest().encode() + payload
        try:
            folder = _folder(self.root, create=True)
            if folder is None:
                self.enabled = False
                return
            try:
                _write(folder, self.name, blob)
                self.entries, self.results, self.dirty = entries, results, False
                _prune(folder)
            finally:
                os.close(folder)
        except OSError as exc:  # a read-only root: run without a cache
            logger(__name__).info("cannot write cache %s: %s", self.path, exc)
            self.enabled = False


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
# every access goes through the folder's descriptor (a folder swapped for a symlink midway is not followed)
SAFE = bool(getattr(os, "O_NOFOLLOW", 0)) and {os.open, os.stat, os.unlink, os.rename} <= os.supports_dir_fd


def _folder(root: str, create: bool) -> int | None:
    """A descriptor of the cache folder; None where there is none, or it is refused: a symlink,
    not a folder, or not owned by this user (a clone can ship `.aoti_lsp_cache -> /some/dir`)."""
    if not SAFE:
        return None  # no way to open it without following links: no cache
    path = os.path.join(root, DIR)
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        if not create:
            return None
        os.mkdir(path, 0o755)
        fd = os.open(path, flags)
        try:
            _create(fd, ".gitignore", b"# Automatically created by aoti-lsp.\n*\n")
            _create(fd, "CACHEDIR.TAG", b"Signature: 8a477f597d28d172789f06886806bc55\n# aoti-lsp's cache\n")
        except OSError:
            os.close(fd)
            raise
    except OSError as exc:  # ELOOP/ENOTDIR: a symlink or a file where the folder would be
        logger(__name__).warning("not using the cache folder %s: %s (a symlink or not a folder)", path, exc.strerror)
        return None
    st = os.fstat(fd)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        logger(__name__).warning("not using the cache folder %s: owned by another user", path)
        os.close(fd)
        return None
    return fd


def _ours(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()


def _read(folder: int, name: str) -> bytes:
    """A regular file of ours, at most MAX_BYTES (OSError otherwise): never through a symlink
    (/dev/zero), never waiting on a FIFO."""
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW, dir_fd=folder)
    try:
        st = os.fstat(fd)
        if not _ours(st):
            raise OSError(f"{name} is not a regular file of this user")
        if st.st_size > MAX_BYTES:
            raise OSError(f"{name} is over {MAX_BYTES} bytes")
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_BYTES:
            raise OSError(f"{name} grew over {MAX_BYTES} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _create(folder: int, name: str, data: bytes, mode: int = 0o644) -> None:
    """A new file (O_EXCL: never through a planted file or symlink)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode, dir_fd=folder)
    try:
        os.fchmod(fd, mode)  # not the umask's: other users of a shared checkout read it too
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _write(folder: int, name: str, blob: bytes) -> None:
    """Atomically: a fresh temporary file renamed over `name` (a symlink there is replaced, not followed)."""
    tmp = f".tmp-{os.getpid()}-{os.urandom(6).hex()}{SUFFIX}"
    try:
        _create(folder, tmp, blob)
        os.rename(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)  # POSIX: replaces
    except BaseException:
        _unlink(tmp, folder)
        raise


def our_kind(name: str) -> str | None:
    """"json" or "pickle" (before format 2) for a file name this tool writes (24 hex digits, no
    capitals, then the kind); None for any other name. Without `re`: the prune runs on every
    save, a one-file run imports nothing else that needs it."""
    stem, _, kind = name.partition(".")
    return kind if kind in ("json", "pickle") and len(stem) == 24 and _HEX.issuperset(stem) else None


_HEX = frozenset("0123456789abcdef")


def _prune(folder: int) -> None:
    """Other builds' and configurations' files: keep the KEEP most recently written. Only regular
    files of ours named as this tool names them (anything else there is left alone); files of
    the old pickle format are never read again, so they go."""
    try:
        found = []
        for name in os.listdir(folder):
            kind = our_kind(name)
            if kind is None:
                continue
            st = os.stat(name, dir_fd=folder, follow_symlinks=False)
            if _ours(st):
                found.append((kind == "json", st.st_mtime_ns, name))
        found.sort()
        current = sum(1 for f in found if f[0])
        for _, _, name in found[:len(found) - min(current, KEEP)]:
            _unlink(name, folder)
    except OSError:
        pass


_CWD: tuple[str, str] | None = None


def fast_abspath(path: str) -> str:
    """os.path.abspath for the normalised relative paths file discovery yields, without a
    normpath per call (thousands per run)."""
    global _CWD
    if os.path.isabs(path):
        return os.path.normpath(path)
    cwd = os.getcwd()
    if _CWD is None or _CWD[0] != cwd:
        _CWD = (cwd, cwd.rstrip(os.sep) + os.sep)
    if path.startswith(("..", "./")) or f"{os.sep}." in path or path in (".", "") or f"{os.sep}{os.sep}" in path \
            or path.endswith(os.sep):
        return os.path.normpath(os.path.join(cwd, path))
    return _CWD[1] + path


def _stamp(path: str):
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_size)


def _unlink(path: str, folder: int | None = None) -> None:
    try:
        os.unlink(path, dir_fd=folder)
    except OSError:
        pass


class recording:
    """The files a check reads on disk beyond its own (reads.py): a cached result depends on them
    too. A class, not @contextmanager: contextlib costs ~0.4 ms of a run's start."""

    def __enter__(self) -> set:
        from aoti_lsp.analysis import reads

        self._reads, self._previous = reads, reads.current
        reads.current = set()
        return reads.current

    def __exit__(self, *exc) -> None:
        self._reads.current = self._previous
