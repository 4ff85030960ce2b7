"""A file opened on the text the workspace index summarised gets no summary of its own: the
server knows which text (and config) each stored summary is of. A different buffer does."""

from __future__ import annotations

import asyncio

import inprocess
from lsprotocol import types
from aoti_lsp.lsp import server as server_mod

TEXT = """import torch

so = torch._export.aot_compile(Net(), (torch.randn(2, 8),))
runner = torch._export.aot_load(so, "cuda")
"""


def _counting(monkeypatch) -> list:
    calls = []
    real = server_mod.summarize

    def summarize(source, cfg):
        calls.append(source.path)
        return real(source, cfg)

    monkeypatch.setattr(server_mod, "summarize", summarize)
    return calls


def _indexed(folder):
    """(a server whose workspace index read `folder`, holding serve.py = TEXT, serve.py)."""
    path = folder / "serve.py"
    path.write_text(TEXT)
    ls = inprocess.server()
    ls.roots = [str(folder)]
    asyncio.run(ls.index_workspace())
    return ls, path


def test_opening_the_indexed_text_reuses_its_summary(tmp_path, monkeypatch):
    ls, path = _indexed(tmp_path)
    stored = dict(ls.project.summaries)
    assert stored, "the index stored no summary: the test proves nothing"
    calls = _counting(monkeypatch)
    doc = inprocess.opened(ls, path.as_uri(), str(path), TEXT)
    assert calls == [] and ls.project.summaries == stored
    assert ls.diagnostics(doc) == inprocess.fresh_diagnostics(doc)


def test_a_buffer_unlike_the_disk_gets_its_own_summary(tmp_path, monkeypatch):
    ls, path = _indexed(tmp_path)
    calls = _counting(monkeypatch)
    edited = TEXT.replace('"cuda"', '"cpu"')
    doc = inprocess.opened(ls, path.as_uri(), str(path), edited)
    assert calls == [str(path)]
    assert ls.diagnostics(doc) == inprocess.fresh_diagnostics(doc)


def test_an_open_defers_its_summary_to_the_pause(tmp_path, monkeypatch):
    """didOpen: the file's own diagnostics first (they never read its summary), its summary
    (what other files read) once typing pauses."""
    ls, path = _indexed(tmp_path)
    calls = _counting(monkeypatch)
    edited = TEXT.replace('"cuda"', '"cpu"')
    monkeypatch.setattr(ls, "publish", lambda *a: None)  # no client here
    server_mod.did_open(ls, types.DidOpenTextDocumentParams(types.TextDocumentItem(path.as_uri(), "python", 0, edited)))
    doc = ls.docs[path.as_uri()]
    diagnostics = ls.diagnostics(doc)
    assert calls == []
    ls.settled()
    assert calls == [str(path)]
    assert diagnostics == inprocess.fresh_diagnostics(doc)
    fresh = inprocess.server()
    inprocess.opened(fresh, doc.uri, doc.path, edited)
    assert ls.project.summaries[str(path)] == fresh.project.summaries[str(path)]
