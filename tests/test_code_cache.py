"""The server's cache of attrs/cattrs generated code (lsp/codecache.py): a second start compiles
none of lsprotocol's generated methods, the classes behave as compiled ones do, and a bad or
foreign cache file is never trusted."""

import json
import os
import subprocess
import sys
from pathlib import Path

# what a server start does: import the server (lsprotocol's classes), convert messages both ways
PROBE = r"""
import json, os, sys
if os.environ.get("AOTI_TEST_FAKE_UID"):  # this process runs as another user than the file's owner
    os.getuid = lambda: os.stat(".").st_uid + 1
from aoti_lsp.lsp import server as s
from aoti_lsp.lsp import codecache
from lsprotocol import types
from lsprotocol.converters import get_converter
c = get_converter()
d = types.Diagnostic(range=types.Range(types.Position(1, 2), types.Position(1, 5)), message="m",
                     severity=types.DiagnosticSeverity.Error, code="AOTI001", source="aoti-lsp")
raw = c.unstructure(d)
back = c.structure(raw, types.Diagnostic)
wrote = codecache.save()
print(json.dumps({"counts": codecache.counts(), "raw": raw, "same": back == d, "repr": repr(d.range),
                  "wrote": wrote, "path": codecache.cache_path()}))
"""


def start(cache_home: Path, **env) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "XDG_CACHE_HOME": str(cache_home), **env})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_second_start_compiles_no_generated_code(tmp_path: Path):
    first = start(tmp_path)
    read, compiled = first["counts"]
    assert read == 0 and compiled > 500, first["counts"]  # lsprotocol's ~570 classes
    assert first["wrote"] and Path(first["path"]).is_file()
    assert Path(first["path"]).parent == tmp_path / "aoti-lsp"
    assert oct(Path(first["path"]).stat().st_mode & 0o777) == oct(0o600)

    second = start(tmp_path)
    assert second["counts"][1] == 0 and second["counts"][0] >= compiled, second["counts"]
    assert not second["wrote"]  # nothing new: the file is left as it is
    # the cached code behaves as freshly compiled code
    assert second["raw"] == first["raw"] and second["same"] and second["repr"] == first["repr"]
    # and without the cache at all
    off = start(tmp_path / "unused", AOTI_LSP_NO_CODE_CACHE="1")
    assert off["counts"] == [0, 0] and not off["wrote"] and off["raw"] == first["raw"]
    assert not (tmp_path / "unused").exists()


def test_a_corrupt_cache_file_is_ignored_and_replaced(tmp_path: Path):
    path = Path(start(tmp_path)["path"])
    path.write_bytes(b"\xe3not marshal at all")
    again = start(tmp_path)
    assert again["counts"][0] == 0 and again["counts"][1] > 500 and again["same"]
    assert start(tmp_path)["counts"][1] == 0  # rewritten whole
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


def test_a_file_another_user_owns_is_not_run(tmp_path: Path):
    path = Path(start(tmp_path)["path"])
    # the same file, read by a process whose uid differs from the file's owner
    other = start(tmp_path, AOTI_TEST_FAKE_UID="1")
    assert other["counts"][0] == 0, other["counts"]
    assert path.stat().st_uid == os.getuid()


def test_an_unwritable_cache_folder_costs_nothing_but_the_cache(tmp_path: Path):
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")  # XDG_CACHE_HOME is a file: the folder cannot be made
    out = start(blocked)
    assert not out["wrote"] and out["same"]
    assert blocked.read_text() == ""


def test_a_folder_others_can_write_or_a_symlink_is_not_used(tmp_path: Path):
    path = Path(start(tmp_path)["path"])
    folder = path.parent
    folder.chmod(0o777)  # a shared cache folder: anyone could have put code there
    shared = start(tmp_path)
    assert shared["counts"][0] == 0 and not shared["wrote"], shared
    folder.chmod(0o700)
    path.chmod(0o666)
    assert start(tmp_path)["counts"][0] == 0
    # the folder a symlink to one that holds a good cache: not followed
    good = tmp_path / "elsewhere"
    start(good)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "aoti-lsp").symlink_to(good / "aoti-lsp", target_is_directory=True)
    out = start(linked)
    assert out["counts"][0] == 0 and not out["wrote"], out


def test_a_relative_cache_folder_means_no_cache_and_nothing_written_in_the_working_folder(tmp_path: Path):
    # (as `~/.cache` would be where no home folder is known)
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "XDG_CACHE_HOME": "relative/cache"}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["counts"] == [0, 0] and not out["wrote"] and out["path"] is None and out["same"]
    assert list(tmp_path.iterdir()) == []
