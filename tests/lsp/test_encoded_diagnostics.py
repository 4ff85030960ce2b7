"""Diagnostics encoded once (issue 24): the JSON the server writes for a report or a publish is
what pygls' converter writes; a pull of an unchanged document is answered `unchanged`; after
edits (lines added and removed, findings changed) the diagnostics are a fresh server's."""

import asyncio
import json
import sys

import pytest_lsp
from lsprotocol import converters, types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from aoti_lsp.lsp import convert
from aoti_lsp.lsp.protocol import _diagnostics_body
from pygls.protocol.json_rpc import JsonRPCNotification

SERVER = [sys.executable, "-m", "aoti_lsp", "serve"]
CONVERTER = converters.get_converter()


def _snippet(i: int) -> str:
    return (f"def legacy_{i}(model, rows):\n"
            f"    so_path = torch._export.aot_compile(model, (torch.randn(4, 16, device=\"cuda\"),))\n"
            f"    runner = torch._export.aot_load(so_path, \"cpu\")\n"
            f"    return runner(torch.tensor(rows))\n\n\n"
            f"def helper_{i}(rows):\n"
            f"    return [r * {i} for r in rows]\n\n\n")


TEXT = "import torch\n\n\n" + "".join(_snippet(i) for i in range(12))


def _diagnostic(line: int, uri: str) -> types.Diagnostic:
    """A diagnostic naming its own file in every place a move shifts, and another file."""
    rng = types.Range(types.Position(line, 4), types.Position(line, 9))
    def edit(**more):  # a dict of its own each (as convert.text_edits makes them)
        return {"range": {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 2}},
                "newText": "é", **more}

    return types.Diagnostic(
        range=rng, message="a message with a \"quote\" and é", severity=types.DiagnosticSeverity.Warning,
        code="AOTI001", source="aoti-lsp", tags=[types.DiagnosticTag.Deprecated],
        code_description=types.CodeDescription(href="https://example.org/AOTI001"),
        related_information=[
            types.DiagnosticRelatedInformation(types.Location(uri, rng), "here"),
            types.DiagnosticRelatedInformation(types.Location("file:///other.py", rng), "there")],
        data={"code": "AOTI001", "noqa": edit(), "fix": {"title": "t", "edits": [edit(), edit(uri="file:///other.py")]},
              "alternatives": [{"title": "u", "edits": [edit()]}]})


def test_encoded_is_what_pygls_writes_moved_ones_too():
    uri = "file:///here.py"
    d = _diagnostic(7, uri)
    assert json.loads(convert.encoded(d)) == CONVERTER.unstructure(d)
    moved = convert._move_lines(d, 3, uri)  # written from d's JSON with its lines as slots
    again = convert._move_lines(moved, -2, uri)  # and a moved one moved again
    for m, line in ((moved, 10), (again, 8)):
        plain = json.loads(convert.encoded(m))
        assert plain == CONVERTER.unstructure(m)
        assert plain["range"]["start"]["line"] == line and plain["data"]["noqa"]["range"]["end"]["line"] == line + 1
        assert plain["relatedInformation"][1]["location"]["range"]["start"]["line"] == 7  # another file's: kept
        assert plain["data"]["fix"]["edits"][1]["range"]["start"]["line"] == 7
    # an edit between its lines 7 and 8: line 7 stays, line 8 moves
    part = json.loads(convert.encoded(convert._move_lines(d, 3, uri, after=7)))
    assert part == CONVERTER.unstructure(convert._move_lines(d, 3, uri, after=7))
    assert part["range"]["start"]["line"] == 7 and part["data"]["noqa"]["range"]["end"]["line"] == 11
    assert json.loads(convert.encoded(d)) == CONVERTER.unstructure(d)  # the old one is as it was


