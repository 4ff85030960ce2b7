"""Real torch 2.13: the migration taken from the editor's quick fix, judged by running the project
(tests/realshapes.py). The client opens the file of the deprecated compile, takes the AOTI001
migration action, applies its WorkspaceEdit to every file it names, and the project must print
what the old artifact printed, at every batch size. One profile (VS Code): each run compiles."""

import asyncio
import shutil
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

import realshapes as rs
from helpers import apply_edits, diagnostics, encoding, open_doc, start_session

pytestmark = pytest.mark.torch
SERVER = [sys.executable, "-m", "aoti_lsp", "serve", "--stdio"]
# the file holding the compile, per project
SHAPES = {"tempdir_script": "run.py", "tutorial_two_scripts": "export.py", "graph_branches": "run.py",
          "command_for_script": "compile.py"}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def vscode(lsp_client: LanguageClient, request, tmp_path):
    # the project is there before the server starts, as when an editor opens a folder: a file
    # written while the workspace index runs may be missed, and a migration offered without it
    shutil.copytree(rs.PROJECTS / request.node.callspec.params["name"], tmp_path, dirs_exist_ok=True)

    await start_session(lsp_client, client_capabilities("visual-studio-code"), tmp_path, root=True)
    yield
    await lsp_client.shutdown_session()


async def _migration(client, uri, timeout=20.0):
    """The AOTI001 migration action, once the workspace index has the project (else the titles seen)."""
    loop = asyncio.get_running_loop()
    deadline, seen = loop.time() + timeout, []
    while loop.time() < deadline:
        diags = [d for d in await diagnostics(client, uri) if d.code == "AOTI001"]
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri), range=diags[0].range,
            context=types.CodeActionContext(diagnostics=diags))) if diags else []
        seen = [a.title for a in actions or []] + [d.message for d in diags]
        fix = next((a for a in actions or [] if a.title.startswith("aoti-lsp (AOTI001): Migrate")), None)
        if fix is not None:
            return fix if fix.edit is not None else await client.code_action_resolve_async(fix)
        await asyncio.sleep(0.2)
    raise AssertionError(f"no migration offered: {seen}")


def _per_file(edit) -> dict[Path, list]:
    if edit.document_changes:
        pairs = [(dc.text_document.uri, dc.edits) for dc in edit.document_changes]
    else:
        pairs = list(edit.changes.items())
    assert len({uri for uri, _ in pairs}) == len(pairs), pairs  # one edit list per document
    return {Path(unquote(urlparse(uri).path)): edits for uri, edits in pairs}


def _params():
    shapes = {s.name: s for s in rs.MIGRATE + rs.EDITOR_ONLY}
    return [pytest.param(n, marks=[pytest.mark.xfail(strict=True, reason=shapes[n].todo)] if shapes[n].todo else [])
            for n in SHAPES]


@pytest.mark.parametrize("name", _params())
async def test_quick_fix_migration_prints_the_same_at_every_batch_size(vscode, name, tmp_path, tmp_path_factory):
    shape = next(s for s in rs.MIGRATE + rs.EDITOR_ONLY if s.name == name)
    target = tmp_path / SHAPES[name]
    uri = await open_doc(vscode, target, target.read_text())
    fix = await _migration(vscode, uri)
    enc = encoding(vscode)
    for path, edits in _per_file(fix.edit).items():  # the client applies the WorkspaceEdit
        assert tmp_path in path.parents, path
        path.write_text(apply_edits(path.read_text(), edits, enc))
    assert rs.old_api_left(tmp_path) == [], (fix.title, fix.edit)

    env = rs.torch_env()
    old = rs.before(shape, tmp_path_factory.mktemp("old"), env)
    new = rs.run(shape, tmp_path, env)
    assert rs.BANNER not in new.stderr
    assert new.lines == old.lines
