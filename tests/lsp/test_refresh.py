"""A quiet editor: typing in one file refreshes the others only when their diagnostics change,
unchanged pulls are answered `unchanged`, and fix-all is offered only when it has work."""

import asyncio
import shutil
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from helpers import open_doc, start_session

FIXTURE = Path(__file__).parents[1] / "fixtures" / "AOTI102" / "cross_file"
SERVER = [sys.executable, "-m", "aoti_lsp", "serve"]


class Counting(dict):
    def __init__(self):
        super().__init__()
        self.sets: dict[str, int] = {}

    def __setitem__(self, uri, value):
        self.sets[uri] = self.sets.get(uri, 0) + 1
        super().__setitem__(uri, value)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=["pull", "push"])
async def client(lsp_client: LanguageClient, request, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws)
    if request.param == "pull":  # Neovim 0.11's capabilities, plus refresh support (VS Code has it)
        caps = client_capabilities("neovim@v0.11.0")
        caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    else:
        caps = client_capabilities("visual-studio-code")
    lsp_client.diagnostics = Counting()  # pytest-lsp stores each publish here

    await start_session(lsp_client, caps, ws)
    lsp_client.ws = ws
    lsp_client.pull = request.param == "pull"
    yield
    await lsp_client.shutdown_session()


async def _pull(client, uri, previous=None):
    return await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri), previous_result_id=previous))


async def _settle(client, uri):
    """A request answered after every notification sent before it (the server handles them in order)."""
    await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 0)))
    await asyncio.sleep(0.2)


async def _pause(client, uri):
    """Past the typing pause after which the server stores deferred summaries (guards.SETTLE_S)
    and refreshes what they change."""
    from aoti_lsp.lsp.guards import SETTLE_S

    await _settle(client, uri)
    await asyncio.sleep(SETTLE_S + 1.0)


def _type(client, uri, version, line, col, text):
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=version, uri=uri),
        [types.TextDocumentContentChangePartial(range=types.Range(types.Position(line, col), types.Position(line, col)),
                                                text=text)]))


async def test_typing_in_one_file_refreshes_the_other_only_when_it_changes(client):
    app, pkg = client.ws / "app.py", client.ws / "scripts" / "make_package.py"
    app_uri = await open_doc(client, app, app.read_text())
    pkg_text = pkg.read_text()
    pkg_uri = await open_doc(client, pkg, pkg_text)
    await _settle(client, pkg_uri)
    if client.pull:
        first = await _pull(client, app_uri)
        assert any(d.code == "AOTI102" for d in first.items)
        await _pull(client, pkg_uri)
    before_refresh, before_push = client.diagnostic_refresh_count, client.diagnostics.sets.get(app_uri, 0)

    # 12 keystrokes: a comment typed at the end of `import torch` (byte offsets below it move,
    # so make_package.py's summary changes on every one; app.py's diagnostics do not)
    end = len(pkg_text.splitlines()[0])
    for i, ch in enumerate("  # the model"[:12]):
        _type(client, pkg_uri, 2 + i, 0, end + i, ch)
    await _pause(client, pkg_uri)
    assert client.diagnostic_refresh_count == before_refresh
    assert client.diagnostics.sets.get(app_uri, 0) == before_push
    if client.pull:
        again = await _pull(client, app_uri, previous=first.result_id)
        assert again.kind == "unchanged" and again.result_id == first.result_id

    # CUDA -> CPU: app.py's finding goes away, and now the editor hears about it (once)
    lines = pkg.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if 'device="cuda"' in line)
    col = lines[row].index("cuda")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=40, uri=pkg_uri),
        [types.TextDocumentContentChangePartial(range=types.Range(types.Position(row, col), types.Position(row, col + 4)),
                                                text="cpu")]))
    await _pause(client, pkg_uri)
    if client.pull:
        assert client.diagnostic_refresh_count == before_refresh + 1
        now = await _pull(client, app_uri, previous=first.result_id)
        assert now.kind == "full" and not any(d.code == "AOTI102" and d.range.start.line == 11 for d in now.items)
    else:
        assert client.diagnostics.sets[app_uri] == before_push + 1
        assert not any(d.code == "AOTI102" and d.range.start.line == 11 for d in client.diagnostics[app_uri])


async def test_fix_all_is_offered_only_with_something_to_fix(client):
    async def fix_all(name, text):
        uri = await open_doc(client, client.ws / name, text)
        return await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri), range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[], only=["source.fixAll"])))

    assert not await fix_all("clean.py", "import torch\n\nprint(torch.ones(2))\n")
    # only an unsafe fix (the migration): fix-all, which applies safe fixes, has nothing to do
    assert not await fix_all("unsafe.py", "import torch\nso = torch._export.aot_compile(m, (x,))\n")
    actions = await fix_all("unused.py", "from torch._export import aot_load\nimport torch\n")
    assert [a.kind for a in actions] == ["source.fixAll.aoti-lsp"]
