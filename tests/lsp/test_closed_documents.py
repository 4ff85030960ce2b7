"""Issue 19 item 9: a closed document frees what it held (its text, tree and results), and
once no document is open the memos of statement texts are dropped."""

import gc
import weakref

from lsprotocol import types

from aoti_lsp.analysis import incremental
from aoti_lsp.analysis import slice as slice_mod
from aoti_lsp.lsp import server as srv

TEXT = ("import torch\nX = 'm{k}.so'\nso = torch._export.aot_compile(m, (x,), "
        "options={{'aot_inductor.output_path': X}})\nr = torch._export.aot_load(X, 'cpu')\n")


def quiet_server(monkeypatch) -> srv.AotiServer:
    ls = srv.AotiServer()
    ls.settings = {"run": "onSave"}  # no debounced recheck: no event loop here to run or cancel it
    for name in ("text_document_publish_diagnostics", "window_log_message", "window_show_message",
                 "workspace_diagnostic_refresh"):
        monkeypatch.setattr(ls, name, lambda *a, **k: None, raising=False)
    return ls


def cycle(ls, uri: str, k: int):
    srv.did_open(ls, types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, TEXT.format(k=k))))
    srv.hover(ls, types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(3, 8)))
    srv.did_change(ls, types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version=2, uri=uri), [
        types.TextDocumentContentChangeWholeDocument(TEXT.format(k=k) + f"y{k} = 1\n")]))
    srv.hover(ls, types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(3, 8)))
    ls.settled()  # what the server does once typing pauses (deferred summaries stored)


def test_a_closed_document_frees_its_text_tree_and_results(monkeypatch, tmp_path):
    ls = quiet_server(monkeypatch)
    keep = (tmp_path / "keep.py").as_uri()
    cycle(ls, keep, 0)  # stays open: the memos are kept for it
    uri = (tmp_path / "gone.py").as_uri()
    cycle(ls, uri, 1)
    doc = weakref.ref(ls.docs[uri])
    source = weakref.ref(ls.docs[uri].source())
    srv.did_close(ls, types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    gc.collect()
    assert doc() is None and source() is None
    assert incremental._INFO  # another document is open
    srv.did_close(ls, types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(keep)))
    assert not incremental._INFO and not incremental._WORDS and not slice_mod._PIECES


def test_many_cycles_leave_nothing_behind(monkeypatch, tmp_path):
    ls = quiet_server(monkeypatch)
    for k in range(120):
        uri = (tmp_path / f"d{k}.py").as_uri()  # a new name each time: nothing may pile up per name
        cycle(ls, uri, k)
        srv.did_close(ls, types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    assert not ls.docs and not ls._results and not ls._diagnostics
    assert not ls.sliced._last and not ls.analysed._last


def test_memos_keep_their_newer_half(monkeypatch):
    monkeypatch.setattr(incremental, "MEMO_MAX", 10)
    memo = {k: k for k in range(11)}
    incremental.trimmed(memo)
    assert list(memo) == list(range(5, 11))


def test_notifications_leave_no_future_behind():
    """pygls kept one future (and its result) per didOpen/didChange/didClose, forever: the RSS
    of 3000 open/change/hover/close cycles grew 60 -> 77 MB without a plateau; now it stays at 60."""
    import asyncio

    ls = srv.AotiServer()
    proto = ls.protocol

    class Sink:
        def write(self, data):
            pass

        def close(self):
            pass

    proto.set_writer(Sink())

    def send(message):
        proto.handle_message(proto.structure_message(message))

    async def run():
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        for k in range(30):
            uri = f"file:///tmp/aoti-lsp-gone{k}.py"
            send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": TEXT.format(k=k)}}})
            send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
            await asyncio.sleep(0)
        return len(proto._request_futures)

    assert asyncio.run(run()) == 0
