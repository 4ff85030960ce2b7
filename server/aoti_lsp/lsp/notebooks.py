"""Notebook documents (LSP 3.17 `notebookDocument/*`), as ruff's server serves them: the code
cells of an open notebook are one program (notebook.py builds it, as the CLI does), its
findings are sent per cell URI, and code actions edit the cell they belong to. pygls keeps the
cells' text (incremental edits included); each change analyses the program again (a notebook
is small), and stores its summary so that other files see what the notebook compiles."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from aoti_lsp.project import notebook
from aoti_lsp.analysis.engine import Result, analyze
from aoti_lsp.analysis.findings import Edit, plain_text
from aoti_lsp.fixes.fixer import applicable, fix_source
from aoti_lsp.lsp.convert import SOURCE, diagnostic
from aoti_lsp.analysis.noqa import add_code
from aoti_lsp.analysis.positions import LineIndex
from aoti_lsp.project.project import Project
from aoti_lsp.rules import all_rules
from aoti_lsp.analysis.source import Source

log = logging.getLogger(__name__)

SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithCells(
        cells=[types.NotebookCellLanguage(language="python")], notebook="jupyter-notebook")],
    save=True,
)
FIX_ALL = "source.fixAll.aoti-lsp"


@dataclass
class Opened:
    uri: str
    path: str
    cell_uris: dict[int, str] = field(default_factory=dict)  # cell number (1-based, all cells) -> its URI
    cells: list = field(default_factory=list)  # notebook.Cell of the code cells
    texts: dict[int, str] = field(default_factory=dict)  # cell number -> its text in the editor
    source: Source | None = None
    result: Result | None = None


def register(server) -> None:
    server.notebooks = {}

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def did_open(ls, params: types.DidOpenNotebookDocumentParams):
        _changed(ls, params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: types.DidChangeNotebookDocumentParams):
        _changed(ls, params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def did_save(ls, params: types.DidSaveNotebookDocumentParams):
        _changed(ls, params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseNotebookDocumentParams):
        opened = ls.notebooks.pop(params.notebook_document.uri, None)
        if opened is not None:
            for uri in opened.cell_uris.values():
                ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))


def _changed(ls, uri: str) -> None:
    try:
        opened = _analyse(ls, uri)
    except Exception as exc:  # keep serving: a log line, no diagnostics
        log.exception("notebook analysis of %s failed", uri)
        ls.window_log_message(types.LogMessageParams(types.MessageType.Error, f"aoti-lsp: notebook {uri}: {exc!r}"))
        return
    if opened is None:
        return
    # pushed, whatever the client pulls for text files: VS Code drops the pulled diagnostics of
    # a cell scrolled out of view (its editor closes) and never pulls them again (seen in
    # code-server, tests/editors/test_editor_vscode_notebook.py); pushed ones stay
    for cell_uri, items in _diagnostics(ls, opened).items():
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(cell_uri, items))
    if ls.update_summary(opened.path, opened.source):  # what the notebook compiles: other files read it
        ls.refresh_all()


def _analyse(ls, uri: str) -> Opened | None:
    nb = ls.workspace.get_notebook_document(notebook_uri=uri)
    if nb is None:
        return None
    opened = Opened(uri, to_fs_path(uri) or uri)
    for i, cell in enumerate(nb.cells):
        opened.cell_uris[i + 1] = cell.document
        if cell.kind != types.NotebookCellKind.Code:
            continue
        doc = ls.workspace.get_text_document(cell.document)
        opened.texts[i + 1] = doc.source
        made = notebook.code_cell(i, doc.source, doc.language_id or "python")
        if made is not None:
            opened.cells.append(made)
    opened.source = Source(notebook.python_text(opened.cells).encode("utf-8"), opened.path)
    opened.result = analyze(opened.source, ls.config_for(opened.path), project=ls.project)
    ls.notebooks[uri] = opened
    return opened


def is_open(ls, path: str) -> bool:
    path = os.path.abspath(path)
    return any(os.path.abspath(o.path) == path for o in getattr(ls, "notebooks", {}).values())


def on_disk(ls, path: str, old: bytes, new: bytes) -> tuple[bytes, bytes] | None:
    """(text before, text after) of a file a fix planned in the editor changes: for a notebook
    its JSON (only the changed cells' sources), never an open one (its cells are the editor's);
    None: no edit rather than a wrong one."""
    if not notebook.is_notebook(path):
        return old, new
    if is_open(ls, path):
        return None
    from aoti_lsp.fixes.writes import Skipped

    try:
        return notebook.on_disk(path, old, new)
    except Skipped:
        return None


def owner(ls, cell_uri: str) -> tuple[Opened, int] | None:
    """(the open notebook, the cell's number) of a cell URI; None for another document."""
    for opened in getattr(ls, "notebooks", {}).values():
        for number, uri in opened.cell_uris.items():
            if uri == cell_uri:
                return opened, number
    return None


# -- positions: the program's offsets -> (cell URI, position in the cell) ----------------------

def _position(opened: Opened, offset: int, encoding: str) -> tuple[int, types.Position] | None:
    line, character = opened.source.lines.position(offset, encoding)
    at = notebook.cell_of(opened.path, opened.source.data, line)
    if at is None:
        return None
    cell, row = at
    lines = opened.texts.get(cell, "").split("\n")
    if row > len(lines):  # the newline the program adds after a cell: the cell's end
        return cell, types.Position(len(lines) - 1, _width(lines[-1], encoding))
    return cell, types.Position(row - 1, character)


def _width(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def _range(opened: Opened, start: int, end: int, encoding: str) -> tuple[int, types.Range] | None:
    a, b = _position(opened, start, encoding), _position(opened, end, encoding)
    if a is None or b is None or a[0] != b[0]:
        return None
    return a[0], types.Range(a[1], b[1])


def _diagnostics(ls, opened: Opened) -> dict[str, list[types.Diagnostic]]:
    """Per cell URI (every cell, so that a cleared one is sent empty), its diagnostics."""
    out: dict[str, list[types.Diagnostic]] = {uri: [] for uri in opened.cell_uris.values()}
    enc = ls.encoding
    for i, f in enumerate(opened.result.findings if opened.result else ()):
        placed = _range(opened, f.start, f.end, enc)
        if placed is None:
            continue
        cell, rng = placed
        d = diagnostic(opened.source, f, enc, ls.caps, ls.lines_of, ls.data_of)
        d.range = rng
        d.message = notebook.message(f, opened.source, from_cell=cell)
        d.data = {"code": f.code, "notebook": opened.uri, "finding": i}  # actions are made from the result
        if d.related_information:
            d.related_information = [_related(opened, r, f, enc) for r in d.related_information]
        out[opened.cell_uris[cell]].append(d)
    return out


def _related(opened: Opened, info, finding, enc):
    """Related places in this notebook: at their cell, not in the program."""
    if info.location.uri != from_fs_path(os.path.abspath(opened.path)):
        return info
    r = next((r for r in finding.related if r.message == info.message and r.path in (None, opened.path)), None)
    placed = _range(opened, r.start, r.end, enc) if r is not None else None
    if placed is None:
        return info
    return types.DiagnosticRelatedInformation(types.Location(opened.cell_uris[placed[0]], placed[1]), info.message)


def pull(ls, cell_uri: str) -> list[types.Diagnostic] | None:
    """A pull request for a cell: empty (its diagnostics are pushed, _changed says why); None
    when the URI is no open notebook's cell."""
    return None if owner(ls, cell_uri) is None else []


# -- code actions ------------------------------------------------------------------------------

def code_action(ls, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    """Quick fixes, `Disable for this line` and fix-all for a cell; None for another document."""
    found = owner(ls, params.text_document.uri)
    if found is None:
        return None
    opened, number = found
    if opened.result is None:
        return []
    only = params.context.only
    wanted = lambda kind: not only or any(kind == k or kind.startswith(k + ".") for k in only)  # noqa: E731
    enc, actions = ls.encoding, []
    ours = [d for d in params.context.diagnostics
            if d.source == SOURCE and isinstance(d.data, dict) and d.data.get("notebook") == opened.uri]
    if wanted(types.CodeActionKind.QuickFix):
        for d in ours:
            k = d.data.get("finding")
            if not isinstance(k, int) or not 0 <= k < len(opened.result.findings):
                continue
            f = opened.result.findings[k]
            placed = _range(opened, f.start, f.end, enc)
            if placed is None or placed != (number, d.range) or f.code != d.data.get("code"):
                continue  # the client's diagnostic is of another version: no edit on a stale place
            for i, fix in enumerate(x for x in (f.fix, *f.alternatives) if x is not None and applicable(x, True)):
                edit = _fix_edit(ls, opened, fix)
                if edit is not None:
                    actions.append(types.CodeAction(
                        title=f"aoti-lsp ({f.code}): {fix.title}", kind=types.CodeActionKind.QuickFix,
                        diagnostics=[d], edit=edit, is_preferred=(i == 0 and fix.kind == "safe") or None))
            line = opened.source.lines.line_of(f.start)
            start = opened.source.lines.starts[line]
            body = opened.source.lines.line_bytes(line).rstrip(b"\r")
            noqa = Edit(start, start + len(body), add_code(body.decode("utf-8"), f.code))
            edit = _workspace_edit(ls, opened, [noqa])
            if edit is not None:
                actions.append(types.CodeAction(title=f"aoti-lsp ({f.code}): Disable for this line",
                                                kind=types.CodeActionKind.QuickFix, diagnostics=[d], edit=edit))
    if wanted(FIX_ALL) and any(applicable(f.fix, False) for f in opened.result.findings):
        edit = _fix_all(ls, opened, unsafe=False)
        if edit is not None:
            actions.append(types.CodeAction(title="aoti-lsp: Fix all auto-fixable problems", kind=FIX_ALL, edit=edit))
    if wanted(types.CodeActionKind.QuickFix) and any(f.deprecated for f in opened.result.findings):
        edit = _fix_all(ls, opened, unsafe=True, codes=[r.code for r in all_rules() if r.deprecated])
        if edit is not None:
            actions.append(types.CodeAction(title="aoti-lsp: Migrate every deprecated AOTI call in this notebook",
                                            kind=types.CodeActionKind.QuickFix, edit=edit))
    return actions


def _fix_edit(ls, opened: Opened, fix) -> types.WorkspaceEdit | None:
    built = fix.resolve()  # a lazy fix's edits (the migration), built here: a notebook is small
    if built is None:
        return None
    edits = [Edit(e.start, e.end, plain_text(e.text) if built.snippet else e.text, e.path) for e in built.edits]
    return _workspace_edit(ls, opened, edits)


def _workspace_edit(ls, opened: Opened, edits: list[Edit]) -> types.WorkspaceEdit | None:
    """Edits of the program (and of other files) as edits of the cells they fall in; None when
    one crosses a cell boundary or lands in a file the editor cannot be told about."""
    enc = ls.encoding
    by_uri: dict[str, list[types.TextEdit]] = {}
    for e in edits:
        if e.path is not None and os.path.abspath(e.path) != os.path.abspath(opened.path):
            if notebook.is_notebook(e.path):
                return None  # another notebook on disk: its cells are not open here
            data = ls.data_of(e.path)
            if data is None:
                return None
            lines = LineIndex(data)
            (sl, sc), (el, ec) = lines.position(e.start, enc), lines.position(e.end, enc)
            uri = from_fs_path(os.path.abspath(e.path))
            by_uri.setdefault(uri, []).append(types.TextEdit(
                types.Range(types.Position(sl, sc), types.Position(el, ec)), e.text))
            continue
        placed = _range(opened, e.start, e.end, enc)
        if placed is None:
            return None
        by_uri.setdefault(opened.cell_uris[placed[0]], []).append(types.TextEdit(placed[1], e.text))
    return _as_workspace_edit(ls, by_uri)


def _as_workspace_edit(ls, by_uri: dict[str, list[types.TextEdit]]) -> types.WorkspaceEdit:
    if ls.caps.document_changes:
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            types.OptionalVersionedTextDocumentIdentifier(uri, _version(ls, uri)), te) for uri, te in by_uri.items()])
    return types.WorkspaceEdit(changes=by_uri)


