"""Diagnostics end to end: ranges in every encoding, metadata, push and pull, incremental edits."""

from lsprotocol import types

from helpers import diagnostics, encoding, is_pull, next_push, open_doc

TEXT = 'import torch\n\ns = "é😀"; so = torch._export.aot_compile(m, (x,))\nrunner = torch._export.aot_load(so, "cpu")\n'
PREFIX = 's = "é😀"; so = '
UNITS = {"utf-8": len(PREFIX.encode()), "utf-16": len(PREFIX.encode("utf-16-le")) // 2, "utf-32": len(PREFIX)}


async def test_range_in_negotiated_encoding(client, tmp_path):
    uri = await open_doc(client, tmp_path / "m.py", TEXT)
    diags = sorted(await diagnostics(client, uri), key=lambda d: d.range.start.line)
    assert [d.code for d in diags] == ["AOTI001", "AOTI002"]
    first = diags[0]
    enc = encoding(client)
    start = UNITS[enc]
    name = "torch._export.aot_compile"
    assert first.range == types.Range(types.Position(2, start), types.Position(2, start + len(name)))
    # the profiles really differ: VS Code 16 units, Neovim (utf-8) 19 bytes, Emacs (utf-32) 15 code points
    assert {"utf-16": 16, "utf-8": 19, "utf-32": 15}[enc] == start


async def test_diagnostic_metadata(client, tmp_path):
    uri = await open_doc(client, tmp_path / "m.py", TEXT)
    d = (await diagnostics(client, uri))[0]
    assert d.source == "aoti-lsp"
    assert d.severity == types.DiagnosticSeverity.Warning
    assert list(d.tags) == [types.DiagnosticTag.Deprecated]
    assert d.code_description.href.endswith("docs/rules/AOTI001.md")
    assert "aoti_compile_and_package" in d.message
    # the migration is a lazy fix: title and applicability, no edits (test_lazy_quick_fix.py)
    assert d.data["fix"]["applicability"] == "unsafe" and d.data["fix"]["lazy"] and "edits" not in d.data["fix"]
    assert d.data["noqa"]["newText"].endswith("# noqa: AOTI001")


async def test_incremental_edit_updates_diagnostics(client, tmp_path):
    uri = await open_doc(client, tmp_path / "m.py", TEXT)
    assert len(await diagnostics(client, uri)) == 2
    # comment out the load line with an incremental change (line 3, col 0)
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(3, 0), types.Position(3, 0)), text="# ")
    if not is_pull(client):
        client.diagnostics.pop(uri, None)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=2), [change]))
    diags = await (diagnostics(client, uri) if is_pull(client) else next_push(client, uri))
    assert [d.code for d in diags] == ["AOTI001"]
    # type a character inside the multi-byte line: positions must still line up
    enc = encoding(client)
    col = {"utf-8": 4, "utf-16": 4, "utf-32": 4}[enc]  # after `s = "`, before é
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(2, col), types.Position(2, col)), text="ü")
    if not is_pull(client):
        client.diagnostics.pop(uri, None)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=3), [change]))
    diags = await (diagnostics(client, uri) if is_pull(client) else next_push(client, uri))
    prefix = 's = "üé😀"; so = '
    expected = {"utf-8": len(prefix.encode()), "utf-16": len(prefix.encode("utf-16-le")) // 2, "utf-32": len(prefix)}[enc]
    assert diags[0].range.start == types.Position(2, expected)


async def test_close_clears_push_diagnostics(client, tmp_path):
    uri = await open_doc(client, tmp_path / "m.py", TEXT)
    await diagnostics(client, uri)
    if is_pull(client):
        return
    client.diagnostics.pop(uri, None)
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    assert await next_push(client, uri) == []
