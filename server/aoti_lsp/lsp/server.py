"""aoti-lsp language server: one LanguageServer subclass owns the state, handlers stay small."""

from __future__ import annotations

import gc

# The server's start is mostly imports (lsprotocol's ~1000 classes, pygls' converter, the rules):
# objects that live as long as the process. The ~150 collections they would set off find no
# garbage, and once the server exists they are frozen (gc.freeze: no collection traverses them
# again, the first one after the imports included): ~45 ms of a ~310 ms start (issue 23 item 5).
_COLLECTING = gc.isenabled()
gc.disable()

import functools
import logging
import os
import asyncio
import sys
from enum import Enum

from aoti_lsp.lsp import codecache

codecache.install()  # before lsprotocol: its classes' generated code, compiled once per machine

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from aoti_lsp import __version__, tune_gc
from aoti_lsp.analysis import budget, incremental
from aoti_lsp.project import notebook
from aoti_lsp.analysis import slice as slice_mod
from aoti_lsp.project import config as configmod
from aoti_lsp.analysis.engine import Result, analyze
from aoti_lsp.project import runner
from aoti_lsp.project.cache import Cache, content_hash
from aoti_lsp.project.files import PY_SUFFIXES, discover, find_root, rooted
from aoti_lsp.analysis.findings import LazyFix, tier
from aoti_lsp.fixes.fixer import applicable, fix_source
from aoti_lsp.lsp.capabilities import ResolvedClientCapabilities
from aoti_lsp.lsp.convert import SOURCE, diagnostic, fix_data, lsp_range, moved_diagnostics, reused_diagnostics
from aoti_lsp.lsp import triage
from aoti_lsp.lsp.documents import Document
from aoti_lsp.lsp.protocol import Protocol
from aoti_lsp.lsp.refresh import Sent
from aoti_lsp.lsp import guards, notebooks
from aoti_lsp.lsp.protocol import LOST_CHANGE, StdinFrames
from aoti_lsp.analysis.positions import LineIndex
from aoti_lsp.analysis.records import replace
from aoti_lsp.project.project import Project, file_stamp, summarize, summarizers
from aoti_lsp.rules import all_rules
from aoti_lsp.analysis.source import Source, SourceError, decode_check

MIGRATIONS = ("AOTI001", "AOTI002", "AOTI003")  # fixes planned over every file of the project

log = logging.getLogger("aoti_lsp.server")


class ActionKind(str, Enum):
    """Every code action kind the server offers (ruff's SupportedCodeAction)."""

    QUICKFIX = types.CodeActionKind.QuickFix.value
    FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.aoti-lsp"
    MIGRATE_ALL = f"{types.CodeActionKind.Source.value}.migrate.aoti-lsp"

    def requested(self, only: list[str] | None) -> bool:
        # `only: ["source"]` asks for every source.* action; prefixes match, as in ruff
        return not only or any(self.value == k or self.value.startswith(k + ".") for k in only)


def safe(handler):
    """A failing handler logs and answers nothing: the server keeps serving."""

    @functools.wraps(handler)
    def wrapper(ls: "AotiServer", params):
        try:
            return handler(ls, params)
        except Exception as exc:
            log.exception("%s failed", handler.__name__)
            ls.window_log_message(types.LogMessageParams(types.MessageType.Error, f"aoti-lsp: {handler.__name__} failed: {exc!r}"))
            return None

    return wrapper