def _version(ls, uri: str):
    try:
        return ls.workspace.get_text_document(uri).version
    except Exception:
        return None


def _fix_all(ls, opened: Opened, unsafe: bool, codes: list[str] | None = None) -> types.WorkspaceEdit | None:
    """Every applicable fix of the program; each changed cell replaced whole (another file a
    migration reaches: whole too)."""
    cfg = ls.config_for(opened.path)
    if codes:
        cfg = cfg.with_overrides(select=codes)
    if unsafe:  # the migration: planned on a copy of the project, as the server does for a file
        project = Project(summaries=dict(ls.project.summaries), root=ls.project.root)
        project.reader = ls.open_data
        from aoti_lsp.fixes.project_fix import fix_project  # here: opening a notebook does not need it

        fixed = fix_project([opened.source], cfg, True, project)
        ours = fixed.pop(opened.path, None)
        new, others = (ours.new if ours else opened.source.data), fixed
    else:
        new, others = fix_source(opened.source, cfg, unsafe=False, project=ls.project).data, {}
    try:
        changed = notebook.Notebook("", opened.cells, {}).changed(new)
    except notebook.NotebookError:
        return None
    enc = ls.encoding
    by_uri: dict[str, list[types.TextEdit]] = {}
    for index, text in changed.items():
        old = opened.texts.get(index + 1, "").split("\n")
        end = types.Position(len(old) - 1, _width(old[-1], enc))
        by_uri[opened.cell_uris[index + 1]] = [types.TextEdit(types.Range(types.Position(0, 0), end), text)]
    for path, f in others.items():
        if f.new == f.old:
            continue
        pair = on_disk(ls, path, f.old, f.new)
        if pair is None:
            return None  # never half a migration
        end = LineIndex(pair[0]).position(len(pair[0]), enc)
        by_uri[from_fs_path(os.path.abspath(path))] = [types.TextEdit(
            types.Range(types.Position(0, 0), types.Position(*end)), pair[1].decode("utf-8"))]
    return _as_workspace_edit(ls, by_uri) if by_uri else None
