"""What keeps the server answering (issue 11): the time budget around each analysis, the
"analysis skipped" diagnostic, and dropping stale work when a newer version arrives."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types

from aoti_lsp.analysis import budget
from aoti_lsp.analysis.engine import Result
from aoti_lsp.lsp.convert import SOURCE

log = logging.getLogger(__name__)
DEBOUNCE_S = 0.03  # edits closer than this are checked once, at the last version
# typing paused this long: summaries whose offsets only moved are stored, and results kept
# through a syntax error are checked against the file's tree (incremental.py)
SETTLE_S = 1.0


def bounded(work, doc):
    """`work()` within the server's time budget: a file that takes longer is skipped with a
    diagnostic instead of freezing every other request. `doc` None: a summary (None if cut)."""
    if doc is not None and doc.too_large:
        return Result(skipped=doc.too_large)
    try:
        with budget.deadline(budget.SERVER_SECONDS):
            return work()
    except budget.OverBudget as exc:
        log.warning("%s: %s", doc.path if doc is not None else "a summary", exc)
        return Result(skipped=str(exc)) if doc is not None else None


def skipped_diagnostic(reason: str) -> types.Diagnostic:
    return types.Diagnostic(types.Range(types.Position(0, 0), types.Position(0, 0)), f"aoti-lsp: {reason}",
                            severity=types.DiagnosticSeverity.Information, source=SOURCE)


def schedule(ls, doc) -> None:
    """Rechecks `doc` shortly, unless a newer version arrives first: a burst of edits costs one
    analysis, of the last version, instead of one per (stale) version."""
    cancel(ls, doc.uri)
    version = doc.version

    async def later():
        await asyncio.sleep(DEBOUNCE_S)
        if ls.docs.get(doc.uri) is not doc or doc.version != version:
            return
        ls.pending.pop(doc.uri, None)
        try:
            ls.recheck(doc, defer=True)
        except Exception as exc:  # keep serving
            log.exception("recheck failed")
            ls.window_log_message(types.LogMessageParams(types.MessageType.Error, f"aoti-lsp: recheck failed: {exc!r}"))

    ls.pending[doc.uri] = asyncio.ensure_future(later())


def cancel(ls, uri: str) -> None:
    pending = ls.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()


def settle(ls) -> None:
    """Once typing pauses (SETTLE_S), the server's deferred work: AotiServer.settled()."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # called outside the server's loop (a benchmark, a test): nothing to wait for
        return
    pending = ls.pending.pop("<settle>", None)
    if pending is not None:
        pending.cancel()

    async def later():
        await asyncio.sleep(SETTLE_S)
        ls.pending.pop("<settle>", None)
        try:
            ls.settled()
        except Exception as exc:  # keep serving
            log.exception("settle failed")
            ls.window_log_message(types.LogMessageParams(types.MessageType.Error, f"aoti-lsp: settle failed: {exc!r}"))

    ls.pending["<settle>"] = asyncio.ensure_future(later())
