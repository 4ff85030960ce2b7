"""One quick fix migrates an artifact in every file that names it: the editor gets one
WorkspaceEdit over all of them (documentChanges with versions for open documents), applies it,
and the project checks clean."""

import asyncio

import pytest
from lsprotocol import types

from helpers import apply_edits, diagnostics, encoding, open_doc

FILES = {
    "pyproject.toml": "[project]\nname = 'p'\nversion = '0'\n",
    "pkg/__init__.py": "",
    "pkg/paths.py": """
        import os
        ARTIFACT_DIR = os.environ.get("ARTIFACT_DIR", "/srv/artifacts")
        TOWER = os.path.join(ARTIFACT_DIR, "tower.so")
    """,
    "pkg/build.py": """
        import torch
        from pkg.paths import TOWER
        def build(model, x):
            torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": TOWER})
    """,
    "pkg/serve.py": """
        import torch
        from pkg.paths import TOWER
        runner = torch._export.aot_load(TOWER, "cpu")
    """,
}


@pytest.mark.project(FILES)
async def test_one_quick_fix_edits_every_file_of_the_artifact(client, tmp_path):
    build = tmp_path / "pkg" / "build.py"
    build_uri = await open_doc(client, build, build.read_text())  # open: its edit carries its version
    serve = tmp_path / "pkg" / "serve.py"
    uri = await open_doc(client, serve, serve.read_text())
    loop = asyncio.get_running_loop()
    deadline, fix = loop.time() + 20, None
    while loop.time() < deadline and fix is None:  # the workspace index finds paths.py and build.py
        diags = [d for d in await diagnostics(client, uri) if d.code == "AOTI002"]
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri), range=diags[0].range,
            context=types.CodeActionContext(diagnostics=diags))) if diags else []
        fix = next((a for a in actions or [] if "renames tower.so -> tower.pt2 in 3 files" in a.title), None)
        if fix is None:
            await asyncio.sleep(0.2)
    assert fix is not None, [a.title for a in actions or []]
    if fix.edit is None:  # a lazy fix: built on codeAction/resolve
        fix = await client.code_action_resolve_async(fix)
    edit = fix.edit
    changes = {dc.text_document.uri: dc for dc in edit.document_changes} if edit.document_changes else None
    per_uri = ({u: dc.edits for u, dc in changes.items()} if changes is not None else dict(edit.changes))
    paths = {u.rsplit("/", 2)[-1] for u in per_uri}
    assert paths == {"serve.py", "build.py", "paths.py"}, paths
    if changes is not None:  # versions for open documents, none for a file the editor has not opened
        assert changes[uri].text_document.version == 1 and changes[build_uri].text_document.version == 1
        paths_uri = next(u for u in changes if u.endswith("paths.py"))
        assert changes[paths_uri].text_document.version is None
    enc = encoding(client)
    for u, edits in per_uri.items():  # the client applies it
        path = tmp_path / "pkg" / u.rsplit("/", 1)[-1]
        path.write_text(apply_edits(path.read_text(), edits, enc))
    assert 'os.path.join(ARTIFACT_DIR, "tower.pt2")' in (tmp_path / "pkg" / "paths.py").read_text()
    assert "aoti_compile_and_package(ep, package_path=TOWER)" in build.read_text()
    assert "torch._inductor.aoti_load_package(TOWER)" in serve.read_text()
    for rel in ("pkg/paths.py", "pkg/build.py", "pkg/serve.py"):
        compile((tmp_path / rel).read_text(), rel, "exec")
