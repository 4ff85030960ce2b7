"""Findings -> LSP diagnostics and edits. The fix travels inside Diagnostic.data (ruff's
AssociatedDiagnosticData), so a code action is a pure function of what the client sends back.
A lazy fix (findings.LazyFix: the migration, built with libcst) travels without its edits:
title, applicability and `"lazy": true`, nothing that names an offset (a diagnostic moved past
an edit, incremental.py, stays the diagnostic a fresh analysis makes); its code action is
resolved from the server's result for the document (server.code_action_resolve), so
diagnostics never build it."""

from __future__ import annotations

import json
import re
import weakref
from bisect import bisect_left, bisect_right
from functools import lru_cache

from lsprotocol import types

from aoti_lsp.analysis.findings import Edit, Finding, Fix, LazyFix, Severity, plain_text, severity_of
from aoti_lsp.fixes.layout import adapt
from aoti_lsp.analysis.noqa import add_code
from aoti_lsp.analysis.incremental import TITLES, cited_in
from aoti_lsp.analysis.positions import LineIndex, units
from aoti_lsp.rules import rule_by_code
from aoti_lsp.analysis.source import Source, absolute

SOURCE = "aoti-lsp"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
# plain_text (imported above) lives in findings.py: the CLI needs it without lsprotocol


def lsp_range(lines: LineIndex, start: int, end: int, encoding: str) -> types.Range:
    (sl, sc), (el, ec) = lines.position(start, encoding), lines.position(end, encoding)
    return types.Range(types.Position(sl, sc), types.Position(el, ec))


def text_edits(lines: LineIndex, edits, encoding: str, snippet: bool = False, keep_snippet: bool = False) -> list[dict]:
    """Plain dicts (they ride in Diagnostic.data). Snippet text (`snippet`) stays a snippet only
    for a client that takes snippet edits (`keep_snippet`); otherwise it becomes plain code."""
    out = []
    position = lines.position
    for e in edits:  # written as dicts at once: no lsprotocol Range to build and read back
        text = plain_text(e.text) if snippet and not keep_snippet else e.text
        (sl, sc), (el, ec) = position(e.start, encoding), position(e.end, encoding)
        out.append({"range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}},
                    "newText": text})
    return out


def noqa_edit(source: Source, finding: Finding, encoding: str) -> dict:
    line = source.lines.line_of(finding.start)
    raw = source.lines.line_bytes(line)
    body = raw[:-1] if raw.endswith(b"\r") else raw
    old = body.decode("utf-8")
    new = add_code(old, finding.code)
    # only the span that changes (the line's end, or its noqa comment): the whole line rode in
    # every diagnostic's data before (740 KB of a dense file's 5.2 MB report)
    head = _common_head(old, new)
    tail = _common_head(old[head:][::-1], new[head:][::-1])
    a = len(old[:head].encode("utf-8"))  # bytes into the line
    b = len(body) - len(old[len(old) - tail:].encode("utf-8"))
    # both on this line: its units up to them, no look-up of the line again (~4,000 a report)
    ca = units(body[:a], encoding)
    cb = ca if b == a else units(body[:b], encoding)
    return {"range": {"start": {"line": line, "character": ca}, "end": {"line": line, "character": cb}},
            "newText": new[head:len(new) - tail]}


