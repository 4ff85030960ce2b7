"""Notebook documents end to end (issue 26), for the three client profiles: an open notebook's
code cells are one program, diagnostics come per cell URI, code actions and fix-all edit the
cell they belong to, and an incremental edit of one cell is seen. (The VS Code notebook editor
in code-server needs a Jupyter extension from the marketplace, not reachable offline: this is
the LSP-level test, with the cell URIs VS Code uses.)"""

from lsprotocol import types

import asyncio

from helpers import apply_edits, encoding, is_pull


async def pushed(client, uri, timeout=10.0):
    """A cell's diagnostics: pushed for every client profile (lsp/notebooks.py says why)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if uri in client.diagnostics:
            return list(client.diagnostics[uri])
        await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), timeout)
    raise AssertionError(f"no diagnostics published for {uri}")

CELLS = [
    (types.NotebookCellKind.Markup, "markdown", "# Export é😀"),
    (types.NotebookCellKind.Code, "python", "%matplotlib inline\nimport torch\nfrom torch._export import aot_compile, aot_load\n\nDEVICE = \"cuda\""),
    (types.NotebookCellKind.Code, "python", "model = torch.nn.Linear(8, 4)\nex = torch.randn(4, 8)"),
    (types.NotebookCellKind.Code, "python",
     'ep = torch.export.export(model, (ex,))\npt2 = torch._inductor.aoti_compile_and_package(ep, package_path="m.pt2")'),
    (types.NotebookCellKind.Code, "python", 's = "é😀"; runner = torch._inductor.aoti_load_package(pt2)\nout = runner(torch.randn(4, 8).to(DEVICE))'),
    (types.NotebookCellKind.Code, "python", 'so = aot_compile(model, (ex,), options={"aot_inductor.output_path": "/tmp/o/m.so"})\nr = aot_load(so, "cpu")'),
]


def _open(client, tmp_path, cells=CELLS):
    nb_uri = (tmp_path / "export.ipynb").as_uri()
    uris = [f"vscode-notebook-cell:{(tmp_path / 'export.ipynb').as_posix()}#W{i}sZmlsZQ%3D%3D" for i in range(len(cells))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=nb_uri, notebook_type="jupyter-notebook", version=1, cells=[
            types.NotebookCell(kind=kind, document=uri) for (kind, _, _), uri in zip(cells, uris)]),
        cell_text_documents=[types.TextDocumentItem(uri=uri, language_id=lang, version=1, text=text)
                             for (_, lang, text), uri in zip(cells, uris)]))
    return nb_uri, uris


async def _actions(client, uri, diags, only=None):
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=diags[0].range,
        context=types.CodeActionContext(diagnostics=diags, only=only)))


def _by_uri(action):
    edit = action.edit
    if edit.document_changes:
        return {dc.text_document.uri: list(dc.edits) for dc in edit.document_changes}
    return dict(edit.changes)


async def test_cells_are_one_program_with_diagnostics_per_cell(client, tmp_path):
    _, uris = _open(client, tmp_path)
    device = await pushed(client, uris[4])
    assert [d.code for d in device] == ["AOTI102"]  # DEVICE from cell 2, the compile from cell 4
    d = device[0]
    assert d.range.start.line == 1 and d.range.end.line == 1  # the row in its cell
    assert "(line 2 of a cell above)" in d.message  # the compile (the editor's cell numbers are not the file's)
    if d.related_information:
        assert any(r.location.uri == uris[3] for r in d.related_information)
    old = await pushed(client, uris[5])
    assert sorted(x.code for x in old) == ["AOTI001", "AOTI002"]
    assert await pushed(client, uris[1]) == []
    assert await pushed(client, uris[2]) == []
    if is_pull(client):  # pulled: nothing more (no duplicates of what was pushed)
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uris[4])))
        assert not report.items


async def test_quick_fix_and_noqa_edit_the_right_cell(client, tmp_path):
    _, uris = _open(client, tmp_path)
    diags = await pushed(client, uris[4])
    actions = await _actions(client, uris[4], diags)
    move = next(a for a in actions if a.title == 'aoti-lsp (AOTI102): Move it to "cpu"')
    edits = _by_uri(move)
    assert list(edits) == [uris[4]]
    new = apply_edits(CELLS[4][2], edits[uris[4]], encoding(client))
    assert new.split("\n")[1] == 'out = runner(torch.randn(4, 8).to("cpu"))'
    noqa = next(a for a in actions if a.title == "aoti-lsp (AOTI102): Disable for this line")
    new = apply_edits(CELLS[4][2], _by_uri(noqa)[uris[4]], encoding(client))
    assert new.split("\n")[1].endswith("  # noqa: AOTI102")


async def test_migration_edits_every_cell_it_touches(client, tmp_path):
    _, uris = _open(client, tmp_path)
    diags = await pushed(client, uris[5])
    actions = await _actions(client, uris[5], diags)
    migrate = next(a for a in actions if a.title == "aoti-lsp: Migrate every deprecated AOTI call in this notebook")
    edits = _by_uri(migrate)
    assert set(edits) == {uris[1], uris[5]}  # the import in cell 2, the calls in cell 6
    head = apply_edits(CELLS[1][2], edits[uris[1]], encoding(client))
    assert "aot_compile" not in head and head.startswith("%matplotlib inline\nimport torch\n")
    body = apply_edits(CELLS[5][2], edits[uris[5]], encoding(client))
    assert "torch._inductor.aoti_compile_and_package(" in body and "aoti_load_package(so)" in body
    assert 'package_path="/tmp/o/m.pt2"' in body


async def test_an_incremental_cell_edit_is_seen(client, tmp_path):
    nb_uri, uris = _open(client, tmp_path)
    assert [d.code for d in await pushed(client, uris[4])] == ["AOTI102"]
    line = CELLS[4][2].split("\n")[1]
    col = line.index("DEVICE")
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(1, col), types.Position(1, col + len("DEVICE"))), text='"cpu"')
    client.diagnostics.pop(uris[4], None)
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(version=2, uri=nb_uri),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=uris[4], version=2), changes=[change])]))))
    assert await pushed(client, uris[4]) == []


async def _codes_until(client, uri, code, want: bool, timeout=15.0):
    """Diagnostics of `uri` once `code` is (want) or is not among them, pulled or pushed."""
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
        if any(d.code == code for d in diags) == want:
            return diags
        await asyncio.sleep(0.1)
    raise AssertionError(f"{code} {'never appeared' if want else 'never went away'}: {[d.code for d in diags]}")


SERVE = 'import torch\n\nrunner = torch._inductor.aoti_load_package("m.pt2", device_index=0)\n'


async def test_an_open_notebook_is_part_of_the_project(client, tmp_path):
    """serve.py loads, with device_index=0, the package the open notebook compiles for cpu; the
    notebook's edit to a cuda example takes the finding away."""
    from helpers import open_doc

    serve = await open_doc(client, tmp_path / "serve.py", SERVE)
    nb_uri, uris = _open(client, tmp_path)
    diags = await _codes_until(client, serve, "AOTI101", True)
    assert "export.ipynb" in next(d for d in diags if d.code == "AOTI101").message
    change = types.TextDocumentContentChangeWholeDocument(text="model = torch.nn.Linear(8, 4)\nex = torch.randn(4, 8, device=\"cuda\")")
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(version=2, uri=nb_uri),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=uris[2], version=2), changes=[change])]))))
    await _codes_until(client, serve, "AOTI101", False)


