"""`git ls-files` for files.py, started without the subprocess module (it imports selectors,
signal and threading: ~1.7 ms of a ~30 ms pre-commit run) and collected later: git runs while
Python goes on (runner.py imports the analysis meanwhile). As subprocess.run(check=True,
timeout=60) did: the environment is this process's, stderr is discarded, and a git that is
missing, fails, is killed or runs past the timeout gives None."""

from __future__ import annotations

import os
import time

ARGS = ("ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
TIMEOUT = 60.0  # seconds from the start


class Listing:
    """A `git -C folder ls-files ...` started now; `output()` waits for it."""

    def __init__(self, folder: str):
        self.folder, self.started = folder, time.monotonic()
        self.pid = self.fd = None
        self._done: tuple[bytes | None] | None = None
        if not hasattr(os, "posix_spawnp"):  # Windows: subprocess, run now
            self._done = (_run(folder),)
            return
        r, w = os.pipe()
        if min(r, w) <= 2:  # a standard stream was closed: the child's dup2s would clobber the pipe
            os.close(r)
            os.close(w)
            self._done = (_run(folder),)
            return
        try:
            self.pid = os.posix_spawnp("git", ["git", "-C", folder, *ARGS], os.environ, file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, w, 1),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            ])
        except OSError:  # no git on PATH, or it cannot be run
            os.close(r)
            self._done = (None,)
        else:
            self.fd = r
        finally:
            os.close(w)

    def output(self) -> bytes | None:
        """What git printed, or None (it failed); waits for it, at most to the timeout."""
        if self._done is None:
            try:
                self._done = (self._read(),)
            finally:
                self.close()
        return self._done[0]

    def _read(self) -> bytes | None:
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid = 0
        if pid:  # git is done (it ran while the analysis was imported): all it wrote is in the pipe
            self.pid = None
            os.set_blocking(self.fd, False)  # never waits, even on a pipe something else holds open
            chunks = []
            try:
                while chunk := os.read(self.fd, 1 << 16):
                    chunks.append(chunk)
            except BlockingIOError:
                pass
            return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None
        import select  # an extension module: ~0.2 ms to load, only to wait

        poller, chunks = select.poll(), []
        poller.register(self.fd, select.POLLIN)
        while True:
            left = self.started + TIMEOUT - time.monotonic()
            if left <= 0 or not poller.poll(left * 1000):
                return None  # close() kills it
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        code, self.pid = _wait(self.pid), None
        return b"".join(chunks) if code == 0 else None

    def close(self) -> None:
        """Ends it (a listing not waited for, or past the timeout): no process left behind."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.pid is not None:
            try:
                os.kill(self.pid, 9)  # SIGKILL (the signal module would cost its enums)
            except OSError:
                pass
            _wait(self.pid)
            self.pid = None
        if self._done is None:
            self._done = (None,)


def _wait(pid: int) -> int:
    try:
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    except ChildProcessError:  # SIGCHLD ignored: the status is gone; subprocess calls that 0 too
        return 0


def _run(folder: str) -> bytes | None:
    import subprocess

    try:
        return subprocess.run(["git", "-C", folder, *ARGS], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=TIMEOUT, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