def _common_head(a: str, b: str) -> int:
    """The length of the longest common prefix of `a` and `b`. Usually one holds the other
    whole (a noqa comment appended): one comparison in C, not os.path.commonprefix's loop over
    characters (~30 ms of a dense file's first report)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def fix_data(source: Source, fix, encoding: str, caps, other_data=None) -> dict | None:
    """A fix as plain data. Edits in other files (a migration edits every file of its artifact)
    carry their `uri`; their positions come from `other_data(path)` (the editor's buffer or the
    disk). None when one of those files cannot be read: half a migration is never offered.
    A lazy fix: its title and applicability, `lazy` instead of edits (they are not built here)."""
    if isinstance(fix, LazyFix):
        if any(other_data is None or other_data(path) is None for path in sorted(fix.other_files)):
            return None
        return {"title": fix.title, "applicability": fix.applicability.value,
                "snippet": fix.snippet and caps.snippet_edits, "lazy": True}
    local = [e for e in fix.edits if e.path is None]
    edits = text_edits(source.lines, adapt(source.data, local), encoding, snippet=fix.snippet,
                       keep_snippet=caps.snippet_edits)
    by_path: dict[str, list] = {}
    for e in fix.edits:
        if e.path is not None:
            by_path.setdefault(e.path, []).append(Edit(e.start, e.end, e.text))
    for path, foreign in sorted(by_path.items()):
        data = other_data(path) if other_data is not None else None
        if data is None:
            return None
        for item in text_edits(LineIndex(data), adapt(data, foreign), encoding):
            edits.append({**item, "uri": _uri(path)})
    return {
        "title": fix.title,
        "applicability": fix.applicability.value,
        "snippet": fix.snippet and caps.snippet_edits,
        "edits": edits,
    }


def diagnostic(source: Source, finding: Finding, encoding: str, caps, other_lines=None,
               other_data=None) -> types.Diagnostic:
    rule = rule_by_code(finding.code)
    data = {"code": finding.code, "noqa": noqa_edit(source, finding, encoding)}
    fix = fix_data(source, finding.fix, encoding, caps, other_data) if finding.fix is not None else None
    if fix is not None:
        data["fix"] = fix
    if finding.alternatives:
        data["alternatives"] = [d for f in finding.alternatives if (d := fix_data(source, f, encoding, caps, other_data))]
    tags = []
    if finding.deprecated:
        tags.append(types.DiagnosticTag.Deprecated)
    if finding.unnecessary:
        tags.append(types.DiagnosticTag.Unnecessary)
    related = None
    if caps.related_information and finding.related:
        related = []
        for r in finding.related:
            if r.path is None:
                uri, lines = _uri(source.path), source.lines
            else:
                uri, lines = _uri(r.path), (other_lines(r.path) if other_lines else None)
            if lines is None:
                continue
            related.append(types.DiagnosticRelatedInformation(
                location=types.Location(uri, lsp_range(lines, r.start, r.end, encoding)), message=r.message))
    return types.Diagnostic(
        range=lsp_range(source.lines, finding.start, finding.end, encoding),
        message=finding.message,
        severity=_SEVERITY[severity_of(finding)],
        code=finding.code,
        code_description=types.CodeDescription(href=rule.url) if rule else None,
        source=SOURCE,
        tags=tags or None,
        related_information=related or None,
        data=data,
    )


def _uri(path: str) -> str:
    return _abs_uri(absolute(path))  # memoised: each related place asks (~5,000 a dense report)


@lru_cache(maxsize=1024)
def _abs_uri(path: str) -> str:
    """An absolute path's URI (a finding's related places name the same few files)."""
    from pygls.uris import from_fs_path

    return from_fs_path(path) or path


# -- diagnostics of a result that incremental.py moved past an edit -------------------------------
def moved_diagnostics(old: list[types.Diagnostic], findings: list[Finding], shift, source: Source, make,
                      origin: list[int | None] | None = None) -> list:
    """The diagnostics of findings moved past an edit no rule saw: an old diagnostic is kept
    when all it names in this file is before the edit's lines, or after them (its lines then
    moved by the lines the edit added); one that names a line the edit touched is made anew.
    `origin` (slice.py): per finding, the index of the old one it was moved from (None: new)."""
    if origin is None:
        if len(old) != len(findings):
            return [make(f) for f in findings]
        origin = range(len(findings))
    carry = _carrier(source, shift)
    return [carry(old[k] if k is not None and k < len(old) else None, f, make) for k, f in zip(origin, findings)]


def _carrier(source: Source, shift):
    """carry(old diagnostic or None, finding, make): the old diagnostic when no line it names
    in this file is one the edit touched, its lines after the edit moved by the lines added
    (those before it stay); else (or None) made anew."""
    uri = _uri(source.path)
    data = source.data
    first = data.count(b"\n", 0, shift.start)  # the lines the edit spans, in the old text
    last = first + data.count(b"\n", shift.start, shift.old_end + shift.delta) - shift.lines

    def carry(d, f, make):
        if d is None:
            return make(f)
        lines = _lines_cached(d, uri)
        if bisect_left(lines, first) != bisect_right(lines, last):
            return make(f)  # it names a line the edit touched
        if lines[-1] >= first and shift.lines:
            d = _move_lines(d, shift.lines, uri, after=last)
        if d.message != f.message or (f.related and _notes_differ(d, f)):
            return _remessaged(d, f) or make(f)  # a line its message names moved (incremental.recited)
        if shift.lines and _titles_differ(d, f):
            return make(f)  # a line a fix's title names moved (rare: made anew)
        return d
    return carry


def _titles_differ(d: types.Diagnostic, f: Finding) -> bool:
    """Whether a title of `f`'s fixes that cites a line differs from the one `d` holds."""
    if not cited_in(f) & TITLES:
        return False
    fixes = (f.fix, *f.alternatives)
    data = d.data if isinstance(d.data, dict) else {}
    held = [data.get("fix"), *(data.get("alternatives") or ())]
    titles = [fix.title for fix in fixes if fix is not None]
    return titles != [h.get("title") for h in held if h]


