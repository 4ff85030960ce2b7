"""Issue 11, LSP side: protocol edges, hostile input, bounded memory. Raw framing: a typed client
cannot send these messages."""

import json
import subprocess
import sys
import time

import pytest

from test_malformed import _read, _response, _send

TEXT = "import torch\nso = torch._export.aot_compile(m, (torch.randn(2, device='cuda'),))\nr = torch._export.aot_load(so, 'cpu')\ny = r(x.cpu())\n# edit here:\n"
PULL = {"textDocument": {"diagnostic": {"dynamicRegistration": False}}}


def start(tmp_path=None):
    return subprocess.Popen([sys.executable, "-m", "aoti_lsp", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def initialize(proc, capabilities=None):
    _send(proc, {"jsonrpc": "2.0", "id": "init", "method": "initialize",
                 "params": {"processId": None, "rootUri": None, "capabilities": capabilities or {}}})
    assert "capabilities" in _response(proc, "init")["result"]
    _send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})


def did_open(proc, uri, text, version=1):
    _send(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": version, "text": text}}})


def pushed(proc, uri):
    while True:
        msg = _read(proc)
        if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
            return msg["params"]


def pulled(proc, uri, id_):
    _send(proc, {"jsonrpc": "2.0", "id": id_, "method": "textDocument/diagnostic",
                 "params": {"textDocument": {"uri": uri}}})
    return _response(proc, id_)["result"]["items"]


@pytest.fixture
def proc():
    p = start()
    yield p
    if p.poll() is None:
        p.kill()
        p.wait()


def test_request_before_initialize_is_refused_with_32002(proc, tmp_path):
    _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": (tmp_path / "m.py").as_uri()}, "position": {"line": 0, "character": 0}}})
    assert _response(proc, 1)["error"]["code"] == -32002
    did_open(proc, (tmp_path / "early.py").as_uri(), TEXT)  # a notification: dropped
    initialize(proc)
    uri = (tmp_path / "m.py").as_uri()
    did_open(proc, uri, TEXT)
    assert {d["code"] for d in pushed(proc, uri)["diagnostics"]} >= {"AOTI001", "AOTI002"}


def test_exit_without_shutdown_exits_1(proc):
    initialize(proc)
    _send(proc, {"jsonrpc": "2.0", "method": "exit"})
    assert proc.wait(timeout=10) == 1


def test_request_after_shutdown_gets_an_error(proc):
    initialize(proc)
    _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    assert _response(proc, 2)["result"] is None
    _send(proc, {"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": "file:///m.py"}, "position": {"line": 0, "character": 0}}})
    assert _response(proc, 3)["error"]["code"] == -32600
    _send(proc, {"jsonrpc": "2.0", "method": "exit"})
    assert proc.wait(timeout=10) == 0


def test_bad_content_length_does_not_swallow_the_next_message(proc):
    initialize(proc)
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "shutdown"}).encode()
    proc.stdin.write(b"Content-Length: abc\r\n\r\n" + body)
    _send(proc, {"jsonrpc": "2.0", "id": 8, "method": "shutdown"})
    assert _response(proc, 8)["result"] is None


def test_huge_positions_and_lone_surrogates_still_update_the_document(proc, tmp_path):
    initialize(proc)
    uri = (tmp_path / "m.py").as_uri()
    did_open(proc, uri, "x = '\ud800'\n" + TEXT, version=2**40)  # json.dumps writes "\ud800"
    first = pushed(proc, uri)
    assert "AOTI002" in {d["code"] for d in first["diagnostics"]}
    far = {"line": 2**40, "character": 2**40}
    _send(proc, {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2**40 + 1},
        "contentChanges": [{"range": {"start": far, "end": far}, "text": "r2 = torch._export.aot_load(so, 'cpu')\n"}]}})
    after = pushed(proc, uri)
    assert [d["code"] for d in after["diagnostics"]].count("AOTI002") == 2  # the edit landed, at the end
    assert after["diagnostics"][-1]["range"]["start"]["line"] == TEXT.count("\n") + 1


