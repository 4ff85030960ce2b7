"""What users hit in real editors (issue 23), with the capabilities of VS Code, Neovim 0.7, 0.11
and 0.12 (pull diagnostics without refresh support): stale pulls after a multi-file quick fix,
the hover's preview of such a fix, and the words that say a fix is unsafe."""

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from aoti_lsp.lsp.guards import SETTLE_S
from helpers import apply_edits, encoding, start_session, write_project
from test_quick_fix_across_files import FILES

SERVER = [sys.executable, "-m", "aoti_lsp", "serve", "--stdio"]


def _profile(name):
    if name == "neovim@v0.12":  # 0.11's capabilities; 0.12 says refreshSupport = false outright
        caps = client_capabilities("neovim@v0.11.0")
        caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=False)
        return caps
    return client_capabilities(name)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER),
                    params=["neovim@v0.12", "neovim@v0.11.0", "visual-studio-code", "neovim@v0.7.0"])
async def client(lsp_client: LanguageClient, request, tmp_path):
    marker = request.node.get_closest_marker("project")
    if marker is not None:  # on disk before the editor starts: the workspace index reads it
        write_project(tmp_path, marker.args[0])
    await start_session(lsp_client, _profile(request.param), tmp_path, root=True)
    lsp_client.pull = lsp_client.capabilities.text_document.diagnostic is not None
    lsp_client.held = {}  # uri -> (result id, items): what a pull client shows
    yield
    await lsp_client.shutdown_session()


async def _shown(client, uri):
    """What the editor shows for `uri` now: a pull with the id it holds, or the last publish."""
    if client.pull:
        old_id, old = client.held.get(uri, (None, []))
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri), previous_result_id=old_id))
        items = old if report.kind == "unchanged" else list(report.items)
        client.held[uri] = (report.result_id, items)
        return items
    await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 0)))
    await asyncio.sleep(0.3)
    return list(client.diagnostics.get(uri, []))


def _open(client, path, text, version=0):
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=path.as_uri(), language_id="python", version=version, text=text)))
    return path.as_uri()


def _change(client, uri, version, text):
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=version, uri=uri),
        [types.TextDocumentContentChangeWholeDocument(text=text)]))


@pytest.mark.project(FILES)
@pytest.mark.parametrize("build_open", [True, False])
async def test_multi_file_quick_fix_then_save_is_never_answered_unchanged(client, tmp_path, build_open):
    pkg = tmp_path / "pkg"
    build_uri = (pkg / "build.py").as_uri()
    if build_open:  # else the server knows build.py from the workspace index only (its summary)
        _open(client, pkg / "build.py", (pkg / "build.py").read_text())
    uri = _open(client, pkg / "serve.py", (pkg / "serve.py").read_text())
    loop = asyncio.get_running_loop()
    deadline, fix = loop.time() + 60, None
    while loop.time() < deadline and fix is None:  # the workspace index finds paths.py
        diags = [d for d in await _shown(client, uri) if d.code == "AOTI002"]
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri), range=diags[0].range,
            context=types.CodeActionContext(diagnostics=diags))) if diags else []
        fix = next((a for a in actions or [] if "in 3 files" in a.title), None)
        if fix is None:
            await asyncio.sleep(0.2)
    assert fix is not None, [a.title for a in actions or []]
    if fix.edit is None:
        fix = await client.code_action_resolve_async(fix)
    edit = fix.edit
    per_uri = ({dc.text_document.uri: dc.edits for dc in edit.document_changes} if edit.document_changes
               else dict(edit.changes))
    enc = encoding(client)
    new = {u: apply_edits((pkg / u.rsplit("/", 1)[-1]).read_text(), e, enc) for u, e in per_uri.items()}
    # the editor applies the edit buffer by buffer, pulling each buffer it changed at once;
    # paths.py, not open, is edited in a buffer the server is not told about (Neovim loads it
    # hidden), and on Linux Neovim watches no files (dynamicRegistration = false): the save
    # is the only sign the server gets
    opened = (uri, build_uri) if build_open else (uri,)
    for u in opened:
        _change(client, u, 1, new[u])
        await _shown(client, u)
    await asyncio.sleep(SETTLE_S + 0.5)  # the user looks at it: the server stores what typing deferred
    for u in new:  # :wall
        (pkg / u.rsplit("/", 1)[-1]).write_text(new[u])
        if u in opened:
            client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(u)))
    if not client.pull:  # a pull looks at the disk; a push client hears once the saves pause
        await asyncio.sleep(SETTLE_S + 0.5)
    shown = await _shown(client, uri)
    assert "aoti_load_package(TOWER)" in new[uri]
    assert not [d for d in shown if d.code in ("AOTI002", "AOTI003")], [(d.code, d.message) for d in shown]