def test_encoded_is_what_pygls_writes_for_the_servers_diagnostics(tmp_path):
    from aoti_lsp.analysis.engine import analyze
    from aoti_lsp.analysis.source import Source
    from aoti_lsp.lsp.capabilities import ResolvedClientCapabilities
    from aoti_lsp.project.config import Config

    source = Source(TEXT.encode(), str(tmp_path / "m.py"))
    caps = ResolvedClientCapabilities(related_information=True)
    items = [convert.diagnostic(source, f, "utf-16", caps) for f in analyze(source, Config()).findings]
    assert len(items) == 36 and all(d.related_information or d.code != "AOTI101" for d in items)
    for d in items:
        assert json.loads(convert.encoded(d)) == CONVERTER.unstructure(d)
        cut = convert._cut(d, convert.encoded(d), source.path and convert._uri(source.path))
        assert cut is not None and json.loads(cut[0][0] + "".join(f"{n}{p}" for n, p in zip(cut[1], cut[0][1:]))) == \
            CONVERTER.unstructure(d)


def test_publish_body_is_pygls_json():
    from pygls.protocol import default_converter

    conv = default_converter()
    items = [_diagnostic(k, "file:///here.py") for k in range(3)]
    pub = JsonRPCNotification(method=types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, jsonrpc="2.0",
                              params=types.PublishDiagnosticsParams("file:///here.py", items, 4))
    assert json.loads(_diagnostics_body(pub)) == conv.unstructure(pub)


def _report_test():
    from pygls.protocol.json_rpc import JsonRPCResponseMessage

    conv = converters.get_converter()
    items = [_diagnostic(k, "file:///here.py") for k in range(3)]
    msg = JsonRPCResponseMessage(id=5, jsonrpc="2.0", result=types.RelatedFullDocumentDiagnosticReport(items, result_id="r"))
    return msg, conv


def test_full_report_body_is_pygls_json():
    msg, conv = _report_test()
    want = json.loads(json.dumps(msg, default=lambda o: conv.unstructure(o)))
    assert json.loads(_diagnostics_body(msg)) == want


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), params=["pull", "push"])
async def client(lsp_client: LanguageClient, request):
    caps = client_capabilities("neovim@v0.11.0" if request.param == "pull" else "visual-studio-code")
    _accept_registrations(lsp_client)
    await lsp_client.initialize_session(types.InitializeParams(capabilities=caps))
    lsp_client.pull = request.param == "pull"
    yield
    await lsp_client.shutdown_session()


def _accept_registrations(client) -> None:
    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params):  # VS Code accepts the file watcher registration
        return None


class Doc:
    def __init__(self, client, uri):
        self.client, self.uri, self.version, self.result_id, self.items = client, uri, 1, None, []

    async def diagnostics(self) -> list:
        if self.client.pull:
            report = await self.client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(self.uri), previous_result_id=self.result_id))
            if report.kind == "full":
                self.items = list(report.items)
            else:
                assert report.result_id == self.result_id
            self.result_id = report.result_id
            return self.items
        while self.uri not in self.client.diagnostics:
            await asyncio.wait_for(self.client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 20)
        self.items = list(self.client.diagnostics[self.uri])
        return self.items

    async def edit(self, line: int, col: int, end_line: int, end_col: int, text: str) -> list:
        self.version += 1
        self.client.diagnostics.pop(self.uri, None)
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=self.version, uri=self.uri),
            [types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(line, col), types.Position(end_line, end_col)), text=text)]))
        return await self.diagnostics()


def _apply(text: str, line: int, col: int, end_line: int, end_col: int, new: str) -> str:
    lines = text.split("\n")
    start = sum(len(x) + 1 for x in lines[:line]) + col
    end = sum(len(x) + 1 for x in lines[:end_line]) + end_col
    return text[:start] + new + text[end:]