def _notes_differ(d: types.Diagnostic, f: Finding) -> bool:
    notes = _notes_of(d) or ()
    return len(notes) == len(f.related) and any(n != r.message for n, r in zip(notes, f.related))


def _remessaged(d: types.Diagnostic, f: Finding) -> types.Diagnostic | None:
    """`d` saying what `f` says (the lines its message and notes name moved past an edit): the
    same places and data, its JSON the old one's with those strings replaced, not made again
    (an Enter early in a dense file changes ~2,000 messages). None where one of them is not
    found exactly once in the JSON: then it is made anew."""
    notes = _notes_of(d) or ()
    if notes and len(notes) != len(f.related):
        return None
    hit = _json_of(d)
    template = hit[1] if hit is not None else None  # the next move writes from it (Moved)
    parts = template[0] if template is not None else None
    text = None if parts is not None else encoded(d)  # with pieces, they are edited, not joined
    for old, new in [(d.message, f.message), *((n, r.message) for n, r in zip(notes, f.related))]:
        if old != new:
            key, said = _message_json(old), _message_json(new)
            if parts is not None:  # slots split range lines only: a message is inside one piece
                found = [k for k, p in enumerate(parts) if key in p]
                if len(found) != 1 or parts[found[0]].count(key) != 1:
                    return None
                parts = Pieces(parts)  # the old diagnostic's pieces stay as they are
                parts[found[0]] = parts[found[0]].replace(key, said)
            else:
                if text.count(key) != 1:
                    return None
                text = text.replace(key, said)
    if type(d) is Moved:  # stays one: its fields are still not made
        out = Moved(d, parts, template[1] if template is not None else d._lines, d._uri, f.message,
                    tuple(r.message for r in f.related) if notes else None)
        out._json[0] = text
    else:
        related = [n if n.message == r.message else types.DiagnosticRelatedInformation(n.location, r.message)
                   for n, r in zip(d.related_information or (), f.related)] or d.related_information
        out = _like(d, message=f.message, related_information=related)
        _JSON.put(out, [text, (parts, template[1]) if parts is not None else None])
    _keep_sorted(d, out)
    return out


def _like(d: types.Diagnostic, **changed) -> types.Diagnostic:
    """A new diagnostic: `d` with some fields changed (a made one is never changed in place: its
    JSON is memoised by identity)."""
    fields = {"range": d.range, "message": d.message, "severity": d.severity, "code": d.code,
              "code_description": d.code_description, "source": d.source, "tags": d.tags,
              "related_information": d.related_information, "data": d.data}
    fields.update(changed)
    return types.Diagnostic(**fields)


def _message_json(message: str) -> str:
    """`"message": "..."` as a diagnostic's JSON spells it (what _ENCODE writes of a string:
    ASCII, escaped, by the C encoder; a dict through the encoder costs ~10x)."""
    return '"message":' + _STRING(message)


def reused_diagnostics(old: list[types.Diagnostic], old_findings: list[Finding], findings: list[Finding],
                       shift, source: Source, make) -> list:
    """The diagnostics of a new analysis after an edit (`shift`: old text -> new): a finding
    that says what an old one said, at its moved place, keeps the old diagnostic, moved by the
    lines the edit added when it lies after them; one that names another file or a line the
    edit touched is made anew (a keystroke in AOTI code changes a few findings of hundreds)."""
    if len(old) != len(old_findings):
        return [make(f) for f in findings]
    by_key = {}
    for g, d in zip(old_findings, old):
        offsets, rest = _key_parts(g)
        if rest is not None:
            if offsets and offsets[-1] >= shift.old_end:  # sorted: only a finding past the edit moves
                offsets = tuple(x + shift.delta if x >= shift.old_end else x for x in offsets)
            by_key.setdefault((offsets, rest), d)
    carry = _carrier(source, shift)
    return [carry(None if (k := _key_parts(f))[1] is None else by_key.get(k), f, make) for f in findings]