class AotiServer(LanguageServer):
    def __init__(self):
        super().__init__("aoti-lsp", __version__, protocol_cls=Protocol, notebook_document_sync=notebooks.SYNC)
        self.caps = ResolvedClientCapabilities()
        self.docs: dict[str, Document] = {}
        self.settings: dict = {}
        self.project = Project()
        self.project.reader = self.open_data  # another file's facts: its editor buffer first
        self._results: dict[str, tuple[tuple, Result]] = {}
        self._diagnostics: dict[str, tuple[Result, list, str, bytes]] = {}  # uri -> (result, its diagnostics, encoding, text)
        self.roots: list[str] = []
        self.unlisted: set[str] = set()  # saved files a listing did not hold (relist)
        self.relist_due = False  # a Python file was created or deleted: settled() lists the files again
        self.generation = 0  # bumps when settings or config files change: part of result ids
        self.config_errors: set[str] = set()
        self.sent = Sent()  # what each document's client holds: refresh only what changed
        self.exit_code = 0
        self.indexing = False  # the workspace index is being read: a migration may not see every file yet
        self.pending: dict[str, asyncio.Future] = {}  # uri -> its scheduled recheck (guards.py)
        # keystrokes no rule sees (incremental.py): results moved, not recomputed; summaries
        # whose offsets only moved are stored at the next full analysis, or when typing settles
        self.analysed = incremental.Tracker()
        self.summarized = incremental.Tracker()
        self.sliced = slice_mod.Slicer()
        self.stale: dict[str, Source] = {}  # path -> its text, when its stored summary's offsets are old
        self.summarized_from: dict[str, tuple] = {}  # path -> (text hash, config) its stored summary is of
        self.disk_stamps: dict[str, tuple | None] = {}  # path -> (mtime, size) the workspace index read
        self.saved = False  # a document was saved since the last typing pause
        all_rules()  # the rules and what they import, loaded at start, not in the first file's analysis

    # -- state ---------------------------------------------------------------------------
    @property
    def encoding(self) -> str:
        try:
            enc = self.workspace.position_encoding
        except RuntimeError:  # not initialized yet: LSP's default
            return "utf-16"
        return getattr(enc, "value", enc) or "utf-16"

    def config_for(self, path: str) -> configmod.Config:
        try:
            cfg = configmod.load(path)
        except configmod.ConfigError as exc:
            if str(exc) not in self.config_errors:  # once, not on every keystroke
                self.config_errors.add(str(exc))
                self.window_show_message(types.ShowMessageParams(types.MessageType.Error, str(exc)))
            cfg = configmod.Config()
        return cfg.with_overrides(select=self.settings.get("select"), ignore=self.settings.get("ignore"))

    def result(self, doc: Document, full: bool = False) -> Result:
        """The document's findings. `full`: from an analysis of the whole text, whose lazy fixes
        can be built (a slice's, or one moved from it, are planned on other texts: slice.py)."""
        cfg = self.config_for(doc.path)
        self.project.disk_changed()  # a file read from disk, saved since: the version (the key) moves
        key = (doc.version, doc.revision, self.project.version, cfg)
        cached = self._results.get(doc.uri)
        if cached and cached[0] == key and not (full and getattr(cached[1], "partial", False)):
            return cached[1]
        source = doc.source()
        if not doc.too_large and not full:
            hit = self.analysed.reuse(doc.uri, source, cfg, self.project.version, provisional=True)
            result = incremental.shift_result(hit[1], hit[0], os.path.basename(doc.path)) if hit is not None else None
            if result is not None:  # a keystroke in code no rule sees: the last findings, moved
                self.analysed.update(doc.uri, result)
                self.sliced.follow(doc.uri, source, cfg, self.project, result)  # the next keystroke slices from here
                self._results[doc.uri] = (key, result)
                if result.provisional or self.analysed.provisional(doc.uri):  # a syntax error's reach: the file's tree says, later
                    guards.settle(self)
                return result
        # a full analysis reads the other files' summaries: their offsets must be current (its
        # own file's is never read: it has its own facts)
        self.flush_summaries(skip=os.path.abspath(doc.path))
        key = (doc.version, doc.revision, self.project.version, cfg)
        if not doc.too_large and not full:  # an edit inside a few statements: only what they touch (slice.py)
            result = self.sliced.result(doc.uri, source, cfg, self.project)
            if result is not None:
                chunks = getattr(result, "chunks", None)
                state = incremental.spliced(self.analysed.state(doc.uri), source.data, *chunks,
                                            incremental.anchor_tokens(cfg)) if chunks else None
                self.analysed.remember(doc.uri, source, cfg, result, self.project.version, state)
                self._results[doc.uri] = (key, result)
                if getattr(result, "provisional", False):  # a broken statement's own parse: verified later
                    guards.settle(self)
                return result
            result = self._typing(doc, source, key)
            if result is not None:
                return result
        result = guards.bounded(lambda: analyze(source, cfg, project=self.project), doc)
        for err in result.errors:
            self.window_log_message(types.LogMessageParams(types.MessageType.Error, err))
        self._results[doc.uri] = (key, result)
        if not result.skipped and not result.errors:
            self.analysed.remember(doc.uri, source, cfg, result, self.project.version)
            self.sliced.remember(doc.uri, source, cfg, result, self.project)
        else:
            self.analysed.forget(doc.uri)
            self.sliced.forget(doc.uri)
        return result

    def _typing(self, doc: Document, source, key) -> Result | None:
        """A statement being typed that does not parse yet (incremental.broken_edit): the last
        analysis's findings, moved past the edit, provisional: once typing pauses a whole
        analysis replaces them (verify_results). None where they cannot be moved."""
        shift = incremental.broken_edit(self.analysed.state(doc.uri), source.data)
        last = self.analysed.payload(doc.uri) if shift is not None else None
        result = incremental.shift_result(last, shift, os.path.basename(doc.path)) if last is not None else None
        if result is None:
            return None
        result.provisional = True
        self._results[doc.uri] = (key, result)
        guards.settle(self)
        return result

    def diagnostics(self, doc: Document) -> list[types.Diagnostic]:
        result = self.result(doc)
        if result.skipped:
            return [guards.skipped_diagnostic(result.skipped)]
        last = self._diagnostics.get(doc.uri)
        if last is not None and last[0] is result and last[2] == self.encoding:
            return last[1]
        source = doc.source()
        moved = getattr(result, "moved", None)  # (the result it was moved from, the Shift): incremental.py

        def make(f):
            return diagnostic(source, f, self.encoding, self.caps, self.lines_of, self.data_of)

        origin = getattr(result, "origin", None)  # a slice: per finding, the index of the one it kept
        if last is not None and moved is not None and moved[0] is last[0] and last[2] == self.encoding:
            items = moved_diagnostics(last[1], result.findings, moved[1], source, make, origin)
        elif last is not None and last[2] == self.encoding and last[3] is not None:
            start, old_end, new_end = incremental.edit_span(last[3], source.data)
            shift = incremental.Shift(start, old_end, new_end - old_end,
                                      source.data.count(b"\n", start, new_end) - last[3].count(b"\n", start, old_end))
            if moved is not None and origin is not None and getattr(last[0], "base", None) is moved[0]:
                # a slice of the analysis whose moved findings the editor shows: same indices
                items = moved_diagnostics(last[1], result.findings, shift, source, make, origin)
            else:
                items = reused_diagnostics(last[1], last[0].findings, result.findings, shift, source, make)
        else:
            items = [make(f) for f in result.findings]
        self._diagnostics[doc.uri] = (result, items, self.encoding, source.data)
        return items

    def data_of(self, path: str) -> bytes | None:
        """A file's text as the editor has it (an open buffer), else as on disk."""
        path = os.path.abspath(path)
        for doc in self.docs.values():
            if os.path.abspath(doc.path) == path:
                return doc.data
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            decode_check(data)
            return data
        except (OSError, SourceError):
            return None

    def open_data(self, path: str) -> bytes | None:
        """The project's reader: other files' facts come from open buffers first."""
        path = os.path.abspath(path)
        return next((d.data for d in self.docs.values() if os.path.abspath(d.path) == path), None)

    def lines_of(self, path: str) -> LineIndex | None:
        for doc in self.docs.values():
            if os.path.abspath(doc.path) == os.path.abspath(path):
                return doc.lines
        if not path.endswith((".py", ".pyi")):
            return LineIndex(b"")  # e.g. a .pt2 package: related information points at its start
        try:
            with open(path, "rb") as fh:
                return LineIndex(fh.read())
        except OSError:
            return None

    def publish(self, doc: Document, items: list[types.Diagnostic] | None = None) -> None:
        if not self.caps.pull_diagnostics:
            items = self.diagnostics(doc) if items is None else items
            self.sent.record(doc.uri, items)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(doc.uri, items, doc.version))

    def refresh_all(self, skip: str | None = None) -> None:
        """Documents (but `skip`) whose diagnostics differ from what their client holds: pushed
        again, or one workspace/diagnostic/refresh for a pull client."""
        stale = []
        for doc in list(self.docs.values()):
            if doc.uri != skip:
                items = self.diagnostics(doc)
                if self.sent.differs(doc.uri, items):
                    stale.append((doc, items))
        if self.caps.pull_diagnostics:
            if stale and self.caps.diagnostic_refresh:
                self.workspace_diagnostic_refresh(None)
        else:
            for doc, items in stale:
                self.publish(doc, items)

    def update_summary(self, path: str, source: Source | None, defer: bool = False) -> bool:
        """Store a file's summary (what other files read of it); True when it changed. `defer`
        (a keystroke, an open): stored once typing settles, so the file's own diagnostics do not
        wait for the whole file's summary (~100-200 ms for 20k lines); other files follow the pause."""
        path = os.path.abspath(path)
        if defer and source is not None and not budget.too_large(len(source.data)):
            self.stale[path] = source
            return False
        cfg = self.config_for(path)
        if source is not None and self.summarized.reuse(path, source, cfg, provisional=True) is not None:
            self.stale[path] = source  # the same summary but for offsets: stored later (flush_summaries)
            return False
        self.stale.pop(path, None)
        made_of = _made_of(source.data, cfg) if source is not None else None
        if made_of is not None and self.summarized_from.get(path) == made_of:
            return False  # stored already, of this very text (the workspace index read it from disk)
        self.summarized_from.pop(path, None)
        summary = {}
        if source is not None and not budget.too_large(len(source.data)):
            summary = guards.bounded(lambda: summarize(source, cfg), None)
            if summary is not None:
                self.summarized_from[path] = made_of
            summary = summary or {}
            self.summarized.remember(path, source, cfg, None)
        else:
            self.summarized.forget(path)
        return self.project.update(path, summary)

    def flush_summaries(self, skip: str | None = None) -> bool:
        """Store the summaries keystrokes deferred (all but `skip`'s). True when the project
        changed (other documents may need a refresh)."""
        changed = False
        for path in [p for p in self.stale if p != skip]:
            source = self.stale.pop(path)
            self.summarized.forget(path)
            changed |= self.update_summary(path, source)
        return changed

    def verify_results(self) -> bool:
        """Results kept through a syntax error judged from its own statements (incremental.py,
        provisional) checked against each file's tree: one that disagrees is analysed again.
        True when one did (its diagnostics may differ). A provisional slice's (slice.py: a broken
        statement analysed from its own parse) is always replaced by a full analysis."""
        wrong = False
        for doc in list(self.docs.values()):
            cached = self._results.get(doc.uri)
            if cached is not None and getattr(cached[1], "provisional", False):
                self._results.pop(doc.uri)
                self.analysed.forget(doc.uri)  # else its same text moves the provisional result again
                self.sliced.settled(doc.uri, doc.data)  # nor slices it from its provisional entry again
                wrong = True
                continue
            if self.analysed.provisional(doc.uri) and not self.analysed.verify(doc.uri, doc.source()):
                self._results.pop(doc.uri, None)
                wrong = True
        return wrong

    def settled(self) -> None:
        """Once typing pauses: store the summaries keystrokes deferred, replace the results kept
        through syntax errors that the file's tree does not confirm, refresh the documents whose
        diagnostics may have changed (related locations point into edited files), and read what
        the next keystroke's slice needs of each open file (slice.py)."""
        changed = self.flush_summaries()
        if self.relist_due:
            self.relist_due = False
            if self.relist():
                self.generation += 1
                self._results.clear()
                changed = True
        if self.saved:  # files written with a saved one (a multi-file fix, then `:wall`) that no editor reports
            self.saved = False
            changed |= self.project.disk_changed() | self.reread_disk()
        if self.verify_results() | changed:
            self.refresh_all()
        for doc in list(self.docs.values()):
            self.sliced.prepare(doc.uri)

    def recheck(self, doc: Document, defer: bool = False) -> None:
        """After a document changed: its summary first (other files may depend on it; `defer`,
        after a keystroke or an open: once typing settles, so its own diagnostics come first),
        then its diagnostics, or every open document's when the summary changed."""
        changed = self.update_summary(doc.path, None if doc.too_large else doc.source(), defer=defer)
        self.publish(doc)
        if changed:
            self.refresh_all(skip=doc.uri)
        guards.settle(self)  # the deferred work, once typing pauses

    def is_open(self, path: str) -> bool:
        return any(os.path.abspath(d.path) == os.path.abspath(path) for d in self.docs.values())

    def reread_disk(self) -> bool:
        """Summaries of indexed files (not open) whose text on disk changed since: an editor that
        watches no files tells the server only of the buffers it saves, not of the others a
        multi-file fix wrote. True when a summary changed."""
        changed = False
        for path, stamp in list(self.disk_stamps.items()):
            now = file_stamp(path)
            if now != stamp and not self.is_open(path):
                self.disk_stamps[path] = now
                changed |= self.update_summary(path, _disk_source(path))
        return changed

    def relist(self) -> bool:
        """The workspace folders' project files listed again, as the index listed them (a Python
        file created, deleted or first saved since): True when they changed. Project.files says
        which script a printed command is followed into (plan._script_path); a script written
        after the index was not, until the server started again."""
        if self.indexing or not self.roots or getattr(self.project, "files", None) is None:
            return False  # the index lists them itself (or has not yet)
        files: frozenset[str] = frozenset()
        for root in dict.fromkeys(find_root([folder]) for folder in self.roots):
            files |= frozenset(map(os.path.abspath, discover([root], rooted(self.config_for(root), root))[0]))
        self.unlisted.clear()
        if files == self.project.files:
            return False
        self.project.files = files
        return True

    def saved_unlisted(self, path: str) -> bool:
        """relist() for a saved file the project's files lack (a new file's first save, where the
        editor reports no file events: Neovim on Linux). One that is excluded or ignored is not
        listed again at each save (a file event lists again)."""
        files, path = getattr(self.project, "files", None), os.path.abspath(path)
        if files is None or path in files or path in self.unlisted:
            return False
        changed = self.relist()
        if path not in self.project.files:
            self.unlisted.add(path)
        return changed

    async def index_workspace(self) -> None:
        """Summaries of every file of the workspace folders' projects (each folder's root found
        as the CLI finds it, the same files, the same cache). Runs on the event loop, yielding
        between files, so edits and requests are served meanwhile."""
        if not summarizers():
            return
        self.indexing = True
        try:
            await self._index_workspace()
        finally:
            self.indexing = False

    async def _index_workspace(self) -> None:
        changed = False
        for root in dict.fromkeys(find_root([folder]) for folder in self.roots):
            self.project.root = self.project.root or root
            cfg = rooted(self.config_for(root), root)
            files, _ = discover([root], cfg)
            log.info("workspace index of %s: %d files", root, len(files))
            self.project.files = getattr(self.project, "files", frozenset()) | frozenset(map(os.path.abspath, files))
            cache = Cache(root, cfg)
            for path, summary in runner.index(files, cfg, cache):
                await asyncio.sleep(0)
                if not self.is_open(path):  # the editor's buffer wins over the disk
                    changed |= self.project.update(os.path.abspath(path), summary)
                    self.disk_stamps[os.path.abspath(path)] = file_stamp(path)
                    entry = cache.entries.get(cache.rel(path))
                    if entry is not None:  # a buffer opened on the same text needs no summary of its own
                        self.summarized_from[os.path.abspath(path)] = (entry.hash, _plain(cfg))
        log.info("workspace index done (project version %d)", self.project.version)
        if changed:
            self.refresh_all()


