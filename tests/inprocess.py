"""The language server's own functions in this process (no stdio): for tests that follow a
document through edits and compare its diagnostics with what a fresh server computes."""

from __future__ import annotations

from aoti_lsp.lsp.capabilities import ResolvedClientCapabilities
from aoti_lsp.lsp.documents import Document
from aoti_lsp.lsp.server import AotiServer


def server() -> AotiServer:
    ls = AotiServer()
    ls.caps = ResolvedClientCapabilities(related_information=True)
    return ls


def opened(ls: AotiServer, uri: str, path: str, text: str, version: int = 0, pause: bool = False) -> Document:
    """The document opened as didOpen does (its diagnostics made, its summary deferred), then
    its summary stored, as once typing pauses; `pause`: all that the pause does
    (AotiServer.settled: also what a keystroke's slice reads)."""
    doc = ls.docs[uri] = Document(uri, path, text, version)
    ls.update_summary(doc.path, doc.source(), defer=True)
    ls.diagnostics(doc)
    if pause:
        ls.settled()
    else:
        ls.flush_summaries()
    return doc


def fresh_diagnostics(doc: Document) -> list:
    """What a server that never saw the edits gives for the document's text, from a full
    analysis."""
    ls = server()
    other = opened(ls, doc.uri, doc.path, doc.data.decode(), doc.version)
    ls.result(other, full=True)
    return ls.diagnostics(other)
