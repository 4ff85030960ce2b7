"""The CLI's worker processes (project/forkpool.py): every task taken once, big messages whole,
a failing or dying worker reported, no worker left behind."""

from __future__ import annotations

import os
import signal

import pytest

from aoti_lsp.project import forkpool


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_every_task_once_and_big_messages_whole():
    def work(wid, tasks, send, receive):
        for i in tasks():
            send(("task", wid, (i, b"x" * (200_000 + i))))  # past a pipe's 64 KiB buffer
        send(("scanned", wid, None))
        extra = receive()
        send(("results", wid, [extra * 2] * 50_000))

    pool = forkpool.Pool(3, 40, work)
    try:
        seen = [payload for kind, _, payload in pool.messages("scanned") if kind == "task"]
        assert sorted(i for i, _ in seen) == list(range(40))
        assert all(blob == b"x" * (200_000 + i) for i, blob in seen)
        for wid in range(3):
            pool.send(wid, "ab" * 100_000)
        results = [p for kind, _, p in pool.messages("results")]
        assert len(results) == 3 and all(r == ["ab" * 200_000] * 50_000 for r in results)
    finally:
        pids = list(pool.pids)
        pool.close()
    assert not any(map(_alive, pids))


def test_a_failing_worker_is_an_error_and_the_rest_end():
    def work(wid, tasks, send, receive):
        for i in tasks():
            if i == 5:
                raise ValueError("boom on task 5")
            send(("task", wid, i))
        send(("scanned", wid, None))
        receive()

    pool = forkpool.Pool(2, 10, work)
    pids = list(pool.pids)
    with pytest.raises(RuntimeError, match="a worker failed: ValueError\\('boom on task 5'\\)"):
        for _ in pool.messages("scanned"):
            pass
    pool.close(kill=True)
    assert not any(map(_alive, pids))


def test_a_worker_killed_mid_run_is_said():
    def work(wid, tasks, send, receive):
        if wid == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        for i in tasks():
            send(("task", wid, i))
        send(("scanned", wid, None))
        receive()

    pool = forkpool.Pool(2, 4, work)
    with pytest.raises(forkpool.WorkerDied, match="killed by signal 9"):
        for _ in pool.messages("scanned"):
            pass
    pool.close(kill=True)


def test_tasks_beyond_the_pipe_are_refused():
    with pytest.raises(ValueError, match="at most"):
        forkpool.Pool(2, forkpool.MAX_TASKS + 1, lambda *a: None)


def test_a_worker_failing_mid_run_is_an_internal_error_of_the_cli(tmp_path, monkeypatch, capsys):
    """Through the CLI: a file that breaks pass 1 in a worker ends the run with exit 2 and says
    why; no success line, no worker left."""
    from aoti_lsp.cli import main as cli
    from aoti_lsp.project import runner

    for i in range(80):  # past runner.PARALLEL_MIN: -j 2 forks
        (tmp_path / f"m{i}.py").write_text("import torch\nso = torch._export.aot_compile(m, (x,))\n")
    real = runner._scan

    def scan(paths, *args, **kw):
        if any(p.endswith("m41.py") for p in paths):
            raise MemoryError("m41.py broke the worker")
        return real(paths, *args, **kw)

    monkeypatch.setattr(runner, "_scan", scan)
    monkeypatch.chdir(tmp_path)
    code = cli.main(["--check", "--no-cache", "-j", "2", "."])
    err = capsys.readouterr().err
    assert code == 2 and "internal error: a worker failed: MemoryError('m41.py broke the worker')" in err
    assert "All checks passed" not in err