def _plain(cfg: configmod.Config) -> configmod.Config:
    """A config as a summary depends on it: the root relative patterns match from aside (the
    workspace index roots its config; a document's is found from the file)."""
    return replace(cfg, root=".")


def _made_of(data: bytes, cfg: configmod.Config) -> tuple:
    return content_hash(data), _plain(cfg)


server = AotiServer()
notebooks.register(server)  # notebookDocument/*: lsp/notebooks.py
gc.freeze()
if _COLLECTING:
    gc.enable()


def _settings(raw) -> dict:
    if not isinstance(raw, dict):
        return {}
    raw = raw.get("settings", raw)
    raw = raw.get("aoti-lsp", raw) if isinstance(raw, dict) else {}
    out = {}
    for key in ("select", "ignore"):
        value = raw.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value) and value:
            out[key] = [v.upper() for v in value]
    if raw.get("run") in ("onType", "onSave"):
        out["run"] = raw["run"]
    return out


@server.feature(types.INITIALIZE)
def initialize(ls: AotiServer, params: types.InitializeParams):
    ls.caps = ResolvedClientCapabilities.resolve(params.capabilities)
    ls.settings = _settings(params.initialization_options)
    folders = [to_fs_path(f.uri) for f in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [to_fs_path(params.root_uri)]
    ls.roots = [f for f in folders if f and os.path.isdir(f)]


@server.feature(types.INITIALIZED)
def initialized(ls: AotiServer, params):
    if ls.caps.watched_files_dynamic:
        ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
            id="aoti-lsp-watch", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[
                types.FileSystemWatcher(glob_pattern="**/*.py"),
                types.FileSystemWatcher(glob_pattern="**/*.ipynb"),
                types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
            ]))]))
    task = asyncio.ensure_future(ls.index_workspace())
    task.add_done_callback(_index_done)
    # by then the first diagnostics have gone out: what their conversion generated is kept too
    asyncio.get_running_loop().call_later(CODE_CACHE_SAVE_S, _save_code)


