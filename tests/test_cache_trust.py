"""Issue 19 item 1: a cache folder a repository ships must not be turned against the user. Nothing
outside the project is written or deleted through a symlinked cache folder; an entry that is a
symlink, a FIFO or too large is not read; only files the tool names are pruned; the format is
JSON, which cannot run code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from aoti_lsp.project import cache as cachemod
from aoti_lsp.cli import main as cli

PROJECTS = Path(__file__).parent / "projects"
CROSS = [("app.py", 12, "AOTI102")]
pytestmark = pytest.mark.skipif(not cachemod.SAFE, reason="the cache is used only where it can be opened safely")


def check(capsys, *args) -> tuple[int, list]:
    code = cli.main(["--check", "-j", "1", "--output-format", "json", *args])
    out = capsys.readouterr().out
    rows = [(os.path.relpath(f["filename"]), f["location"]["row"], f["code"]) for f in json.loads(out or "[]")]
    return code, rows


@pytest.fixture
def project(tmp_path, monkeypatch):
    folder = tmp_path / "proj"
    shutil.copytree(PROJECTS / "aoti102_cross_file", folder, ignore=shutil.ignore_patterns("expected"))
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    monkeypatch.chdir(folder)
    return folder


def snapshot(folder: Path) -> dict:
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}


def victim_folder(tmp_path: Path) -> Path:
    """Somewhere outside the project, with files older than anything the tool writes, some named
    like cache files."""
    outside = tmp_path / "outside"
    outside.mkdir()
    names = [f"{k:024x}.json" for k in range(cachemod.KEEP + 4)] + [f"{k:024x}.pickle" for k in range(3)] + \
        ["notes.txt", ".gitignore", "precious.json"]
    for k, name in enumerate(names):
        (outside / name).write_text(f"user data {k}\n")
        os.utime(outside / name, ns=(10**9 * k, 10**9 * k))
    return outside


def test_a_symlinked_cache_folder_is_not_used(project, tmp_path, capsys):
    outside = victim_folder(tmp_path)
    before = snapshot(outside)
    (project / cachemod.DIR).symlink_to(outside, target_is_directory=True)
    for _ in range(3):
        assert check(capsys, ".") == (1, CROSS)
    assert snapshot(outside) == before  # nothing written, nothing deleted
    assert (project / cachemod.DIR).is_symlink()


def test_a_cache_folder_of_another_user_is_not_used(project, monkeypatch, capsys):
    check(capsys, ".")
    written = snapshot(project / cachemod.DIR)
    me = os.geteuid()
    monkeypatch.setattr(cachemod.os, "geteuid", lambda: me + 1)
    assert check(capsys, "app.py") == (1, CROSS)
    assert snapshot(project / cachemod.DIR) == written


@pytest.mark.parametrize("entry", ["/dev/zero", "fifo", "folder", "other file"])
def test_an_entry_that_is_no_regular_file_of_ours_is_not_read(project, tmp_path, capsys, entry):
    check(capsys, ".")
    path = next((project / cachemod.DIR).glob("*.json"))
    path.unlink()
    if entry == "/dev/zero":
        path.symlink_to("/dev/zero")
    elif entry == "fifo":
        os.mkfifo(path)
    elif entry == "folder":
        path.mkdir()
    else:  # a symlink to a file outside: not followed, not written through
        target = tmp_path / "elsewhere.json"
        target.write_text("keep me\n")
        path.symlink_to(target)
    result = []
    runner = threading.Thread(target=lambda: result.append(check(capsys, ".")), daemon=True)
    runner.start()
    runner.join(20)
    if entry == "fifo" and runner.is_alive():  # unblock the thread before failing
        with open(path, "wb", buffering=0):
            pass
    assert not runner.is_alive(), "the run waited on the cache entry"
    assert result == [(1, CROSS)]
    if entry == "other file":
        assert (tmp_path / "elsewhere.json").read_text() == "keep me\n"
    if entry != "folder":  # the bad entry was replaced by a fresh file (rename does not follow links)
        assert path.is_file() and not path.is_symlink() and path.read_bytes().startswith(cachemod.MAGIC)


def test_a_cache_file_over_the_cap_is_not_read(project, monkeypatch, capsys, caplog):
    check(capsys, ".")
    path = next((project / cachemod.DIR).glob("*.json"))
    monkeypatch.setattr(cachemod, "MAX_BYTES", path.stat().st_size - 1)
    decoded = []
    real = cachemod.plaindata.loads
    monkeypatch.setattr(cachemod.plaindata, "loads", lambda blob: decoded.append(len(blob)) or real(blob))
    with caplog.at_level("INFO", logger="aoti_lsp.project.cache"):
        assert check(capsys, ".") == (1, CROSS)
    assert decoded == [] and "is over" in caplog.text  # refused from its size
    monkeypatch.setattr(cachemod, "MAX_BYTES", path.stat().st_size)
    check(capsys, ".")
    assert decoded  # the same file under the cap is read


def test_pruning_removes_only_the_tools_own_files(project, capsys, monkeypatch):
    folder = project / cachemod.DIR
    check(capsys, ".")
    strangers = {"notes.txt": "mine\n", "0123.json": "not our pattern\n", "ABCDEF0123456789ABCDEF01.json": "upper\n"}
    for name, text in strangers.items():
        (folder / name).write_text(text)
        os.utime(folder / name, ns=(10**9, 10**9))
    link = folder / f"{'f' * 24}.json"
    (project / "target.py").write_text("x = 1\n")
    link.symlink_to(project / "target.py")
    os.utime(link, ns=(10**9, 10**9), follow_symlinks=False)
    old_pickle = folder / f"{'e' * 24}.pickle"
    old_pickle.write_bytes(b"old format")
    for k in range(cachemod.KEEP + 3):
        monkeypatch.setattr(cachemod, "_TOOL", f"build {k}")
        check(capsys, ".")
    ours = [p for p in folder.iterdir() if cachemod.our_kind(p.name) and not p.is_symlink()]
    assert len(ours) == cachemod.KEEP and all(p.suffix == ".json" for p in ours)
    for name, text in strangers.items():
        assert (folder / name).read_text() == text
    assert link.is_symlink() and (project / "target.py").read_text() == "x = 1\n"
    assert not old_pickle.exists()  # the tool's own file of the old format


def test_the_cache_is_json(project, capsys):
    check(capsys, ".")
    blob = next((project / cachemod.DIR).glob("*.json")).read_bytes()
    data = json.loads(blob[len(cachemod.MAGIC) + 32:])
    assert data["d"]["format"] == cachemod.FORMAT


def test_surrogates_survive_the_cache(project, capsys):
    """A lone surrogate in a string literal reaches a message: stored and read back intact."""
    (project / "s.py").write_text("import torch\nr = torch._export.aot_load('\\ud800.so', 'cpu')\n")
    first = check(capsys, "s.py")
    assert first[0] == 1 and first[1]
    assert check(capsys, "s.py") == first
