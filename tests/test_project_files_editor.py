"""The editor's list of the project's files (Project.files: which script a printed command is
followed into, plan._script_path) follows files created, deleted and first saved after the
workspace index. A script written after the index was not followed into until the server
started again: its compile kept the display-only migration."""

from __future__ import annotations

import asyncio
import subprocess

import inprocess
from lsprotocol import types
from aoti_lsp.lsp import server as server_mod

BUILD = """import torch
ep = torch.export.export(model, (x,))
so = torch._inductor.aot_compile(ep.module(), *ep.example_inputs)
print(f"python serve_test.py {so}")
"""
SERVE = "import sys, torch\nrunner = torch._export.aot_load(sys.argv[1], 'cuda')\n"
FOLLOWED = "edits 2 files"
REFUSED = "its path is written into a command for `serve_test.py`"


def _server(root):
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (root / "build.py").write_text(BUILD)
    ls = inprocess.server()
    ls.roots = [str(root)]
    asyncio.run(ls.index_workspace())
    _no_client(ls)
    doc = inprocess.opened(ls, (root / "build.py").as_uri(), str(root / "build.py"), BUILD)
    return ls, doc


def _no_client(ls):
    ls.publish = lambda *a, **k: None  # no client here
    ls.refresh_all = lambda *a, **k: None


def _fresh(root) -> list:
    """The diagnostics of build.py from a server started now (its index lists the script)."""
    ls = inprocess.server()
    ls.roots = [str(root)]
    asyncio.run(ls.index_workspace())
    doc = inprocess.opened(ls, (root / "build.py").as_uri(), str(root / "build.py"), BUILD)
    return ls.diagnostics(doc)


def _title(ls, doc) -> str:
    found = [f for f in ls.result(doc).findings if f.code == "AOTI001"]
    assert found, "no AOTI001 finding"
    fixes = [x for x in (found[0].fix, *found[0].alternatives) if x is not None]
    return " | ".join(x.title for x in fixes) + " | " + found[0].message


def test_a_script_created_after_the_index_is_followed(tmp_path):
    """A file event lists the project again once events pause (settled: the server's deferred
    work), not at each event of a burst."""
    ls, doc = _server(tmp_path)
    assert REFUSED in _title(ls, doc)  # the script is not there yet
    (tmp_path / "serve_test.py").write_text(SERVE)
    server_mod.did_change_watched_files(ls, types.DidChangeWatchedFilesParams(
        [types.FileEvent((tmp_path / "serve_test.py").as_uri(), types.FileChangeType.Created)]))
    ls.settled()  # once events pause: the files are listed again
    assert FOLLOWED in _title(ls, doc)
    assert ls.diagnostics(doc) == _fresh(tmp_path)
    (tmp_path / "serve_test.py").unlink()
    server_mod.did_change_watched_files(ls, types.DidChangeWatchedFilesParams(
        [types.FileEvent((tmp_path / "serve_test.py").as_uri(), types.FileChangeType.Deleted)]))
    ls.settled()
    assert REFUSED in _title(ls, doc)


def test_a_script_first_saved_from_an_editor_without_file_events_is_followed(tmp_path):
    """Neovim on Linux reports no file events: the new file's didSave lists the project again."""
    ls, doc = _server(tmp_path)
    (tmp_path / "serve_test.py").write_text(SERVE)
    new = inprocess.opened(ls, (tmp_path / "serve_test.py").as_uri(), str(tmp_path / "serve_test.py"), SERVE)
    server_mod.did_save(ls, types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(new.uri)))
    assert FOLLOWED in _title(ls, doc)


def test_an_ignored_script_saved_stays_unfollowed_and_is_not_listed_at_every_save(tmp_path, monkeypatch):
    ls, doc = _server(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("serve_test.py\n")
    (tmp_path / "serve_test.py").write_text(SERVE)
    new = inprocess.opened(ls, (tmp_path / "serve_test.py").as_uri(), str(tmp_path / "serve_test.py"), SERVE)
    listings = []
    real = ls.relist
    monkeypatch.setattr(ls, "relist", lambda: listings.append(1) or real())
    for _ in range(3):
        server_mod.did_save(ls, types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(new.uri)))
    assert REFUSED in _title(ls, doc) and len(listings) == 1


def test_a_burst_of_file_events_lists_the_project_once(tmp_path, monkeypatch):
    """`pip install` into a folder of the workspace: many events, one listing, once they pause."""
    ls, doc = _server(tmp_path)
    listings = []
    real = ls.relist
    monkeypatch.setattr(ls, "relist", lambda: listings.append(1) or real())
    for k in range(5):
        (tmp_path / f"new_{k}.py").write_text("x = 1\n")
        server_mod.did_change_watched_files(ls, types.DidChangeWatchedFilesParams(
            [types.FileEvent((tmp_path / f"new_{k}.py").as_uri(), types.FileChangeType.Created)]))
    assert listings == []
    ls.settled()
    assert len(listings) == 1 and str(tmp_path / "new_4.py") in ls.project.files