CODE_CACHE_SAVE_S = 3.0


def _save_code() -> None:
    if codecache.save():
        hits, compiled = codecache.counts()
        log.info("generated code cache %s: %d read, %d compiled this start", codecache.cache_path(), hits, compiled)


def _index_done(task) -> None:
    """A failed workspace index is logged, never lost with its task: without it no cross-file
    finding or migration of a closed file appears."""
    if not task.cancelled() and task.exception() is not None:
        exc = task.exception()
        log.error("workspace index failed", exc_info=(type(exc), exc, exc.__traceback__))
        server.window_log_message(types.LogMessageParams(types.MessageType.Error, f"aoti-lsp: workspace index failed: {exc!r}"))


def _open(ls: AotiServer, uri: str, text: str, version) -> Document:
    path = to_fs_path(uri) or uri
    doc = Document(uri, path, text, version)
    ls.docs[uri] = doc
    return doc


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
@safe
def did_open(ls: AotiServer, params: types.DidOpenTextDocumentParams):
    td = params.text_document
    if td.language_id not in ("python", "") and not td.uri.endswith((".py", ".pyi")):
        return
    # its summary (what other files read of it; the workspace index has read the file from
    # disk) once typing settles: first its own diagnostics, which never read it
    ls.recheck(_open(ls, td.uri, td.text, td.version), defer=True)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