def _foreign(f: Finding) -> bool:
    """Names another file (its lines there may have moved since, or it may be gone)."""
    for fix in (f.fix, *f.alternatives):
        if isinstance(fix, Fix):
            if any(e.path is not None for e in fix.edits):
                return True
        elif fix is not None and fix.other_files:
            return True
    return any(r.path is not None for r in f.related)


class _Memo:
    """What was computed of an object, by identity, held while the object lives. A plain weak
    reference tells a live entry from one whose id was reused; entries of dead objects are
    swept when the memo has doubled since the last sweep. (A weakref callback per entry, to
    drop it when its object died, ran ~8,000 Python callbacks per Enter in a dense file: a
    third of its diagnostics' time.)"""

    def __init__(self):
        self._by_id: dict[int, tuple] = {}
        self._sweep_at = 4096

    def get(self, obj):
        hit = self._by_id.get(id(obj))
        return hit[1] if hit is not None and hit[0]() is obj else None

    def put(self, obj, value):
        self._by_id[id(obj)] = (weakref.ref(obj), value)
        if len(self._by_id) > self._sweep_at:
            self.sweep()
        return value

    def sweep(self) -> None:
        self._by_id = {k: hit for k, hit in self._by_id.items() if hit[0]() is not None}
        self._sweep_at = max(4096, 2 * len(self._by_id))


_KEYS = _Memo()  # finding -> its key parts: a kept finding is asked every keystroke


def _key_parts(f: Finding) -> tuple:
    """(offsets, the rest): all a diagnostic shows of a finding, its offsets apart (sorted, with
    where each goes, so that an edit moves them in one pass). The rest is None when the finding
    names another file (its lines there may have moved since, or it may be gone)."""
    parts = _KEYS.get(f)
    return parts if parts is not None else _KEYS.put(f, _make_key(f))


def _make_key(f: Finding) -> tuple:
    if _foreign(f):
        return (), None
    offsets: list[int] = [f.start, f.end]

    def fix_key(fix):
        if fix is None:
            return None
        if isinstance(fix, Fix):
            for e in fix.edits:
                offsets.extend((e.start, e.end))
            return (fix.title, fix.applicability, fix.snippet, tuple(e.text for e in fix.edits))
        return (fix.title, fix.applicability, fix.snippet, frozenset(fix.other_files), type(fix).__name__)

    related = []
    for r in f.related:
        offsets.extend((r.start, r.end))
        related.append(r.message)
    rest = (f.code, f.message, f.severity, f.deprecated, f.unnecessary, tuple(related), fix_key(f.fix),
            tuple(map(fix_key, f.alternatives)))
    order = sorted(range(len(offsets)), key=offsets.__getitem__)  # where each offset goes, by value
    return tuple(offsets[i] for i in order), (rest, tuple(order))


_LINES = _Memo()  # diagnostic -> (uri, its lines sorted): kept ones are asked every keystroke


def _lines_cached(d: types.Diagnostic, uri: str) -> tuple[int, ...]:
    if type(d) is Moved and d._uri == uri:  # held by the object: no memo look-up per keystroke
        lines = d._sorted
        if lines is None:
            lines = tuple(sorted(set(d._lines)))
            object.__setattr__(d, "_sorted", lines)
        return lines
    hit = _LINES.get(d)
    if hit is None or hit[0] != uri:
        hit = _LINES.put(d, (uri, tuple(sorted(set(_lines_of(d, uri))))))
    return hit[1]


def _sorted_known(d: types.Diagnostic, uri: str) -> tuple[int, ...] | None:
    """_lines_cached's answer where it was computed already, else None."""
    if type(d) is Moved:
        return d._sorted if d._uri == uri else None
    hit = _LINES.get(d)
    return hit[1] if hit is not None and hit[0] == uri else None


def _keep_sorted(d: types.Diagnostic, out: types.Diagnostic) -> None:
    """`out` names the lines `d` names (a message changed): it keeps what was computed of them."""
    hit = None if type(d) is Moved else _LINES.get(d)
    uri = d._uri if type(d) is Moved else hit[0] if hit is not None else None
    known = _sorted_known(d, uri) if uri is not None else None
    if known is None:
        return
    if type(out) is Moved:
        object.__setattr__(out, "_sorted", known)
    else:
        _LINES.put(out, (uri, known))


