"""Issue 19 item 10: invalid params and a client that drops the connection give one line each on
stderr, not pygls' tracebacks (the replies were right; the log drowned them)."""

import subprocess
import sys
import time

from test_malformed import _response, _send

OPEN = "import torch\nr = torch._export.aot_load(p, 'cpu')\n"


def start():
    proc = subprocess.Popen([sys.executable, "-m", "aoti_lsp", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"processId": None, "rootUri": None, "capabilities": {}}})
    _response(proc, 1)
    _send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    return proc


def finish(proc) -> str:
    proc.stdin.close()
    proc.wait(timeout=20)
    return proc.stderr.read().decode()


def test_invalid_params_are_one_line_each():
    proc = start()
    _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"textDocument": 3}})
    assert _response(proc, 2)["error"]["code"] == -32602
    err = finish(proc)
    assert "Traceback" not in err
    assert err.count("rejected malformed textDocument/hover") == 1


def test_a_dropped_client_is_one_line():
    proc = start()
    proc.stdout.close()  # the client stops reading
    for i in range(40):
        uri = f"file:///tmp/gone{i}.py"
        _send(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": OPEN}}})
        _send(proc, {"jsonrpc": "2.0", "id": 10 + i, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": 1, "character": 8}}})
    time.sleep(2)
    err = finish(proc)
    assert "Traceback" not in err and "BrokenPipe" not in err
    assert err.count("the client closed the connection") == 1
