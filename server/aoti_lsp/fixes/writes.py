"""Writing a fixed file safely (`--fix`).

- Through a symlink to its target, keeping the link; a file reached by two paths is written once.
- Into a temporary file created by `tempfile.mkstemp` next to the target (O_CREAT|O_EXCL, mode
  0600: a planted file or symlink is never opened, two runs never share a name), then
  `os.replace`: an interrupted run never leaves half a file.
- The target keeps its mode and owner (chown is tried; a file that would change owner is skipped).
- Skipped with a message, never rewritten: a read-only file (its mode says "do not change me";
  root would otherwise write it anyway), a file with several hard links (a rename would split
  them), a file that changed on disk since it was read (another run, an editor).
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass


class Skipped(Exception):
    """The file was left as it is, on purpose; the message says why."""


class Failed(Exception):
    """The file could not be written (an OS error); the message says why."""


@dataclass
class Pending:
    path: str
    target: str
    tmp: str
    identity: tuple[int, int]


class Writer:
    def __init__(self):
        self._written: dict[tuple[int, int], str] = {}  # (device, inode) -> the path written

    def write(self, path: str, old: bytes, new: bytes) -> None:
        """Replace `old` (what was read from `path`) by `new`; raise Skipped or Failed."""
        self.commit(self.prepare(path, old, new))

    def write_together(self, items: list[tuple[str, bytes, bytes]]) -> None:
        """Files one fix edits together (a migration): every one is written, or none is."""
        pending = []
        try:
            for path, old, new in items:
                pending.append(self.prepare(path, old, new))
        except (Skipped, Failed):
            for p in pending:
                self.abort(p)
            raise
        for p in pending:
            self.commit(p)

    def prepare(self, path: str, old: bytes, new: bytes) -> "Pending":
        """The new content in a temporary file beside the target, checked; nothing replaced yet."""
        target = os.path.realpath(path)
        try:
            st = os.stat(target)
        except OSError as exc:
            raise Failed(f"{path}: not written: {exc.strerror}") from None
        identity = (st.st_dev, st.st_ino)
        if identity in self._written:
            raise Skipped(f"{path}: same file as {self._written[identity]}, written once")
        if not stat.S_ISREG(st.st_mode):
            raise Skipped(f"{path}: not a regular file, not written")
        if not st.st_mode & 0o222:
            raise Skipped(f"{path}: read-only file, not fixed (make it writable to fix it)")
        if st.st_nlink > 1:
            raise Skipped(f"{path}: has {st.st_nlink} hard links, not fixed (replacing it would split them)")
        folder = os.path.dirname(target) or "."
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".aoti-lsp.tmp", dir=folder)
        except OSError as exc:
            raise Failed(f"{path}: not written: cannot create a file in {folder}: {exc.strerror}") from None
        try:
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(new)
                    fh.flush()
                    self._keep_owner(fh.fileno(), st, path)
                    os.fchmod(fh.fileno(), stat.S_IMODE(st.st_mode))
                    os.fsync(fh.fileno())
                if _read(target) != old:
                    raise Skipped(f"{path}: changed on disk while it was being fixed, not written")
            except OSError as exc:
                raise Failed(f"{path}: not written: {exc.strerror or exc}") from None
        except BaseException:
            _remove(tmp)
            raise
        self._written[identity] = path
        return Pending(path, target, tmp, identity)

    def commit(self, pending: "Pending") -> None:
        try:
            os.replace(pending.tmp, pending.target)
        except OSError as exc:
            _remove(pending.tmp)
            raise Failed(f"{pending.path}: not written: {exc.strerror or exc}") from None

    def abort(self, pending: "Pending") -> None:
        _remove(pending.tmp)
        self._written.pop(pending.identity, None)

    @staticmethod
    def _keep_owner(fd: int, st: os.stat_result, path: str) -> None:
        if (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid()):
            return
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except PermissionError:
            raise Skipped(f"{path}: owned by another user or group, not fixed (rewriting it would change its owner)") from None


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