async def test_unchanged_pull_and_edits_equal_a_fresh_server(client, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(TEXT)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text=TEXT)))
    doc = Doc(client, uri)
    first = await doc.diagnostics()
    assert len(first) == 12 * 3  # AOTI001, AOTI002, AOTI101 in each snippet
    if client.pull:  # the same document, nothing changed: `unchanged`, the same result id
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri), previous_result_id=doc.result_id))
        assert report.kind == "unchanged" and report.result_id == doc.result_id
    text = TEXT
    row = TEXT.split("\n").index("def legacy_5(model, rows):")
    edits = [
        (1, 0, 1, 0, "\n\nimport os\n"),  # lines added above every finding: all of them move
        (row + 3, 4, row + 3, 4, "x"),  # a name in AOTI code: its findings change
        (row + 3, 4, row + 3, 5, ""),
        (row + 4, 13, row + 4, 13, "q"),  # `runner` -> `rqunner`: the call's findings go
        (2, 0, 4, 0, ""),  # lines removed above every finding
        (row + 8, 0, row + 8, 0, '    ep = torch._export.aot_compile(m, (x,))\n'),
    ]
    for edit in edits:
        await doc.edit(*edit)
        text = _apply(text, *edit)
    got = doc.items

    fresh = await ClientServerConfig(server_command=SERVER).start()
    _accept_registrations(fresh)
    try:
        await fresh.initialize_session(types.InitializeParams(capabilities=client.capabilities))
        (tmp_path / "m.py").write_text(text)
        fresh.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=doc.version, text=text)))
        fresh.pull = client.pull
        want = await Doc(fresh, uri).diagnostics()
    finally:
        await fresh.shutdown_session()
    key = lambda d: (d.range.start.line, d.range.start.character, d.code)  # noqa: E731
    assert sorted(got, key=key) == sorted(want, key=key)
    assert len(got) != len(first)  # the edits changed the findings, not only moved them


def test_encoded_json_is_dropped_with_its_diagnostic():
    import gc

    d = _diagnostic(3, "file:///here.py")
    convert.encoded(d)
    key = id(d)
    assert key in convert._JSON._by_id
    del d
    gc.collect()
    other = _diagnostic(3, "file:///here.py")  # may take the freed one's id: its JSON is not the other's
    assert convert._JSON.get(other) is None
    convert._JSON.sweep()
    assert key not in convert._JSON._by_id  # held weakly: a closed file's diagnostics are not kept


def test_the_memo_is_swept_as_it_grows():
    """Entries of dead diagnostics go when the memo has doubled: it never holds more than twice
    what lives (the sweep replaced a weakref callback per entry, ~8,000 a dense Enter)."""
    memo = convert._Memo()
    live = [_diagnostic(i, "file:///here.py") for i in range(100)]
    for i in range(20_000):
        d = _diagnostic(i, "file:///here.py")
        memo.put(d, i)
        del d
    for i, d in enumerate(live):
        memo.put(d, -i)
    assert len(memo._by_id) <= 2 * 4096
    assert all(memo.get(d) == -i for i, d in enumerate(live))


