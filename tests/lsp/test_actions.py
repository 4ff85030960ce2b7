"""Code actions end to end: quick fix, disable-for-line, fix-all, hover, bad params."""

from lsprotocol import types

from helpers import apply_edits, diagnostics, edits_of, encoding, open_doc

TEXT = ('import torch\n\ns = "é😀"; so = torch._export.aot_compile(m, (x,))\n'
        'runner = torch._export.aot_load(so, "cuda:1")\n')


async def _actions(client, uri, diags, only=None):
    rng = diags[0].range if diags else types.Range(types.Position(0, 0), types.Position(0, 0))
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=rng,
        context=types.CodeActionContext(diagnostics=diags, only=only)))


async def test_quick_fix_migrates_the_call(client, tmp_path):
    uri = await open_doc(client, tmp_path / "m.py", TEXT)
    diags = sorted(await diagnostics(client, uri), key=lambda d: d.range.start.line)
    actions = await _actions(client, uri, [diags[0]])
    titles = [a.title for a in actions]
    # one artifact, one migration: the compile and its loader change together (never half)
    assert "aoti-lsp (AOTI001): Migrate to aoti_compile_and_package + aoti_load_package [unsafe]" in titles
    assert "aoti-lsp (AOTI001): Disable for this line" in titles
    fix = next(a for a in actions if a.title.endswith("aoti_load_package [unsafe]"))
    assert fix.kind == types.CodeActionKind.QuickFix
    if fix.edit is None:  # a lazy fix: its edit is built on codeAction/resolve (test_lazy_quick_fix.py)
        fix = await client.code_action_resolve_async(fix)
    new = apply_edits(TEXT, edits_of(fix, uri), encoding(client))
    assert 's = "é😀"; ep = torch.export.export(m, (x,), strict=True); so = torch._inductor.aoti_compile_and_package(ep)' in new
    assert "torch._inductor.aoti_load_package(so, device_index=1)" in new and "aot_load" not in new


async def test_disable_for_this_line(client, tmp_path):
    uri = await open_doc(client, tmp_path / "m.py", TEXT)
    diags = sorted(await diagnostics(client, uri), key=lambda d: d.range.start.line)
    actions = await _actions(client, uri, [diags[0]])
    noqa = next(a for a in actions if a.title.endswith("Disable for this line"))
    new = apply_edits(TEXT, edits_of(noqa, uri), encoding(client))
    assert new.splitlines()[2] == 's = "é😀"; so = torch._export.aot_compile(m, (x,))  # noqa: AOTI001'


async def test_migrate_all_in_file_is_consistent(client, tmp_path):
    uri = await open_doc(client, tmp_path / "m.py", TEXT)
    diags = await diagnostics(client, uri)
    actions = await _actions(client, uri, diags)
    migrate = next(a for a in actions if a.title == "aoti-lsp: Migrate every deprecated AOTI call in this file")
    if migrate.edit is None:
        migrate = await client.code_action_resolve_async(migrate)
    new = apply_edits(TEXT, edits_of(migrate, uri), encoding(client))
    assert "aot_compile" not in new and "aot_load" not in new
    assert "torch._inductor.aoti_load_package(so, device_index=1)" in new


async def test_fix_all_source_action_has_only_safe_fixes(client, tmp_path):
    text = "from torch._export import aot_load\nimport torch\n"
    uri = await open_doc(client, tmp_path / "u.py", text)
    actions = await _actions(client, uri, [], only=["source.fixAll"])
    assert [a.kind for a in actions] == ["source.fixAll.aoti-lsp"]
    action = actions[0] if actions[0].edit else await client.code_action_resolve_async(actions[0])
    assert apply_edits(text, edits_of(action, uri), encoding(client)) == "import torch\n"
    # unsafe migrations are not part of fix-all
    uri2 = await open_doc(client, tmp_path / "m.py", TEXT)
    actions = await _actions(client, uri2, [], only=["source.fixAll"])
    resolved = [a if a.edit else await client.code_action_resolve_async(a) for a in actions]
    assert all(a.edit is None for a in resolved)


async def test_hover_shows_replacement(client, tmp_path):
    uri = await open_doc(client, tmp_path / "m.py", TEXT)
    diags = sorted(await diagnostics(client, uri), key=lambda d: d.range.start.line)
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), diags[1].range.start))
    assert "aoti_load_package" in hover.contents.value and "AOTI002" in hover.contents.value


async def test_bad_params_do_not_kill_the_server(client, tmp_path):
    # a request for a document that was never opened, and a hover far outside the text
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier("file:///nowhere.py"), types.Position(5, 5)))
    assert hover is None
    uri = await open_doc(client, tmp_path / "m.py", TEXT)
    await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(999, 999)))
    assert len(await diagnostics(client, uri)) == 2  # still serving
