"""A keystroke that leaves a syntax error in code no rule reads is answered from its own
statement's parse (incremental.py, provisional); once typing settles, the file's tree decides.
Here tree-sitter's recovery of an unclosed `(` in a helper swallows the deprecated call after
it, so a full analysis finds nothing: after the pause the editor must show exactly that, and
the finding again once the bracket is closed."""

import asyncio
import sys

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from helpers import is_pull, start_session

TEXT = """import torch


def helper(rows):
    total = 0
    for row in rows:
        total += sum(row)
    return total


def legacy(model, x):
    so_path = torch._export.aot_compile(model, (x,))
    return so_path
"""


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "aoti_lsp", "serve"]),
    params=["visual-studio-code", "neovim@v0.11.0"],
)
async def client(lsp_client: LanguageClient, request, tmp_path):
    await start_session(lsp_client, client_capabilities(request.param), tmp_path)
    lsp_client.ws = tmp_path
    yield
    await lsp_client.shutdown_session()


async def _codes_until(client, uri, want: bool, timeout=15.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    codes = []
    while loop.time() < deadline:
        if is_pull(client):
            report = await client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri)))
            codes = [d.code for d in report.items]
        else:
            codes = [d.code for d in client.diagnostics.get(uri, [])]
        if ("AOTI001" in codes) == want:
            return codes
        await asyncio.sleep(0.1)
    raise AssertionError(f"AOTI001 {'never appeared' if want else 'never went away'}: {codes}")


def _type(client, uri, version, line, col, text):
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=version, uri=uri),
        [types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, col), types.Position(line, col)), text=text)]))


async def test_an_unclosed_bracket_settles_to_what_a_full_analysis_finds(client):
    path = client.ws / "serve.py"
    path.write_text(TEXT)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, TEXT)))
    await _codes_until(client, uri, want=True)

    from aoti_lsp.analysis.engine import analyze
    from aoti_lsp.analysis.source import Source

    line = TEXT.splitlines().index("    total = 0")
    col = len("    total = ")
    broken = TEXT.replace("    total = 0", "    total = (0")
    assert not analyze(Source(broken.encode(), str(path))).findings  # what the file's tree says
    _type(client, uri, 2, line, col, "(")
    await _codes_until(client, uri, want=False)  # after the pause, not a guess
    _type(client, uri, 3, line, col + 2, ")")
    await _codes_until(client, uri, want=True)
