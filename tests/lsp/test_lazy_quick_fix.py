"""Lazy quick fixes end to end: the migration's edits are not in Diagnostic.data (diagnostics
never build them); the code action is resolved from the server's result for the document's
version (codeAction/resolve, or inline for a client that cannot resolve edits); a stale version,
or another file changed under the plan, gives no edit, never a wrong one."""

import asyncio

from helpers import (
    apply_edits,
    diagnostics,
    edits_of,
    encoding,
    is_pull,
    next_push,
    open_doc,
    write_project,
)
from lsprotocol import types

TEXT = ('import torch\nfrom torch._export import aot_load\n\n'
        'so = torch._export.aot_compile(m, (x,))\nrunner = torch._export.aot_load(so, "cuda:1")\n')
MIGRATED = ('import torch\nfrom torch._export import aot_load\n\n'
            'ep = torch.export.export(m, (x,), strict=True)\nso = torch._inductor.aoti_compile_and_package(ep)\n'
            'runner = torch._inductor.aoti_load_package(so, device_index=1)\n')
TITLE = "Migrate to aoti_compile_and_package + aoti_load_package"


def resolves(client) -> bool:
    support = client.capabilities.text_document.code_action.resolve_support
    return support is not None and "edit" in support.properties


async def _actions(client, uri, diags):
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=diags[0].range,
        context=types.CodeActionContext(diagnostics=diags)))


async def _change(client, uri, version, line, text):
    if not is_pull(client):
        client.diagnostics.pop(uri, None)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [types.TextDocumentContentChangePartial(range=types.Range(types.Position(line, 0), types.Position(line, 0)),
                                                text=text)]))
    return await (diagnostics(client, uri) if is_pull(client) else next_push(client, uri))


async def test_the_migration_is_resolved_lazily(client, tmp_path):
    uri = await open_doc(client, tmp_path / "m.py", TEXT)
    diags = await diagnostics(client, uri)
    compile_diag = next(d for d in diags if d.code == "AOTI001")
    # no edits in the diagnostic: title, applicability and the marker; the noqa edit rides as before
    assert compile_diag.data["fix"] == {"title": TITLE, "applicability": "unsafe", "snippet": False, "lazy": True}
    assert compile_diag.data["noqa"]["newText"].endswith("# noqa: AOTI001")
    unused = next(d for d in diags if d.code == "AOTI002" and "never used" in d.message)
    assert unused.data["fix"]["lazy"] and unused.data["fix"]["applicability"] == "safe"

    actions = await _actions(client, uri, [compile_diag])
    action = next(a for a in actions if a.title == f"aoti-lsp (AOTI001): {TITLE} [unsafe]")
    if resolves(client):
        assert action.edit is None and action.data["version"] == 1
        action = await client.code_action_resolve_async(action)
    assert apply_edits(TEXT, edits_of(action, uri), encoding(client)) == MIGRATED

    # the unused-import removal: lazy too, safe, the preferred action
    actions = await _actions(client, uri, [unused])
    remove = next(a for a in actions if "Remove unused import" in a.title)
    assert remove.is_preferred
    if resolves(client):
        remove = await client.code_action_resolve_async(remove)
    assert apply_edits(TEXT, edits_of(remove, uri), encoding(client)) == TEXT.replace(
        "from torch._export import aot_load\n", "")


async def test_a_stale_version_gives_no_edit(client, tmp_path):
    uri = await open_doc(client, tmp_path / "m.py", TEXT)
    old = next(d for d in await diagnostics(client, uri) if d.code == "AOTI001")
    actions = await _actions(client, uri, [old])
    action = next(a for a in actions if a.title.endswith(f"{TITLE} [unsafe]"))
    # a line above the call: the diagnostic's range no longer names the finding
    await _change(client, uri, 2, 0, "# a comment\n")
    text = "# a comment\n" + TEXT
    if resolves(client):
        stale = await client.code_action_resolve_async(action)  # planned on version 1
        assert stale.edit is None
    assert not [a for a in await _actions(client, uri, [old]) if a.title.endswith(f"{TITLE} [unsafe]")]
    # the diagnostics of the new version: the fix again, for the text as it is now
    new = next(d for d in await diagnostics(client, uri) if d.code == "AOTI001")
    action = next(a for a in await _actions(client, uri, [new]) if a.title.endswith(f"{TITLE} [unsafe]"))
    if resolves(client):
        assert action.data["version"] == 2
        action = await client.code_action_resolve_async(action)
    assert apply_edits(text, edits_of(action, uri), encoding(client)) == "# a comment\n" + MIGRATED