@safe
def did_change(ls: AotiServer, params: types.DidChangeTextDocumentParams):
    doc = ls.docs.get(params.text_document.uri)
    if doc is None:
        return
    doc.apply(params.content_changes, params.text_document.version, ls.encoding)
    if ls.settings.get("run", "onType") == "onType":
        guards.schedule(ls, doc)


@server.feature(LOST_CHANGE)
@safe
def lost_change(ls: AotiServer, uri):
    """An edit that could not be read: the copy here is stale, so it is dropped, not kept."""
    if isinstance(uri, str) and ls.docs.pop(uri, None) is not None:
        ls._results.pop(uri, None)
        ls._diagnostics.pop(uri, None)
        ls.analysed.forget(uri)
        guards.cancel(ls, uri)
        if not ls.caps.pull_diagnostics:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning,
            f"aoti-lsp: an edit of {uri} could not be read; close and reopen the file to check it again"))


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
@safe
def did_save(ls: AotiServer, params: types.DidSaveTextDocumentParams):
    doc = ls.docs.get(params.text_document.uri)
    if doc is not None:
        ls.saved = True  # settled() looks at the disk again: `:wall` writes the other files after this one
        relisted = ls.saved_unlisted(doc.path)
        if relisted:
            ls.generation += 1
            ls._results.clear()
        ls.recheck(doc)
        if ls.project.disk_changed() | ls.reread_disk() | relisted:  # files saved beside it that the editor does not report
            ls.refresh_all()


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
@safe
def did_close(ls: AotiServer, params: types.DidCloseTextDocumentParams):
    doc = ls.docs.pop(params.text_document.uri, None)
    ls._results.pop(params.text_document.uri, None)
    ls._diagnostics.pop(params.text_document.uri, None)
    ls.analysed.forget(params.text_document.uri)
    ls.sliced.forget(params.text_document.uri)  # its last text and tree (issue 19 item 9)
    ls.sent.forget(params.text_document.uri)
    guards.cancel(ls, params.text_document.uri)
    if not ls.docs:  # nothing open: the per-statement memos serve no one
        incremental.forget_texts()
        slice_mod.forget_texts()
    if doc is not None and not ls.caps.pull_diagnostics:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(params.text_document.uri, []))


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False),
)
def pull_diagnostics(ls: AotiServer, params: types.DocumentDiagnosticParams):
    if (cell := notebooks.pull(ls, params.text_document.uri)) is not None:  # a notebook cell's
        return types.RelatedFullDocumentDiagnosticReport(items=cell)
    doc = ls.docs.get(params.text_document.uri)
    if doc is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    try:
        if ls.saved:  # since a save, files the editor does not report may have changed on disk
            ls.project.disk_changed()
            ls.reread_disk()
        items = ls.diagnostics(doc)
    except Exception as exc:  # keep serving: an empty report and a log line
        log.exception("diagnostics failed")
        ls.window_log_message(types.LogMessageParams(types.MessageType.Error, f"aoti-lsp: diagnostics failed: {exc!r}"))
        items = []
    result_id = ls.sent.record(doc.uri, items)  # the diagnostics' fingerprint: same id, same diagnostics
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
@safe
def did_change_configuration(ls: AotiServer, params: types.DidChangeConfigurationParams):
    ls.settings = _settings(params.settings)
    ls.generation += 1
    ls._results.clear()
    ls.refresh_all()


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
@safe
def did_change_watched_files(ls: AotiServer, params: types.DidChangeWatchedFilesParams):
    changed = False
    if any(e.type != types.FileChangeType.Changed and (to_fs_path(e.uri) or "").endswith(PY_SUFFIXES)
           for e in params.changes):
        # a file created or deleted: the project's files (a script a command names) are listed
        # again once events pause (a `pip install` into a folder of the workspace sends bursts)
        ls.relist_due = True
        guards.settle(ls)
    for event in params.changes:
        path = to_fs_path(event.uri)
        if not path:
            continue
        if path.endswith("pyproject.toml"):
            changed = True  # configs are cached by mtime: the next analysis reloads
            continue
        if ls.is_open(path) or notebooks.is_open(ls, path):
            continue  # open documents are tracked from the editor's buffer
        source = _disk_source(path) if event.type != types.FileChangeType.Deleted else None
        changed |= ls.update_summary(path, source)
    if changed:
        ls.generation += 1
        ls._results.clear()
        ls.refresh_all()


