"""Malformed requests answered with JSON-RPC errors, the server still serving. Raw framing on
purpose: a typed client cannot send a broken message."""

import json
import subprocess
import sys


def _send(proc, msg):
    body = json.dumps(msg).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def _read(proc):
    length = None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise EOFError("server closed its output")
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
        if line in (b"\r\n", b"\n") and length is not None:
            return json.loads(proc.stdout.read(length))


def _response(proc, id_):
    while True:
        msg = _read(proc)
        if msg.get("id") == id_ and "method" not in msg:
            return msg


def test_malformed_params_get_an_error_and_the_server_survives(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "aoti_lsp", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        assert "capabilities" in _response(proc, 1)["result"]
        _send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"textDocument": 3}})
        assert "error" in _response(proc, 2)
        _send(proc, {"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction", "params": {"range": "x"}})
        assert "error" in _response(proc, 3)
        uri = (tmp_path / "m.py").as_uri()
        _send(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1,
            "text": "import torch\nr = torch._export.aot_load(p, 'cpu')\n"}}})
        while True:
            msg = _read(proc)
            if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
                break
        assert [d["code"] for d in msg["params"]["diagnostics"]] == ["AOTI002"]
        _send(proc, {"jsonrpc": "2.0", "id": 4, "method": "shutdown"})
        assert _response(proc, 4)["result"] is None
        _send(proc, {"jsonrpc": "2.0", "method": "exit"})
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
