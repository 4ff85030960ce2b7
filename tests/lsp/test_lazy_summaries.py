"""A closed file whose only link to AOTI201 is a call passing `offsets=` is summarised unparsed by
the workspace index ("lazy_kw": jagged.summary_from_text) and read when the forward's check asks
(Project.from_file). Its summary is the same whatever the call says: a change on disk must still
reach the forward's diagnostics, with the file-watch notification and without it (the next pull)."""

import asyncio
import sys

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from helpers import start_session

INNER = ("import torch\n\n\nclass Inner(torch.nn.Module):\n    def forward(self, x, seq_offsets):\n"
         "        return x[: seq_offsets[-1]]\n\n\nrunner = torch._inductor.aoti_load_package('other.pt2')\n")
INCOMPLETE = "from inner import Inner\n\ny = Inner()(x, seq_offsets=l.cumsum(0))\n"
COMPLETE = "import torch\nfrom inner import Inner\n\ny = Inner()(x, seq_offsets=torch.cat([l.new_zeros(1), l.cumsum(0)]))\n"


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "aoti_lsp", "serve"]),
    params=["visual-studio-code"],
)
async def client(lsp_client: LanguageClient, request, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (ws / "inner.py").write_text(INNER)
    (ws / "caller.py").write_text(INCOMPLETE)

    await start_session(lsp_client, client_capabilities(request.param), ws)
    lsp_client.ws = ws
    yield
    await lsp_client.shutdown_session()


async def _aoti201_until(client, uri, want: bool, timeout=15.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    codes = []
    while loop.time() < deadline:
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri)))
        codes = [d.code for d in getattr(report, "items", None) or []]
        if ("AOTI201" in codes) == want:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"AOTI201 {'never appeared' if want else 'never went away'}: {codes}")


async def test_a_caller_read_only_when_asked_follows_the_disk(client):
    inner = client.ws / "inner.py"
    caller = client.ws / "caller.py"
    uri = inner.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=INNER)))
    await _aoti201_until(client, uri, True)  # the closed caller passes offsets without a leading zero

    caller.write_text(COMPLETE)  # no notification: the next pull sees the file changed on disk
    await _aoti201_until(client, uri, False)

    caller.write_text(INCOMPLETE + "\n")  # with the editor's file-watch notification
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=caller.as_uri(), type=types.FileChangeType.Changed)]))
    await _aoti201_until(client, uri, True)