async def test_a_notebook_on_disk_is_read_as_its_program(client, tmp_path):
    """A notebook that is not open: its program is what the workspace reads of it (told of the
    file by the watcher, whether or not the index saw it first)."""
    import json

    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": text}
             for text in ("import torch\n!nvidia-smi", 'ep = torch.export.export(torch.nn.Linear(8, 4), (torch.randn(4, 8),))\n'
                          'torch._inductor.aoti_compile_and_package(ep, package_path="m.pt2")')]
    (tmp_path / "export.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    from helpers import open_doc

    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=(tmp_path / "export.ipynb").as_uri(), type=types.FileChangeType.Created)]))
    serve = await open_doc(client, tmp_path / "serve.py", SERVE)
    await _codes_until(client, serve, "AOTI101", True)


async def test_a_py_migration_edits_a_notebook_on_disk_as_json(client, tmp_path):
    """The migration of serve.py also migrates the compile in export.ipynb (not open): its edit
    is of the notebook's JSON (only the cell's source), never of the program the checks read."""
    import json

    from helpers import open_doc

    cells = [{"cell_type": "code", "execution_count": 1, "id": "a", "metadata": {}, "outputs": [], "source": [
        "from torch._export import aot_compile\n", "import torch\n", "%time m = torch.nn.Linear(8, 4)\n",
        'aot_compile(m, (torch.randn(4, 8),), options={"aot_inductor.output_path": "/tmp/x/model.so"})']}]
    raw = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
    (tmp_path / "export.ipynb").write_text(raw)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=(tmp_path / "export.ipynb").as_uri(), type=types.FileChangeType.Created)]))
    text = 'from torch._export import aot_load\n\nrunner = aot_load("/tmp/x/model.so", "cpu")\n'
    uri = await open_doc(client, tmp_path / "serve.py", text)
    diags = await _codes_until(client, uri, "AOTI002", True)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=diags[0].range,
        context=types.CodeActionContext(diagnostics=diags)))
    migrate = next(a for a in actions if a.title == "aoti-lsp: Migrate every deprecated AOTI call in this file")
    if migrate.edit is None:
        migrate = await client.code_action_resolve_async(migrate)
    edits = _by_uri(migrate)
    nb_uri = (tmp_path / "export.ipynb").as_uri()
    assert set(edits) == {uri, nb_uri}
    new = json.loads(apply_edits(raw, edits[nb_uri], encoding(client)))
    source = "".join(new["cells"][0]["source"])
    assert "%time m = torch.nn.Linear(8, 4)" in source and "aot_compile" not in source
    assert 'package_path="/tmp/x/model.pt2"' in source
    assert {**new["cells"][0], "source": None} == {**cells[0], "source": None}