def _lines_of(d: types.Diagnostic, uri: str) -> list[int]:
    """Lines of this file that a diagnostic names: its range, related places here, edits here."""
    out = [d.range.start.line, d.range.end.line]
    for r in d.related_information or ():
        if r.location.uri == uri:
            out += [r.location.range.start.line, r.location.range.end.line]
    for e in _edits(d.data):
        if "uri" not in e:
            out += [e["range"]["start"]["line"], e["range"]["end"]["line"]]
    return out


def _edits(data) -> list[dict]:
    if not isinstance(data, dict):
        return []
    out = [data["noqa"]] if data.get("noqa") else []
    for fix in [data.get("fix"), *(data.get("alternatives") or ())]:
        if fix:
            out += fix.get("edits") or []
    return out


def _move_lines(d: types.Diagnostic, n: int, uri: str, after: int = -1) -> types.Diagnostic:
    """`d` with the lines it names in this file after line `after` moved by n: a Moved, its
    lines only (its JSON the old one's pieces with them filled in); its fields are made when
    something reads them, which a report never does."""
    if n == 0:
        return d
    try:
        parts, lines = _template(d, uri)
    except ValueError:  # the slot marker inside a message (no server message has it): written from its fields
        parts, lines = None, _lines_of(d, uri)
    moved = Moved(d, parts, [x + n if x > after else x for x in lines], uri)
    known = _sorted_known(d, uri)
    if known is not None:  # its lines, moved (in order: none was touched)
        object.__setattr__(moved, "_sorted", tuple([x + n if x > after else x for x in known]))
    return moved


class Moved(types.Diagnostic):
    """A diagnostic moved past edits that added or removed lines before it: the one first made
    (`_root`) and the lines it names in this file now, in its JSON's order (_template's slots).
    Range, related places and data are made only when read (notebooks, tests); a report writes
    it from the pieces. An Enter early in a dense file moved ~4,000 diagnostics, each rebuilt
    as lsprotocol objects and dicts: ~40% of the keystroke."""

    # _json: encoded()'s [JSON or None, (pieces, lines) or None]; _sorted: its lines, sorted, once
    # known (_lines_cached): held here, not in the memos (a weak reference per move adds up)
    __slots__ = ("_root", "_lines", "_uri", "_notes", "_made", "_json", "_sorted")

    def __init__(self, d: types.Diagnostic, parts: list[str] | None, lines: list[int], uri: str,
                 message: str | None = None, notes: tuple[str, ...] | None = None):
        put = object.__setattr__  # attrs' own __setattr__ runs its hooks: 7x the cost of a move
        put(self, "_root", d._root if type(d) is Moved else d)
        put(self, "_lines", lines)
        put(self, "_uri", uri)
        put(self, "_made", None)
        put(self, "_notes", notes if notes is not None else _notes_of(d))
        put(self, "message", d.message if message is None else message)
        for name in _KEPT:
            put(self, name, getattr(d, name))
        put(self, "_json", [None, (parts, lines) if parts is not None else None])
        put(self, "_sorted", None)

    def _fields(self) -> tuple:
        made = self._made
        if made is None:
            root, at, uri = self._root, iter(self._lines), self._uri

            def rng(r: types.Range) -> types.Range:  # start, then end: the slots' order
                start = types.Position(next(at), r.start.character)
                return types.Range(start, types.Position(next(at), r.end.character))

            where = rng(root.range)
            related = root.related_information
            if related is not None:
                related = [types.DiagnosticRelatedInformation(
                    types.Location(r.location.uri, rng(r.location.range)) if r.location.uri == uri else r.location, note)
                    for r, note in zip(related, self._notes)]
            data = _moved_data(root.data, at) if isinstance(root.data, dict) else root.data
            made = (where, related, data)
            object.__setattr__(self, "_made", made)
        return made

    range = property(lambda self: self._fields()[0])
    related_information = property(lambda self: self._fields()[1])
    data = property(lambda self: self._fields()[2])

    def __eq__(self, other):  # equal to the plain Diagnostic of the same fields (attrs compares classes)
        if not isinstance(other, types.Diagnostic):
            return NotImplemented
        return all(getattr(self, a) == getattr(other, a) for a in _FIELDS)

    __hash__ = None