def _disk_source(path: str) -> Source | None:
    if not os.path.isfile(path):
        return None
    try:
        if budget.too_large(os.path.getsize(path)):
            return None
    except OSError:
        return None
    data = notebook.read_program(path)  # a notebook: its cells' program
    return Source(data, os.path.abspath(path)) if data is not None else None


# -- code actions ---------------------------------------------------------------------------
def _whole_edit(doc: Document, new: bytes, encoding: str, old: bytes | None = None, lines=None) -> list[types.TextEdit]:
    """One edit covering only the changed middle (common prefix/suffix kept): cursors stay put."""
    old = doc.data if old is None else old
    lines = doc.lines if lines is None else lines
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    # never split a UTF-8 sequence
    while 0 < start < len(old) and (old[start] & 0xC0) == 0x80:
        start -= 1
    while end_old < len(old) and (old[end_old] & 0xC0) == 0x80:
        end_old += 1
        end_new += 1
    rng = lsp_range(lines, start, end_old, encoding)
    return [types.TextEdit(rng, new[start:end_new].decode("utf-8"))]


def _workspace_edit(ls: AotiServer, doc: Document, edits: list, snippet: bool = False) -> types.WorkspaceEdit:
    def rng(e):
        return types.Range(types.Position(**e["range"]["start"]), types.Position(**e["range"]["end"]))

    if snippet:  # only sent when the client said it takes snippet edits (LSP 3.18)
        te = [types.SnippetTextEdit(rng(e), types.StringValue(e["newText"])) for e in edits]
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            types.OptionalVersionedTextDocumentIdentifier(doc.uri, doc.version), te)])
    # one WorkspaceEdit over every file the fix edits (a migration), open documents by version
    by_uri: dict[str, list[types.TextEdit]] = {}
    for e in edits:
        uri = doc.uri if isinstance(e, types.TextEdit) else e.get("uri", doc.uri)
        by_uri.setdefault(uri, []).append(e if isinstance(e, types.TextEdit) else types.TextEdit(rng(e), e["newText"]))
    if ls.caps.document_changes:
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            types.OptionalVersionedTextDocumentIdentifier(uri, ls.docs[uri].version if uri in ls.docs else None), te)
            for uri, te in by_uri.items()])
    return types.WorkspaceEdit(changes=by_uri)


