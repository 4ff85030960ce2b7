"""Helix and Sublime Text are not installable here (not in Debian 12, not on PyPI/npm), so their
docs/editors.md snippets cannot run in the real editor. What can be checked is done: each snippet
parses, and the server started with exactly its command and initializationOptions works."""

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from test_malformed import _read, _send

DOC = (Path(__file__).resolve().parents[2] / "docs" / "editors.md").read_text("utf-8")


def _block(section: str, lang: str) -> str:
    body = DOC.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return re.search(rf"```{lang}\n(.*?)```", body, re.S).group(1)


def _diagnostics_with(command: list[str], init_options: dict, tmp_path) -> list[str]:
    exe = shutil.which(command[0], path=str(Path(sys.executable).parent)) or command[0]
    proc = subprocess.Popen([exe, *command[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
            "initializationOptions": init_options}})
        while _read(proc).get("id") != 1:
            pass
        _send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        uri = (tmp_path / "m.py").as_uri()
        _send(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1,
            "text": "import torch\nso = torch._export.aot_compile(m, (x,))\nr = torch._export.aot_load(so, 'cpu')\n"}}})
        while True:
            msg = _read(proc)
            if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
                return [d["code"] for d in msg["params"]["diagnostics"]]
    finally:
        proc.kill()


def test_helix_languages_toml(tmp_path):
    config = tomllib.loads(_block("Helix", "toml"))
    server = config["language-server"]["aoti-lsp"]
    assert "aoti-lsp" in next(l for l in config["language"] if l["name"] == "python")["language-servers"]
    # Helix sends `config` as initializationOptions
    assert _diagnostics_with([server["command"], *server["args"]], server["config"], tmp_path) == ["AOTI001", "AOTI002"]
    ignoring = {"settings": {**server["config"]["settings"], "ignore": ["AOTI002"]}}
    assert _diagnostics_with([server["command"], *server["args"]], ignoring, tmp_path) == ["AOTI001"]


def test_sublime_lsp_settings(tmp_path):
    client = json.loads(_block("Sublime Text", "json"))["clients"]["aoti-lsp"]
    assert client["enabled"] and client["selector"] == "source.python"
    assert _diagnostics_with(client["command"], client["initializationOptions"], tmp_path) == ["AOTI001", "AOTI002"]