_KEPT = ("severity", "code", "code_description", "source", "tags")
_FIELDS = ("range", "message", "severity", "code", "code_description", "source", "tags", "related_information", "data")


def _notes_of(d: types.Diagnostic) -> tuple[str, ...] | None:
    """The messages of its related places (a Moved keeps them apart: no fields made to read them)."""
    if type(d) is Moved:
        return d._notes
    related = d.related_information
    return None if related is None else tuple(r.message for r in related)


def _moved_data(data: dict, at) -> dict:
    """Diagnostic.data with the lines of its edits in this file taken from `at` (_edits' order)."""
    def edit(e: dict) -> dict:
        if "uri" in e:
            return e
        r = e["range"]
        start = {**r["start"], "line": next(at)}
        return {**e, "range": {"start": start, "end": {**r["end"], "line": next(at)}}}

    def fix(x):
        return {**x, "edits": [edit(e) for e in x["edits"]]} if x and x.get("edits") else x

    data = dict(data)
    if data.get("noqa"):
        data["noqa"] = edit(data["noqa"])
    if "fix" in data:
        data["fix"] = fix(data["fix"])
    if data.get("alternatives"):
        data["alternatives"] = [fix(x) for x in data["alternatives"]]
    return data


# -- diagnostics encoded once (issue 24) -----------------------------------------------------------
# A diagnostic is never changed once made (a moved one is a new object), so its JSON is written
# once and reused by every report and publish that holds it, and by its fingerprint (refresh.py).
# One moved past an edit (_move_lines) is written from the old one's JSON with its line numbers
# as slots: the line delta is applied when it is serialised, not through cattrs again.
_JSON = _Memo()  # diagnostic -> [its JSON or None, (JSON pieces, the lines between) or None]
_CONVERTER = None
_SLOT = "\ue000aoti-line\ue000"  # a line number to fill in; json.dumps writes it as an escape
_COMPACT = (",", ":")  # no blank after each separator: 7% of a dense file's 4.8 MB report


def encoded(d: types.Diagnostic) -> str:
    """The diagnostic as JSON, as pygls would write it (lsprotocol's converter)."""
    hit = _json_of(d) or _JSON.put(d, [None, None])  # a Moved holds its own
    if hit[0] is None:
        if hit[1] is not None:
            parts, lines = hit[1]
            hit[0] = _format_of(parts) % tuple(lines)
        else:
            try:  # data that is not plain JSON fails here (_not_plain) and takes the converter
                hit[0] = _ENCODE(_unstructure(d, False))
            except TypeError:
                hit[0] = json.dumps(_converter().unstructure(d), separators=_COMPACT)
    return hit[0]


class Pieces(list):
    """A diagnostic's JSON pieces between its line slots (_template), and the same as one
    %-format, its slots `%d`, made when first written (_format_of): every move of the diagnostic
    shares them, and its JSON is written with its lines in one call, not a join of pieces and
    str(line) each (an Enter early in a dense file writes ~4,000)."""

    __slots__ = ("format",)

    def __init__(self, *args):
        super().__init__(*args)
        self.format = None


def _format_of(parts: Pieces) -> str:
    if parts.format is None:
        parts.format = "%d".join(p.replace("%", "%%") for p in parts)
    return parts.format


def _json_of(d: types.Diagnostic) -> list | None:
    """encoded()'s entry of `d`, where one was made."""
    return d._json if type(d) is Moved else _JSON.get(d)


def _not_plain(value):
    raise TypeError(value)


# one encoder for every diagnostic: json.dumps with any option makes a JSONEncoder per call
_ENCODE = json.JSONEncoder(default=_not_plain, separators=_COMPACT).encode
_STRING = json.encoder.encode_basestring_ascii  # how _ENCODE writes a string (ensure_ascii)