def _fix_all(ls: AotiServer, doc: Document, unsafe: bool, codes: list[str] | None = None):
    if doc.too_large:
        return None
    cfg = ls.config_for(doc.path)
    if codes:
        cfg = cfg.with_overrides(select=codes)
    if not unsafe:  # fix-all: safe fixes, this file
        fixed = fix_source(doc.source(), cfg, unsafe=unsafe, project=ls.project)
        if fixed.data == doc.data:
            return None
        return _workspace_edit(ls, doc, _whole_edit(doc, fixed.data, ls.encoding))
    # the migration: every file its artifacts reach, planned on a copy of the project
    project = Project(summaries=dict(ls.project.summaries), root=ls.project.root)
    project.reader = ls.open_data
    project.files = getattr(ls.project, "files", None)
    from aoti_lsp.fixes.project_fix import fix_project  # here: the first diagnostics do not need it

    changed = {path: f for path, f in fix_project([doc.source()], cfg, True, project).items() if f.new != f.old}
    if not changed:
        return None
    edits = []
    for path, f in changed.items():
        uri = doc.uri if os.path.abspath(path) == os.path.abspath(doc.path) else from_fs_path(os.path.abspath(path))
        pair = notebooks.on_disk(ls, path, f.old, f.new)  # a notebook's JSON, not its program
        if pair is None:
            return None  # never half a migration
        old, new = pair
        for te in _whole_edit(doc, new, ls.encoding, old=old, lines=LineIndex(old)):
            edits.append({"range": {"start": {"line": te.range.start.line, "character": te.range.start.character},
                                    "end": {"line": te.range.end.line, "character": te.range.end.character}},
                          "newText": te.new_text, "uri": uri})
    return _workspace_edit(ls, doc, edits)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[k.value for k in ActionKind], resolve_provider=True),
)
@safe
def code_action(ls: AotiServer, params: types.CodeActionParams):
    if (cell := notebooks.code_action(ls, params)) is not None:  # a notebook cell's
        return cell
    doc = ls.docs.get(params.text_document.uri)
    if doc is None:
        return None
    only = params.context.only
    actions: list[types.CodeAction] = []
    ours = [d for d in params.context.diagnostics if d.source == SOURCE and isinstance(d.data, dict)]
    if ActionKind.QUICKFIX.requested(only):
        for diag in ours:
            code = diag.data.get("code")
            fixes = [diag.data["fix"]] if diag.data.get("fix") else []
            fixes += diag.data.get("alternatives") or []
            if ls.indexing and code in MIGRATIONS:  # planned now, it could miss a file not read yet
                fixes = []
            for i, fix in enumerate(f for f in fixes if f.get("edits") or f.get("lazy")):
                if fix.get("lazy"):  # its edits are built when the action is resolved
                    actions += _lazy_action(ls, doc, diag, code, fix, preferred=i == 0)
                    continue
                actions.append(types.CodeAction(
                    title=_title(code, fix),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=(i == 0 and fix.get("applicability") == "safe") or None,
                    edit=_workspace_edit(ls, doc, fix["edits"], snippet=bool(fix.get("snippet"))),
                ))
        for diag in ours:
            code, noqa = diag.data.get("code"), diag.data.get("noqa")
            if noqa:
                actions.append(types.CodeAction(
                    title=f"aoti-lsp ({code}): Disable for this line",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    edit=_workspace_edit(ls, doc, [noqa]),
                ))
        deprecated = sorted({d.data.get("code") for d in ours if d.tags and types.DiagnosticTag.Deprecated in d.tags})
        if deprecated and not ls.indexing:
            actions.append(types.CodeAction(
                title="aoti-lsp: Migrate every deprecated AOTI call in this file",
                kind=types.CodeActionKind.QuickFix,
                data={"uri": doc.uri, "version": doc.version, "action": "migrate"},
            ))
    if ActionKind.FIX_ALL.requested(only) and any(applicable(f.fix, unsafe=False) for f in ls.result(doc).findings):
        actions.append(types.CodeAction(
            title="aoti-lsp: Fix all auto-fixable problems", kind=ActionKind.FIX_ALL.value,
            data={"uri": doc.uri, "version": doc.version, "action": "fixAll"}))
    if ActionKind.MIGRATE_ALL.requested(only) and only and not ls.indexing:
        actions.append(types.CodeAction(
            title="aoti-lsp: Migrate every deprecated AOTI call in this file", kind=ActionKind.MIGRATE_ALL.value,
            data={"uri": doc.uri, "version": doc.version, "action": "migrate"}))
    if not ls.caps.resolve_code_action_edits:
        actions = [a if a.edit or not a.data else code_action_resolve(ls, a) for a in actions]
        actions = [a for a in actions if a.edit is not None]
    return actions


@server.feature(types.CODE_ACTION_RESOLVE)
@safe
def code_action_resolve(ls: AotiServer, action: types.CodeAction):
    """The expensive edits (fix-all runs every fix, libcst included) are built only here."""
    data = action.data if isinstance(action.data, dict) else {}
    doc = ls.docs.get(data.get("uri", ""))
    if doc is None or data.get("version") != doc.version:
        return action  # stale: the client asks again with the new version
    if ls.indexing and (data.get("action") == "migrate" or data.get("code") in MIGRATIONS):
        return action  # no edit until every file of the workspace is known (see code_action)
    ls.flush_summaries()  # a fix planned across files reads every summary's offsets
    ls.result(doc)  # its findings for this version, cached: a provisional one (slice.py) is dropped
    ls.verify_results()  # and the document's findings must be a full analysis's
    if data.get("action") == "fixAll":
        action.edit = _fix_all(ls, doc, unsafe=False)
    elif data.get("action") == "migrate":
        codes = [r.code for r in all_rules() if r.deprecated]
        action.edit = _fix_all(ls, doc, unsafe=True, codes=codes)
    elif data.get("action") == "quickfix":
        action.edit = _lazy_edit(ls, doc, data)
    return action


