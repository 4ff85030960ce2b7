"""Worker processes for a run: os.fork and pipes, not multiprocessing, whose import and queues
(pipes, locks, a feeder thread each) cost ~14 ms before the first worker starts: a tenth of a
600-file tree's whole run (pytorch/ao: 0.16 s).

Tasks are chunk numbers, 4 bytes each, all written to one pipe before the fork and read by
whichever worker is free (a pipe read or write of at most PIPE_BUF bytes is atomic, and every
record is whole). A worker already holds what a chunk names (forked memory); what it sends back,
and what the parent sends it later, are pickles framed by their length, one pipe each way."""

from __future__ import annotations

import os
import pickle
import select
import signal

MAX_TASKS = 8192  # 32 KiB of task numbers: they fit a pipe's buffer (64 KiB) before any worker reads
_LEN = 8


class WorkerDied(RuntimeError):
    pass


class Pool:
    """`n` forked workers running `work(wid, tasks, send, receive)`, where `tasks()` yields the
    task numbers this worker takes, `send(obj)` sends to the parent and `receive()` waits for
    the parent's next message. A worker that raises sends ("failed", wid, repr) and ends."""

    def __init__(self, n: int, tasks: int, work):
        if tasks > MAX_TASKS:
            raise ValueError(f"{tasks} tasks: at most {MAX_TASKS}")
        self.pids: list[int] = []
        self.up: list[int] = []  # parent reads
        self.down: list[int] = []  # parent writes
        self._buffers: dict[int, bytearray] = {}
        tasks_r, tasks_w = os.pipe()
        _write_all(tasks_w, b"".join(i.to_bytes(4, "little") for i in range(tasks)))
        os.close(tasks_w)  # read to the end, a worker's pipe says so: no stop marker needed
        try:
            for wid in range(n):
                up_r, up_w = os.pipe()
                down_r, down_w = os.pipe()
                pid = os.fork()
                if pid == 0:  # the worker: only its own ends stay open (another's would hide its EOF)
                    try:
                        for fd in [*self.up, *self.down, up_r, down_w]:
                            os.close(fd)
                        _child(wid, tasks_r, up_w, down_r, work)
                    finally:
                        os._exit(1)  # _child ends the process itself: never back into the parent's code
                os.close(up_w)
                os.close(down_r)
                self.pids.append(pid)
                self.up.append(up_r)
                self.down.append(down_w)
                self._buffers[up_r] = bytearray()
        except BaseException:  # a fork or a pipe refused: the workers already started end now
            self.close(kill=True)
            raise
        finally:
            os.close(tasks_r)

    def send(self, wid: int, obj) -> None:
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        _write_all(self.down[wid], len(data).to_bytes(_LEN, "little") + data)

    def messages(self, until: str):
        """Messages until every worker has sent `until` (yielded too); ("failed", ...) from a
        worker, or a worker gone without a word, raises."""
        waiting = {fd for fd in self.up}
        while waiting:
            ready, _, _ = select.select(list(waiting), [], [])
            for fd in ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise WorkerDied(f"a worker process died ({self._status(self.up.index(fd))})")
                buf = self._buffers[fd]
                buf += chunk
                while len(buf) >= _LEN:
                    size = int.from_bytes(buf[:_LEN], "little")
                    if len(buf) < _LEN + size:
                        break
                    msg = pickle.loads(bytes(buf[_LEN:_LEN + size]))
                    del buf[:_LEN + size]
                    if msg[0] == "failed":
                        raise RuntimeError(f"a worker failed: {msg[2]}")
                    if msg[0] == until:
                        waiting.discard(fd)
                    yield msg

    def close(self, kill: bool = False) -> None:
        """Ends the workers (killed when `kill`: Ctrl-C, SIGTERM, a failure) and reaps them."""
        for fd in [*self.up, *self.down]:
            try:
                os.close(fd)
            except OSError:
                pass
        self.up, self.down = [], []
        for pid in self.pids:
            if kill:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self.pids = []

    def _status(self, wid: int) -> str:
        try:
            pid, status = os.waitpid(self.pids[wid], 0)
        except ChildProcessError:
            return "exit status unknown"
        if os.WIFSIGNALED(status):
            return f"killed by signal {os.WTERMSIG(status)}"
        return f"exit code {os.waitstatus_to_exitcode(status)}"


def _child(wid: int, tasks_r: int, up_w: int, down_r: int, work) -> None:
    def tasks():
        while len(record := os.read(tasks_r, 4)) == 4:
            yield int.from_bytes(record, "little")

    def send(obj) -> None:
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        _write_all(up_w, len(data).to_bytes(_LEN, "little") + data)

    def receive():
        size = int.from_bytes(_read_exactly(down_r, _LEN), "little")
        return pickle.loads(_read_exactly(down_r, size))

    code = 0
    try:
        work(wid, tasks, send, receive)
    except BaseException as exc:  # reported by the parent as an internal error
        try:
            send(("failed", wid, repr(exc)))
        except BaseException:
            code = 1
    os._exit(code)  # never the parent's atexit handlers, nor a second flush of its buffers


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, size: int) -> bytes:
    out = bytearray()
    while len(out) < size:
        chunk = os.read(fd, size - len(out))
        if not chunk:
            raise EOFError("the parent process went away")
        out += chunk
    return bytes(out)
