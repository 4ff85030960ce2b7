"""Fuzzing the server (issue 11): it answers after every hostile message, and an edited document
(incremental reparse, line index) is the document parsed afresh. Few examples in CI; `make fuzz`
runs thousands (AOTI_FUZZ=long)."""

import json
import os
import subprocess
import sys
import threading
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from aoti_lsp.lsp.documents import Document
from aoti_lsp.analysis.positions import LineIndex
from aoti_lsp.analysis.source import Source
from test_malformed import _read, _response, _send

LONG = os.environ.get("AOTI_FUZZ") == "long"
FUZZ = settings(
    max_examples=2000 if LONG else 30,
    deadline=timedelta(seconds=30),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    derandomize=not LONG,
)
# a string literal whose value is a lone surrogate: it reaches messages (issue 19 item 2)
SURROGATE_LITERAL = "torch._inductor.aoti_load_package('\\ud800.so')"
TEXT = "import torch\r\nr = torch._export.aot_load(p, 'cpu')\ré😀 = r(x.cpu())\n"
METHODS = ["textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", "textDocument/didSave",
           "textDocument/hover", "textDocument/codeAction", "textDocument/diagnostic", "codeAction/resolve",
           "workspace/didChangeConfiguration", "workspace/didChangeWatchedFiles", "$/cancelRequest",
           "textDocument/completion", "initialize", "initialized", "", "\ud800"]
INTS = st.one_of(st.integers(-3, 50), st.sampled_from([2**31 - 1, 2**31, 2**40, -(2**31) - 1, 2**64]))
TEXTS = st.lists(st.sampled_from(list("ab( )\n\r\t:é😀\ufeff") + ["\ud800", "aot_load", "torch._export.",
                                                                  SURROGATE_LITERAL]),
                 max_size=20).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | INTS | st.floats(allow_nan=False) | TEXTS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
        ["uri", "textDocument", "range", "start", "end", "line", "character", "text", "version", "contentChanges",
         "position", "context", "diagnostics", "settings", "changes", "id", "languageId"]), inner, max_size=4),
    max_leaves=12)


@st.composite
def positions(draw):
    return {"line": draw(INTS), "character": draw(INTS)}


@st.composite
def hostile_changes(draw, uri):
    change = {"text": draw(TEXTS)}
    if draw(st.booleans()):
        change["range"] = {"start": draw(positions()), "end": draw(positions())}
    return {"textDocument": {"uri": uri, "version": draw(INTS)}, "contentChanges": [change]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    proc = subprocess.Popen([sys.executable, "-m", "aoti_lsp", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    _send(proc, {"jsonrpc": "2.0", "id": "init", "method": "initialize",
                 "params": {"processId": None, "rootUri": None, "capabilities": {}}})
    _response(proc, "init")
    _send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    uri = (tmp_path_factory.mktemp("ws") / "m.py").as_uri()
    _send(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": TEXT}}})
    proc.uri, proc.ids = uri, iter(range(10**9))
    yield proc
    proc.kill()
    proc.wait()


def answered(proc, timeout=20.0):
    """The server answers a hover on the open document: it is alive and not stuck."""
    id_ = f"probe{next(proc.ids)}"
    _send(proc, {"jsonrpc": "2.0", "id": id_, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": proc.uri}, "position": {"line": 1, "character": 10}}})
    box = []
    reader = threading.Thread(target=lambda: box.append(_response(proc, id_)), daemon=True)
    reader.start()
    reader.join(timeout)
    assert box and proc.poll() is None, "the server stopped answering"
    return box[0]


@FUZZ
@given(method=st.sampled_from(METHODS), params=json_values, request=st.booleans(), data=st.data())
def test_server_answers_after_every_hostile_message(server, method, params, request, data):
    if method in ("textDocument/didChange", "textDocument/didOpen") and data.draw(st.booleans()):
        params = data.draw(hostile_changes(server.uri)) if method.endswith("Change") else {"textDocument": {
            "uri": server.uri, "languageId": "python", "version": data.draw(INTS), "text": data.draw(TEXTS) + TEXT}}
    message = {"jsonrpc": "2.0", "method": method, "params": params}
    if request:
        message["id"] = f"h{next(server.ids)}"
    if data.draw(st.booleans()):
        _send(server, message)
    else:  # a broken frame: a bad or missing length, a truncated header
        body = json.dumps(message).encode()
        header = data.draw(st.sampled_from([b"Content-Length: abc\r\n\r\n", b"Content-Length: -1\r\n\r\n",
                                             b"content-length: 0\r\n\r\n", b"X-Junk\r\n\r\n", b"\r\n"]))
        server.stdin.write(header + body)
        server.stdin.flush()
    answered(server)


@FUZZ
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 30), st.integers(0, 8), st.integers(0, 30), TEXTS), max_size=8),
       st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_an_edited_document_is_the_document_parsed_afresh(edits, encoding):
    doc = Document("file:///m.py", "m.py", TEXT, 1)
    for version, (l1, c1, l2, c2, text) in enumerate(edits, 2):
        rng = types.Range(types.Position(l1, c1), types.Position(l2, c2))
        doc.apply([types.TextDocumentContentChangePartial(range=rng, text=text)], version, encoding)
        fresh = Document("file:///m.py", "m.py", doc.data.decode("utf-8"), version)
        assert doc.lines.starts == LineIndex(doc.data).starts
        assert str(doc.tree.root_node) == str(fresh.tree.root_node)
        assert str(doc.tree.root_node) == str(Source(doc.data).tree.root_node)


def test_a_lone_surrogate_in_a_literal_reaches_the_client(server, tmp_path):
    """Issue 19 item 2: the message naming `'\\ud800.so'` is sent (JSON escapes the surrogate)."""
    uri = (tmp_path / "s.py").as_uri()
    _send(server, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": f"import torch\nr = {SURROGATE_LITERAL}\n"}}})
    box = []

    def wait():
        while True:
            msg = _read(server)
            if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri \
                    and msg["params"]["diagnostics"]:
                box.append(msg["params"]["diagnostics"])
                return

    reader = threading.Thread(target=wait, daemon=True)
    reader.start()
    reader.join(20)
    assert box, "no diagnostics for the document"
    assert any("\ud800.so" in d["message"] for d in box[0])
    answered(server)