# -- lazy quick fixes (findings.LazyFix: Diagnostic.data holds no edits) ----------------------------
def _plain_range(rng: types.Range) -> dict:
    return {"start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character}}


def _lazy_finding(ls: AotiServer, doc: Document, code, rng, title, full: bool = True):
    """(finding, its lazy fix) of the document's current result (the server's, for this
    version) with a diagnostic's code, fix title and range as the client sends it back: in the
    negotiated encoding, else read as UTF-8 columns (Neovim 0.7 sends byte columns whatever was
    negotiated). None when there is none."""
    if not isinstance(title, str) or not isinstance(rng, dict):
        return None
    found = []
    for f in ls.result(doc, full=full).findings:
        fix = next((x for x in (f.fix, *f.alternatives) if isinstance(x, LazyFix) and x.title == title), None)
        if f.code == code and fix is not None:
            found.append((f, fix))
    for encoding in dict.fromkeys((ls.encoding, "utf-8")):
        hit = next((pair for pair in found if _plain_range(lsp_range(doc.lines, pair[0].start, pair[0].end, encoding))
                    == rng), None)
        if hit is not None:
            return hit
    return None


def _title(code, fix: dict) -> str:
    """A quick fix's title: the fix's, and its tier when it is not safe (findings.tier's words;
    "editor only" means nothing in the editor itself)."""
    words = tier(fix.get("applicability", "safe"), bool(fix.get("snippet"))).replace(", editor only", "")
    return f"aoti-lsp ({code}): {fix['title']}" + ("" if words in ("safe", "editor only") else f" [{words}]")


def _lazy_action(ls: AotiServer, doc: Document, diag: types.Diagnostic, code, fix: dict, preferred: bool) -> list:
    """The quick fix of a lazy fix, without its edit: codeAction/resolve builds it (or the end
    of code_action, for a client that cannot resolve edits). None offered when the document's
    result has no such fix (the diagnostic is older than the text) or its build failed."""
    rng = _plain_range(diag.range)
    # offered from the current result, a slice's too (its titles are a full analysis's); the
    # edit is built on resolve, from a full analysis
    found = _lazy_finding(ls, doc, code, rng, fix.get("title"), full=False)
    if found is None or found[1].failed:  # failed: its build was tried and raised (logged)
        return []
    return [types.CodeAction(
        title=_title(code, fix),
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diag],
        is_preferred=(preferred and fix.get("applicability") == "safe") or None,
        data={"uri": doc.uri, "version": doc.version, "action": "quickfix", "code": code, "range": rng,
              "title": fix["title"]},
    )]


def _lazy_edit(ls: AotiServer, doc: Document, data: dict) -> types.WorkspaceEdit | None:
    """The edit of a lazy quick fix, built now for the document's version (checked by the caller).
    None, never a wrong edit, when the fix is gone, cannot be built, or another file it edits
    is no longer the text it was planned on."""
    found = _lazy_finding(ls, doc, data.get("code"), data.get("range"), data.get("title"))
    if found is None:
        return None
    _, lazy = found
    if any(ls.data_of(path) != text for path, text in lazy.basis.items()):
        return None  # another file is no longer what the plan read: no edit rather than a wrong one
    fix = lazy.resolve()
    if fix is None:
        return None
    data = fix_data(doc.source(), fix, ls.encoding, ls.caps, ls.data_of)
    if data is None or not data["edits"]:
        return None
    return _workspace_edit(ls, doc, data["edits"], snippet=bool(data.get("snippet")))


@server.feature(types.TEXT_DOCUMENT_HOVER)
@safe
def hover(ls: AotiServer, params: types.HoverParams):
    doc = ls.docs.get(params.text_document.uri)
    from aoti_lsp.lsp import hover as hover_mod  # here: the first diagnostics do not need it

    return hover_mod.hover(ls, doc, params.position) if doc is not None else None


@server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=['"', "'", "["]))
@safe
def completion(ls: AotiServer, params: types.CompletionParams):
    doc = ls.docs.get(params.text_document.uri)
    from aoti_lsp.lsp import hover as hover_mod

    return hover_mod.completion(ls, doc, params.position) if doc is not None else None


@server.command(triage.COMMAND)
def explain_command(ls: AotiServer, *args):
    return safe(triage.run)(ls, list(args))


def serve() -> int:
    level = os.environ.get("AOTI_LSP_LOG", "WARNING")
    logging.basicConfig(level=level, format="aoti-lsp %(levelname)s %(message)s")
    if "AOTI_LSP_LOG" not in os.environ:
        logging.getLogger("pygls").setLevel(logging.ERROR)  # e.g. "Cancel notification for unknown message id"
    tune_gc()
    server.start_io(StdinFrames(sys.stdin.buffer))
    _save_code()
    return server.exit_code


@server.feature(types.EXIT)
def on_exit(ls: AotiServer, params):
    ls.exit_code = 0 if ls.protocol._shutdown else 1  # pygls computes this, then loses it
