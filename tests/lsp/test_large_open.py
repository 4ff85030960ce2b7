"""The real server over stdio opens a large file (the bench's generator, ~150 KB): its first
diagnostics are a whole analysis's, the same as `aoti-lsp --check` finds, and stay so once typing
pauses (nothing is replaced later: the first analysis is the whole file's)."""

import asyncio

from differential import generated_source
from helpers import is_pull, open_doc
from lsprotocol import types

from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.source import Source

async def _diagnostics(client, uri, timeout: float = 30.0) -> list:
    """The diagnostics the editor shows now: a pull client asks; a push client has the last
    ones the server published (waited for, the first time)."""
    if is_pull(client):
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri)))
        return report.items
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while uri not in client.diagnostics and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return client.diagnostics.get(uri, [])


def _view(items) -> list:
    return sorted((d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character,
                   d.message) for d in items)


async def test_a_large_file_opens_on_a_whole_analysis(client):
    text = generated_source(300, 6000)
    data = text.encode()
    config = Config()
    assert len(data) >= 100_000
    full = analyze(Source(data, "big.py"), config)
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def point(offset):  # ASCII text: a column is a byte in every encoding
        row = max(i for i, s in enumerate(starts) if s <= offset)
        return row, offset - starts[row]

    want = sorted((f.code, *point(f.start), *point(f.end), f.message) for f in full.findings)
    uri = await open_doc(client, client.root / "big.py", text)
    first = await _diagnostics(client, uri)  # the first ones: before typing could pause
    assert _view(first) == want
    await asyncio.sleep(1.5)  # typing pauses: what waited for it changes nothing here
    assert _view(await _diagnostics(client, uri)) == want