def test_a_moved_diagnostic_makes_its_fields_only_when_read(monkeypatch):
    """Issue 24: a keystroke moves a diagnostic's lines, not its lsprotocol objects. A Moved's
    JSON, its fields (made when read) and a Moved moved again or re-messaged are what moving
    every field would make; its pieces, cut from the JSON text, are the json.loads ones."""
    uri = "file:///here.py"
    d = _diagnostic(7, uri)
    moved = convert._move_lines(d, 3, uri)
    assert type(moved) is convert.Moved and moved._made is None  # nothing made by the move
    want = _shifted(CONVERTER.unstructure(d), 3, uri, -1)
    assert json.loads(convert.encoded(moved)) == want
    assert moved._made is None  # writing it made no field either
    eager = _structured(want)
    assert moved == eager and eager == moved and moved != d
    assert moved.range.start.line == 10 and moved._made is not None
    assert CONVERTER.unstructure(moved) == want
    again = convert._move_lines(moved, -5, uri, after=8)  # a Moved moved again: from its root, not a chain
    want = _shifted(want, -5, uri, 8)
    assert again._root is d and again == _structured(want)
    assert json.loads(convert.encoded(again)) == want

    from aoti_lsp.analysis.findings import Finding, Related

    finding = Finding("AOTI001", "a message naming line 12", 0, 1, related=[Related(0, 1, "here, line 12"), Related(0, 1, "there")])
    said = convert._remessaged(convert._move_lines(d, 3, uri), finding)
    assert type(said) is convert.Moved and said._made is None
    plain = json.loads(convert.encoded(said))
    assert plain["message"] == finding.message and [r["message"] for r in plain["relatedInformation"]] == ["here, line 12", "there"]
    assert plain == CONVERTER.unstructure(said)  # the fields, made now, say the same

    json_cut = convert._cut(d, convert.encoded(d), uri)
    assert json_cut is not None and len(json_cut[1]) == 10  # its range, one related place and three edits here
    convert._JSON.get(d)[1] = None
    monkeypatch.setattr(convert, "_cut", lambda *a: None)  # the json.loads path
    assert convert._template(d, uri) == json_cut


def test_a_diagnostic_without_json_pieces_is_moved_all_the_same(monkeypatch):
    """The slot marker inside a message leaves no pieces to write a move from: the Moved is
    written from its fields, made then, and says what moving every field says."""
    uri = "file:///here.py"
    d = _diagnostic(7, uri)
    d.message = convert._SLOT  # spelt as a slot is: the pieces would not be told apart
    monkeypatch.setattr(convert, "_cut", lambda *a: None)
    moved = convert._move_lines(d, 2, uri, after=7)
    assert type(moved) is convert.Moved and convert._json_of(moved)[1] is None
    want = _shifted(CONVERTER.unstructure(d), 2, uri, 7)
    assert json.loads(convert.encoded(moved)) == want == CONVERTER.unstructure(moved)


def _structured(plain: dict) -> types.Diagnostic:
    """A plain Diagnostic of that JSON, with lists where the server makes lists (cattrs makes tuples)."""
    d = CONVERTER.structure(plain, types.Diagnostic)
    d.tags, d.related_information = list(d.tags or []) or None, list(d.related_information or []) or None
    return d


def _shifted(plain: dict, n: int, uri: str, after: int) -> dict:
    """A diagnostic's JSON with the lines it names in `uri` after line `after` moved by n: its
    range, related places there, and the edits of its data that name no other file."""
    plain = json.loads(json.dumps(plain))

    def move(r):
        for end in ("start", "end"):
            if r[end]["line"] > after:
                r[end]["line"] += n

    move(plain["range"])
    for r in plain.get("relatedInformation") or ():
        if r["location"]["uri"] == uri:
            move(r["location"]["range"])
    data = plain.get("data") or {}
    for e in [data.get("noqa")] + [e for f in [data.get("fix"), *(data.get("alternatives") or ())] if f
                                   for e in f.get("edits") or ()]:
        if e and "uri" not in e:
            move(e["range"])
    return plain


def test_a_message_key_is_spelt_as_the_diagnostic_encoder_spells_it():
    """_remessaged finds a message in a diagnostic's JSON by its key: written by the C string
    encoder, not through a dict, it must match what the diagnostic's own encoder wrote
    (non-ASCII, quotes, backslashes, control characters, the slot marker)."""
    for message in ["plain", 'a "quoted" \\path\\ at line 12', "tab\there\nnewline", "naïve → 设备 \U0001f600",
                    "\x00\x1f\x7f", convert._SLOT, ""]:
        assert convert._message_json(message) == convert._ENCODE({"message": message})[1:-1]
        d = types.Diagnostic(types.Range(types.Position(0, 0), types.Position(0, 1)), message)
        assert convert.encoded(d).count(convert._message_json(message)) == 1