CUDA_FILES = {**FILES, "pkg/build.py": """
        import torch
        from pkg.paths import TOWER
        def build(model):
            x = torch.randn(2, device="cuda")
            torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": TOWER})
    """}


async def _migration(client, tmp_path):
    serve = tmp_path / "pkg" / "serve.py"
    uri = _open(client, serve, serve.read_text())
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while loop.time() < deadline:  # the workspace index finds build.py and paths.py
        diags = [d for d in await _shown(client, uri) if d.code == "AOTI002"]
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri), range=diags[0].range,
            context=types.CodeActionContext(diagnostics=diags))) if diags else []
        fix = next((a for a in actions or [] if "in 3 files" in a.title), None)
        if fix is not None:
            return uri, diags[0], fix
        await asyncio.sleep(0.2)
    raise AssertionError(f"no migration offered: {[a.title for a in actions or []]} {[d.data for d in diags]}")


@pytest.mark.project(FILES)
async def test_hover_previews_each_file_of_a_multi_file_migration_apart(client, tmp_path):
    uri, diag, _ = await _migration(client, tmp_path)
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), diag.range.start))
    text = hover.contents.value if hasattr(hover.contents, "value") else str(hover.contents)
    preview = text.split("```python", 1)[1].split("```", 1)[0]
    # serve.py's own lines as they read after the fix; the other files' under their names
    assert "runner = torch._inductor.aoti_load_package(TOWER)" in preview, preview
    assert "# build.py" in preview and "# paths.py" in preview, preview
    assert 'TOWER = os.path.join(ARTIFACT_DIR, "tower.pt2")' in preview.split("# paths.py", 1)[1], preview
    assert "aoti_compile_and_package" in preview.split("# build.py", 1)[1].split("# paths.py", 1)[0], preview
    serve_part = preview.split("# build.py", 1)[0]
    assert ".pt2" not in serve_part and "aoti_compile_and_package" not in serve_part, preview


@pytest.mark.project(CUDA_FILES)
async def test_a_migration_that_decides_the_device_says_so_in_its_title_and_hover(client, tmp_path):
    uri, diag, fix = await _migration(client, tmp_path)
    assert fix.title.endswith("[unsafe]"), fix.title
    assert 'decides the device: drops device="cpu"' in fix.title, fix.title
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), diag.range.start))
    text = hover.contents.value if hasattr(hover.contents, "value") else str(hover.contents)
    assert "(unsafe, editor only):" in text and "display-only" not in text, text


@pytest.mark.project(CUDA_FILES)
async def test_device_errors_name_the_deprecated_loader_that_causes_them(client, tmp_path):
    uri, aoti002, _ = await _migration(client, tmp_path)
    shown = await _shown(client, uri)
    (aoti101,) = [d for d in shown if d.code == "AOTI101"]
    if not client.capabilities.text_document.publish_diagnostics.related_information:
        pytest.skip("this client takes no related information")
    named = [r for r in aoti101.related_information or [] if "(AOTI002)" in r.message]
    assert named and named[0].location.uri == uri and named[0].location.range == aoti002.range, aoti101
    assert "deprecated `torch._export.aot_load`" in named[0].message


async def test_a_config_change_on_disk_reaches_the_next_pull(client, tmp_path):
    """The config is an input of the result too: an editor that watches no files still sees
    pyproject.toml's new `ignore` at its next pull, never `unchanged`."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    path = tmp_path / "m.py"
    path.write_text("import torch\nso = torch._export.aot_compile(m, (x,))\n")
    uri = _open(client, path, path.read_text())
    assert [d.code for d in await _shown(client, uri)] == ["AOTI001"]
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n[tool.aoti-lsp]\nignore = ['AOTI001']\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    assert [d.code for d in await _shown(client, uri)] == []