async def test_a_range_sent_back_in_other_units_still_finds_the_fix(client, tmp_path):
    """Neovim 0.7 sends diagnostics back with byte columns whatever the encoding: the fix is
    found all the same (the range read as bytes)."""
    text = TEXT.replace("\nso = ", '\ns = "é😀"; so = ')
    uri = await open_doc(client, tmp_path / "m.py", text)
    diag = next(d for d in await diagnostics(client, uri) if d.code == "AOTI001")
    line = text.splitlines()[diag.range.start.line]
    in_bytes = len(line[: line.index("torch._export")].encode())
    assert in_bytes != diag.range.start.character or encoding(client) == "utf-8"
    in_bytes_range = types.Range(types.Position(diag.range.start.line, in_bytes),
                                 types.Position(diag.range.end.line, in_bytes + len("torch._export.aot_compile")))
    sent = types.Diagnostic(range=in_bytes_range, message=diag.message, severity=diag.severity, code=diag.code,
                            source=diag.source, tags=diag.tags, data=diag.data)
    action = next(a for a in await _actions(client, uri, [sent]) if a.title.endswith(f"{TITLE} [unsafe]"))
    if resolves(client):
        action = await client.code_action_resolve_async(action)
    assert "torch._inductor.aoti_load_package(so, device_index=1)" in apply_edits(
        text, edits_of(action, uri), encoding(client))
    # a range that names no finding: no action
    elsewhere = types.Range(types.Position(0, 0), types.Position(0, 1))
    sent = types.Diagnostic(range=elsewhere, message=diag.message, code=diag.code, source=diag.source, data=diag.data)
    assert not [a for a in await _actions(client, uri, [sent]) if a.title.endswith(f"{TITLE} [unsafe]")]


FILES = {
    "pyproject.toml": "[project]\nname = 'p'\nversion = '0'\n",
    "pkg/__init__.py": "",
    "pkg/paths.py": """
        import os
        TOWER = os.path.join(os.environ.get("ARTIFACT_DIR", "/srv"), "tower.so")
    """,
    "pkg/serve.py": """
        import torch
        from pkg.paths import TOWER
        so = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": TOWER})
        runner = torch._export.aot_load(TOWER, "cpu")
    """,
}


async def test_another_file_changed_under_the_plan_gives_no_edit(client, tmp_path):
    write_project(tmp_path, FILES)
    serve = tmp_path / "pkg" / "serve.py"
    uri = await open_doc(client, serve, serve.read_text())
    loop = asyncio.get_running_loop()
    deadline, action = loop.time() + 20, None
    while loop.time() < deadline and action is None:  # the workspace index finds paths.py
        diags = [d for d in await diagnostics(client, uri) if d.code == "AOTI001"]
        actions = await _actions(client, uri, diags) if diags else []
        action = next((a for a in actions or [] if "renames tower.so -> tower.pt2 in 2 files" in a.title), None)
        if action is None:
            await asyncio.sleep(0.2)
    assert action is not None
    if resolves(client):
        assert action.edit is None
        resolved = await client.code_action_resolve_async(action)
        assert {u.rsplit("/", 1)[-1] for u in _uris(resolved)} == {"serve.py", "paths.py"}
    # paths.py changes on disk, and nobody tells the server: its offsets are not the plan's. Never
    # an edit made for the old text: the server sees the file changed (its mtime and size: issue
    # 23) and plans again on the new text, or offers none
    paths = tmp_path / "pkg" / "paths.py"
    paths.write_text("# moved down a line\n" + paths.read_text())
    offered = [action] if resolves(client) else []
    offered += [a for a in await _actions(client, uri, diags) if "renames" in a.title]
    for a in offered:
        if a.edit is None and resolves(client):
            a = await client.code_action_resolve_async(a)
        if a.edit is None:
            continue
        (paths_uri,) = [u for u in _uris(a) if u.endswith("paths.py")]
        edit = a.edit
        mine = ([e for dc in edit.document_changes if dc.text_document.uri == paths_uri for e in dc.edits]
                if edit.document_changes else edit.changes[paths_uri])
        new = apply_edits(paths.read_text(), mine, encoding(client))
        assert new == paths.read_text().replace('"tower.so"', '"tower.pt2"'), new


