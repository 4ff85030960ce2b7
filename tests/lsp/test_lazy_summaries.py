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
    (ws / "exporter.py").write_text(EXPORTS_POOL)  # indexed at start (test_an_exporter_...)

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


async def _follows_the_disk(client, opened, text: str, other, silent: str, loud: str) -> None:
    """`opened` (with `text`) has AOTI201 because of the closed file `other`; `other` rewritten
    as `silent` takes it away at the next pull (no notification: the pull sees the disk), and
    rewritten as `loud` with the editor's file-watch notification brings it back."""
    uri = opened.as_uri()
    opened.write_text(text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=text)))
    await _aoti201_until(client, uri, True)
    other.write_text(silent)
    await _aoti201_until(client, uri, False)
    other.write_text(loud + "\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=other.as_uri(), type=types.FileChangeType.Changed)]))
    await _aoti201_until(client, uri, True)


async def test_a_caller_read_only_when_asked_follows_the_disk(client):
    # the closed caller passes offsets without a leading zero, then with one, then without again
    await _follows_the_disk(client, client.ws / "inner.py", INNER, client.ws / "caller.py", COMPLETE, INCOMPLETE)


MODELS = ("import torch\n\n\nclass Pool(torch.nn.Module):\n    def forward(self, values, lengths):\n"
          "        return values.sum(0) / torch.cumsum(lengths, 0)[-1]\n")
EXPORTS_POOL = "import torch\nfrom models import Pool\n\nep = torch.export.export(Pool(), (v, l))\n"
EXPORTS_OWN = ("import torch\n\n\nclass Own(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
               "ep = torch.export.export(Own(), (x,))\n")


async def test_an_exporter_read_only_when_asked_follows_the_disk(client):
    """exporter.py only exports: indexed unparsed ("lazy_exports"), the same summary whatever it
    exports. Only its text puts models.py's forward (no export there) in scope."""
    await _follows_the_disk(client, client.ws / "models.py", MODELS, client.ws / "exporter.py", EXPORTS_OWN, EXPORTS_POOL)
