"""Cross-file through the server's workspace index: make_package.py compiles for CUDA, app.py
calls the loaded package with CPU tensors. Editing make_package.py re-checks app.py."""

import asyncio
import shutil
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from helpers import is_pull, start_session

FIXTURE = Path(__file__).parents[1] / "fixtures" / "AOTI102" / "cross_file"


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "aoti_lsp", "serve"]),
    params=["visual-studio-code", "neovim@v0.11.0"],
)
async def client(lsp_client: LanguageClient, request, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws)

    await start_session(lsp_client, client_capabilities(request.param), ws)
    lsp_client.ws = ws
    yield
    await lsp_client.shutdown_session()


async def _codes_until(client, uri, want: bool, timeout=15.0):
    """Diagnostics of `uri` once AOTI102 is (want=True) or is not there, pulling or waiting for pushes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    diags = []
    while loop.time() < deadline:
        if is_pull(client):
            report = await client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri)))
            diags = list(report.items)
        else:
            diags = list(client.diagnostics.get(uri, []))
        # the CPU call on line 12; after the edit the CUDA call on line 13 is the mismatch instead
        if any(d.code == "AOTI102" and d.range.start.line == 11 for d in diags) == want:
            return diags
        await asyncio.sleep(0.1)
    raise AssertionError(f"AOTI102 {'never appeared' if want else 'never went away'}: {[d.code for d in diags]}")


async def test_cuda_package_called_with_cpu_inputs_in_another_file(client):
    app = client.ws / "app.py"
    uri = app.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri, "python", 1, app.read_text())))
    diags = await _codes_until(client, uri, want=True)
    d = next(d for d in diags if d.code == "AOTI102")
    assert d.range.start == types.Position(11, 13)
    assert "make_package.py" in d.message
    related = d.related_information or []
    if client.capabilities.text_document.publish_diagnostics.related_information:
        assert any(r.location.uri.endswith("scripts/make_package.py") for r in related)

    # the other file is edited in the editor: CUDA -> CPU, and app.py is clean again
    pkg = client.ws / "scripts" / "make_package.py"
    pkg_uri = pkg.as_uri()
    text = pkg.read_text()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(pkg_uri, "python", 1, text)))
    line = text.splitlines().index('example = torch.randn(4, 8, device="cuda")')
    col = text.splitlines()[line].index("cuda")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=2, uri=pkg_uri),
        [types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, col), types.Position(line, col + 4)), text="cpu")]))
    diags = await _codes_until(client, uri, want=False)
    assert [d.range.start.line for d in diags if d.code == "AOTI102"] == [12]

    # and back to CUDA: the finding returns
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=3, uri=pkg_uri),
        [types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, col), types.Position(line, col + 3)), text="cuda")]))
    await _codes_until(client, uri, want=True)


async def test_lines_added_where_no_rule_looks_move_the_other_files_related_places(client):
    """A blank line typed at the top of make_package.py changes no finding (incremental.py keeps
    its analysis and defers its summary); once typing settles, the summary is stored and app.py's
    related location into make_package.py moves down a line."""
    if not client.capabilities.text_document.publish_diagnostics.related_information:
        return  # this profile shows no related information
    app = client.ws / "app.py"
    uri = app.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, app.read_text())))
    pkg = client.ws / "scripts" / "make_package.py"

    def related_line(diags):
        d = next(d for d in diags if d.code == "AOTI102")
        return min(r.location.range.start.line for r in d.related_information if r.location.uri == pkg.as_uri())

    before = related_line(await _codes_until(client, uri, want=True))
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(pkg.as_uri(), "python", 1, pkg.read_text())))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=2, uri=pkg.as_uri()),
        [types.TextDocumentContentChangePartial(range=types.Range(types.Position(0, 0), types.Position(0, 0)), text="\n")]))
    loop = asyncio.get_running_loop()
    deadline, now = loop.time() + 15, before
    while loop.time() < deadline and now != before + 1:
        await asyncio.sleep(0.2)
        now = related_line(await _codes_until(client, uri, want=True))
    assert now == before + 1