def _uris(action):
    edit = action.edit
    if edit.document_changes:
        return [dc.text_document.uri for dc in edit.document_changes]
    return list(edit.changes)


SERVER_CHILD = """
import sys
from pathlib import Path
from aoti_lsp.lsp.capabilities import ResolvedClientCapabilities
from aoti_lsp.lsp.documents import Document
from aoti_lsp.lsp import server as srv

srv.AotiServer.encoding = property(lambda self: "utf-16")  # no client: the workspace is not set up
ls = srv.AotiServer()
ls.caps = ResolvedClientCapabilities(related_information=True)
path = Path(sys.argv[1])
doc = Document(path.as_uri(), str(path), path.read_text(), 1)
ls.docs[doc.uri] = doc
items = ls.diagnostics(doc)
print(sorted(d.code for d in items), "libcst" in sys.modules)
d = next(d for d in items if d.code == "AOTI001")
edit = srv._lazy_edit(ls, doc, {"code": d.code, "range": srv._plain_range(d.range), "title": d.data["fix"]["title"]})
print(len(edit.changes[doc.uri]), "libcst" in sys.modules)
"""


def test_diagnostics_never_build_a_lazy_fix(tmp_path):
    """The server's own diagnostics import no libcst; resolving the quick fix does."""
    import subprocess
    import sys

    path = tmp_path / "m.py"
    path.write_text(TEXT)
    out = subprocess.run([sys.executable, "-c", SERVER_CHILD, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["['AOTI001', 'AOTI002', 'AOTI002'] False", "3 True"], out.stdout


BROKEN_CHILD = """
import sys
from pathlib import Path
from lsprotocol import types
from aoti_lsp.fixes import migrate, plan
from aoti_lsp.lsp.capabilities import ResolvedClientCapabilities
from aoti_lsp.lsp.documents import Document
from aoti_lsp.lsp import server as srv

def broken(*args, **kwargs):
    raise migrate.CannotFix("a reason the preflight missed")

plan.load_fix = broken  # a preflight bug: the build refuses after the preflight passed
srv.AotiServer.encoding = property(lambda self: "utf-16")
ls = srv.AotiServer()
ls.caps = ResolvedClientCapabilities(resolve_code_action_edits="--resolve" in sys.argv)
path = Path(sys.argv[1])
doc = Document(path.as_uri(), str(path), path.read_text(), 1)
ls.docs[doc.uri] = doc
diag = next(d for d in ls.diagnostics(doc) if d.code == "AOTI001")
params = types.CodeActionParams(types.TextDocumentIdentifier(doc.uri), diag.range,
                                types.CodeActionContext(diagnostics=[diag], only=["quickfix"]))
titles = lambda actions: [a.title for a in actions if "Migrate to" in a.title]
first = srv.code_action(ls, params)
resolved = [srv.code_action_resolve(ls, a) for a in first if "Migrate to" in a.title]
print(titles(first), [a.edit for a in resolved], titles(srv.code_action(ls, params)))
"""


def test_a_fix_that_cannot_be_built_offers_nothing(tmp_path):
    """A build that fails after the preflight passed: no edit, then no action; the server serves on."""
    import subprocess
    import sys

    path = tmp_path / "m.py"
    path.write_text(TEXT)
    action = f"['aoti-lsp (AOTI001): {TITLE} [unsafe]']"
    for flag, want in (("--resolve", f"{action} [None] []"), ("--inline", "[] [] []")):
        out = subprocess.run([sys.executable, "-c", BROKEN_CHILD, str(path), flag], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == want, (flag, out.stdout)
        assert "could not be built after its preflight passed" in out.stderr and "a reason the preflight missed" in out.stderr