def _unstructure(d: types.Diagnostic, check: bool = True) -> dict:
    """What lsprotocol's converter makes of a diagnostic, written out (cattrs' generic walk
    was most of a dense file's first report); a diagnostic with a field of another shape than
    the server makes goes through the converter. `check`: Diagnostic.data is checked to be
    plain JSON here (else json.dumps checks it as it writes it: encoded)."""
    try:
        out: dict = {"range": _plain_range(d.range), "message": d.message}
        if d.severity is not None:
            out["severity"] = int(d.severity)
        if d.code is not None:
            if not isinstance(d.code, (int, str)):
                raise TypeError(d.code)
            out["code"] = d.code
        if d.code_description is not None:
            out["codeDescription"] = {"href": d.code_description.href}
        if d.source is not None:
            out["source"] = d.source
        if d.tags is not None:
            out["tags"] = [int(t) for t in d.tags]
        if d.related_information is not None:
            out["relatedInformation"] = [{"location": {"uri": r.location.uri, "range": _plain_range(r.location.range)},
                                          "message": r.message} for r in d.related_information]
        if d.data is not None:
            if check and not _is_plain(d.data):
                raise TypeError(d.data)
            out["data"] = d.data
        return out
    except (TypeError, AttributeError):
        return _converter().unstructure(d)


def _plain_range(r: types.Range) -> dict:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}


def _is_plain(value) -> bool:
    """JSON data as the server builds Diagnostic.data: dicts, lists, strings, numbers, booleans."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(map(_is_plain, value))
    return value is None or type(value) in (str, int, float, bool)


def _converter():
    global _CONVERTER
    if _CONVERTER is None:
        from lsprotocol import converters

        _CONVERTER = converters.get_converter()
    return _CONVERTER


def report_json(items: list[types.Diagnostic]) -> str:
    return "[" + ",".join(map(encoded, items)) + "]"


_LINE_KEY = re.compile(r'"line":(\d+)')  # a key: inside a JSON string its quotes are escaped


def _cut(d: types.Diagnostic, text: str, uri: str) -> tuple[list[str], list[int]] | None:
    """_template's pieces found in the JSON text by its `"line":` keys, none read back
    (json.loads of each diagnostic was most of the first Enter before many findings); None
    where the keys are not the lines the diagnostic names, in the same order."""
    marks: list[tuple[int, bool]] = []  # (line, whether this file's: a slot), in the JSON's order

    def rng(r: types.Range, here: bool) -> None:
        marks.append((r.start.line, here))
        marks.append((r.end.line, here))

    rng(d.range, True)
    for r in d.related_information or ():
        rng(r.location.range, r.location.uri == uri)
    _data_marks(d.data, marks, False)
    keys = list(_LINE_KEY.finditer(text))
    if len(keys) != len(marks) or any(int(k.group(1)) != line for k, (line, _) in zip(keys, marks)):
        return None
    parts, lines, at = Pieces(), [], 0
    for k, (line, here) in zip(keys, marks):
        if here:
            parts.append(text[at:k.start(1)])
            lines.append(line)
            at = k.end(1)
    parts.append(text[at:])
    return (parts, lines) if lines == _lines_of(d, uri) else None


def _data_marks(value, marks: list, here: bool) -> None:
    """The lines in Diagnostic.data, in its JSON's order; an edit's are slots unless it names a uri."""
    if isinstance(value, dict):
        if "range" in value and "newText" in value:
            here = "uri" not in value
        for k, x in value.items():
            if k == "line" and type(x) is int:
                marks.append((x, here))
            else:
                _data_marks(x, marks, here)
    elif isinstance(value, list):
        for x in value:
            _data_marks(x, marks, here)


def _template(d: types.Diagnostic, uri: str) -> tuple[list[str], list[int]]:
    """(JSON pieces, the line numbers between them): the lines `_move_lines` moves, as slots."""
    hit = _json_of(d)
    if hit is not None and hit[1] is not None:
        return hit[1]
    found = _cut(d, encoded(d), uri)
    if found is not None:
        if hit is not None:
            hit[1] = found
        return found
    plain = json.loads(encoded(d))  # a copy: its lines are replaced by slots below
    lines: list[int] = []

    def slot(pos: dict) -> None:
        lines.append(pos["line"])
        pos["line"] = _SLOT

    def slot_range(r: dict) -> None:
        slot(r["start"])
        slot(r["end"])

    slot_range(plain["range"])
    for r in plain.get("relatedInformation") or ():
        if r["location"]["uri"] == uri:
            slot_range(r["location"]["range"])
    for e in _edits(plain.get("data")):
        if "uri" not in e:
            slot_range(e["range"])
    parts = Pieces(json.dumps(plain, separators=_COMPACT).split(json.dumps(_SLOT)))
    if len(parts) != len(lines) + 1:  # the marker inside a message: no slots, JSON made anew
        raise ValueError("line slots")
    if hit is not None:
        hit[1] = (parts, lines)
    return parts, lines
