"""gitls.Listing: `git ls-files` without the subprocess module, with subprocess.run's outcome:
git's stdout when it exits 0, else None (missing, failing, killed, past the timeout); stderr
discarded, stdin empty, this process's environment; no process left behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from aoti_lsp.project import files, gitls
from aoti_lsp.project.config import Config

pytestmark = pytest.mark.skipif(not hasattr(os, "posix_spawnp"), reason="POSIX: elsewhere subprocess runs git")


@pytest.fixture
def fake_git(tmp_path, monkeypatch):
    """Puts a `git` running `script` (sh) first on PATH."""
    def make(script: str):
        folder = tmp_path / "bin"
        folder.mkdir(exist_ok=True)
        (folder / "git").write_text(f"#!/bin/sh\n{script}\n")
        (folder / "git").chmod(0o755)
        monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return make


def _gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True  # reaped already: no zombie, nothing running
    return False


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_listing_is_what_git_prints(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("skip.py\n")
    for name in ("a.py", "skip.py", "sp ace.py", "caf\u00e9.py"):
        (tmp_path / name).write_text("")
    want = subprocess.run(["git", "-C", str(tmp_path), *gitls.ARGS], capture_output=True, check=True).stdout
    assert gitls.Listing(str(tmp_path)).output() == want
    assert sorted(want.split(b"\0")) == sorted([b"", b".gitignore", b"a.py", b"sp ace.py", "caf\u00e9.py".encode()])


def test_only_stdout_counts_stdin_is_empty_and_the_environment_is_ours(fake_git, monkeypatch, capfd):
    fake_git('echo "$@"; echo "env=$AOTI_GITLS_TEST"; echo oops >&2; cat; echo "stdin read"')
    monkeypatch.setenv("AOTI_GITLS_TEST", "seen")
    out = gitls.Listing("some folder").output()
    assert out == f"-C some folder {' '.join(gitls.ARGS)}\nenv=seen\nstdin read\n".encode()
    assert capfd.readouterr() == ("", "")


def test_a_large_listing_is_read_whole(fake_git):
    fake_git("head -c 1000000 /dev/zero")  # far more than a pipe holds
    assert gitls.Listing(".").output() == b"\0" * 1_000_000


def _exited(listing) -> None:
    """Until git has exited (not reaped: output() finds it so)."""
    end = time.monotonic() + 10
    while os.waitid(os.P_PID, listing.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        assert time.monotonic() < end
        time.sleep(0.005)


@pytest.mark.parametrize("script, out", [("printf 'a.py\\0b c.py\\0'", b"a.py\0b c.py\0"), ("echo partial; exit 128", None)])
def test_a_listing_done_before_it_is_read_is_read_without_select(fake_git, monkeypatch, script, out):
    """The hook's case: git ran while the analysis was imported; what it wrote is read, and its
    exit status decides, without loading select (~0.2 ms) to wait."""
    fake_git(script)
    listing = gitls.Listing(".")
    _exited(listing)
    pid = listing.pid
    monkeypatch.setitem(sys.modules, "select", None)  # `import select` would raise
    assert listing.output() == out
    assert listing.pid is None and listing.fd is None and _gone(pid)


@pytest.mark.parametrize("script", ["echo partial; exit 128", "kill -9 $$"])
def test_a_failing_or_killed_git_gives_none(fake_git, script):
    fake_git(script)
    assert gitls.Listing(".").output() is None


def test_no_git_gives_none(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    listing = gitls.Listing(".")
    assert listing.output() is None and listing.pid is None


def test_past_the_timeout_git_is_killed_and_gives_none(fake_git, monkeypatch):
    fake_git("echo started; exec sleep 30")
    monkeypatch.setattr(gitls, "TIMEOUT", 0.3)
    t = time.monotonic()
    listing = gitls.Listing(".")
    pid = listing.pid
    assert listing.output() is None
    assert time.monotonic() - t < 5 and _gone(pid)


def test_a_listing_closed_unread_leaves_no_process(fake_git):
    fake_git("exec sleep 30")
    listing = gitls.Listing(".")
    pid = listing.pid
    listing.close()
    assert _gone(pid) and listing.output() is None


def test_the_project_is_listed_while_meanwhile_runs(tmp_path, fake_git, monkeypatch):
    """runner.py imports the analysis while git lists the project: git is started first."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.py").write_text("")
    fake_git("printf 'a.py\\0b.py\\0'")
    monkeypatch.chdir(tmp_path)
    events = []
    real = gitls.Listing.output
    monkeypatch.setattr(gitls.Listing, "__init__", lambda self, folder, init=gitls.Listing.__init__: (
        events.append("started"), init(self, folder))[1])
    monkeypatch.setattr(gitls.Listing, "output", lambda self: (events.append("collected"), real(self))[1])
    check, scan, errors = files.project_files(["a.py"], Config(root=str(tmp_path)), str(tmp_path),
                                              lambda named: True, lambda: events.append("meanwhile"))
    assert events == ["started", "meanwhile", "collected"]
    assert (check, sorted(scan), errors) == (["a.py"], ["a.py", "b.py"], [])


def test_a_listing_is_ended_when_meanwhile_raises(tmp_path, fake_git, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.py").write_text("")
    fake_git("exec sleep 30")
    monkeypatch.chdir(tmp_path)
    started = []
    init = gitls.Listing.__init__

    def spy(self, folder):
        init(self, folder)
        started.append(self.pid)

    monkeypatch.setattr(gitls.Listing, "__init__", spy)

    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        files.project_files(["a.py"], Config(root=str(tmp_path)), str(tmp_path), lambda named: True, interrupted)
    assert len(started) == 1 and _gone(started[0])
