"""While the workspace index is still being read, a migration could be planned without a file
it must edit (seen: "renames tower.so -> tower.pt2 in 2 files" for a 3-file artifact, taken 0.05 s
after opening): no migration action is offered, nor resolved, until the index is read."""

from __future__ import annotations

import asyncio

import inprocess
from lsprotocol import types

from aoti_lsp.lsp import server as server_mod

BUILD = """import torch
from paths import TOWER
so = torch._export.aot_compile(Net(), (x,), options={"aot_inductor.output_path": TOWER})
"""
SERVE = """import torch
from paths import TOWER
runner = torch._export.aot_load(TOWER, "cpu")
"""


def _actions(ls, doc):
    diags = ls.diagnostics(doc)
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri),
        range=types.Range(start=types.Position(0, 0), end=types.Position(3, 0)),
        context=types.CodeActionContext(diagnostics=diags, only=[types.CodeActionKind.QuickFix]))
    return server_mod.code_action(ls, params) or []


def test_no_migration_is_offered_or_resolved_while_the_index_is_read(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname='p'\nversion='0'\n")
    (tmp_path / "paths.py").write_text('TOWER = "/srv/tower.so"\n')
    (tmp_path / "serve.py").write_text(SERVE)
    ls = inprocess.server()
    ls.roots = [str(tmp_path)]
    doc = inprocess.opened(ls, (tmp_path / "build.py").as_uri(), str(tmp_path / "build.py"), BUILD)

    ls.indexing = True  # as between `initialized` and the end of index_workspace
    titles = [a.title for a in _actions(ls, doc)]
    assert titles and not any("Migrate" in t for t in titles), titles  # "Disable for this line" stays
    resolved = server_mod.code_action_resolve(ls, types.CodeAction(
        title="x", data={"uri": doc.uri, "version": doc.version, "action": "migrate"}))
    assert resolved.edit is None

    asyncio.run(ls.index_workspace())  # the index read: serve.py is known
    assert not ls.indexing
    titles = [a.title for a in _actions(ls, doc)]
    assert any("Migrate" in t and "in 3 files" in t for t in titles), titles