def test_too_large_document_gets_a_skipped_diagnostic(proc, tmp_path):
    initialize(proc)
    uri = (tmp_path / "big.py").as_uri()
    started = time.monotonic()
    did_open(proc, uri, TEXT + "x = 1\n" * (11 * 1024 * 1024 // 6))
    diags = pushed(proc, uri)["diagnostics"]
    assert time.monotonic() - started < 60
    assert len(diags) == 1 and "analysis skipped: too large" in diags[0]["message"]


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))


def test_rss_stays_flat_over_1000_edits_and_300_open_close_cycles(proc, tmp_path):
    """Before: +190-370 KB per didChange (a cache keyed weakly by the Context it held)."""
    initialize(proc, PULL)
    uri = (tmp_path / "m.py").as_uri()
    text = TEXT + "".join(f"v{i} = [{i}, 'filler']\n" for i in range(400))  # ~10 KB: a leak shows
    did_open(proc, uri, text)
    end = {"line": TEXT.count("\n"), "character": 0}

    def edit(i):
        _send(proc, {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": i + 2},
            "contentChanges": [{"range": {"start": end, "end": end}, "text": "#" if i % 2 == 0 else ""}]}})
        assert {d["code"] for d in pulled(proc, uri, f"d{i}")} >= {"AOTI001", "AOTI002"}

    for i in range(100):  # warm up: imports, caches, allocator arenas
        edit(i)
    before = _rss_kb(proc.pid)
    for i in range(100, 1100):
        edit(i)
    grown = _rss_kb(proc.pid) - before
    assert grown < 40_000, f"RSS grew by {grown} KB over 1,000 edits"

    before = _rss_kb(proc.pid)
    for i in range(300):
        other = (tmp_path / f"o{i}.py").as_uri()
        did_open(proc, other, TEXT)
        pulled(proc, other, f"o{i}")
        _send(proc, {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": other}}})
    grown = _rss_kb(proc.pid) - before
    assert grown < 40_000, f"RSS grew by {grown} KB over 300 open/close cycles"


def test_a_burst_of_edits_is_checked_once_at_its_last_version(proc, tmp_path):
    """Stale work is dropped: 50 versions sent at once cost far fewer than 50 analyses."""
    initialize(proc)
    uri = (tmp_path / "m.py").as_uri()
    did_open(proc, uri, TEXT)
    assert pushed(proc, uri)["version"] == 1
    end = {"line": TEXT.count("\n"), "character": 0}
    frames = b""
    for version in range(2, 52):
        body = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": end, "end": end}, "text": "#"}]}}).encode()
        frames += b"Content-Length: %d\r\n\r\n" % len(body) + body
    proc.stdin.write(frames)
    proc.stdin.flush()
    versions = []
    while not versions or versions[-1] != 51:
        versions.append(pushed(proc, uri)["version"])
    assert len(versions) < 25, versions


def test_an_unreadable_edit_drops_the_document_instead_of_keeping_stale_text(proc, tmp_path):
    initialize(proc)
    uri = (tmp_path / "m.py").as_uri()
    did_open(proc, uri, TEXT)
    assert pushed(proc, uri)["diagnostics"]
    _send(proc, {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": "broken", "text": 3}]}})
    shown = None
    while shown is None:
        msg = _read(proc)
        if msg.get("method") == "window/showMessage":
            shown = msg["params"]["message"]
        elif msg.get("method") == "textDocument/publishDiagnostics":
            assert msg["params"]["diagnostics"] == []  # no findings from the stale copy
    assert "could not be read" in shown and "reopen" in shown


def test_an_absurd_content_length_is_not_waited_for(proc):
    initialize(proc)
    proc.stdin.write(b"Content-Length: 99999999999\r\n\r\n{}")
    _send(proc, {"jsonrpc": "2.0", "id": 9, "method": "shutdown"})
    assert _response(proc, 9)["result"] is None
