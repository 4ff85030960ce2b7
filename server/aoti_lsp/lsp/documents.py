"""Open documents: our own copy of the text and an incrementally reparsed tree.

pygls applies each change to its own copy before our handler runs, so we keep ours and
apply the same changes, turning LSP ranges into byte offsets (positions.py) for tree.edit.
The reparse waits until the tree is asked for: a keystroke that incremental.py settles from
the text alone never pays it (tree-sitter-python reparses the rest of the file when a line's
first token changes: ~80 ms for 20k lines). A document over the size cap (budget.py) is kept
as text only: never parsed, never analysed.
"""

from __future__ import annotations

from lsprotocol import types

from aoti_lsp.analysis import budget
from aoti_lsp.analysis.positions import LineIndex
from aoti_lsp.analysis.source import Source, parse_text, parser

_PARSER = parser()


class Document:
    def __init__(self, uri: str, path: str, text: str, version: int | None):
        self.uri, self.path, self.version = uri, path, version
        self.data = utf8(text)
        self._tree = None  # the last tree parsed, edited (tree.edit) by every change since
        self._stale = True  # the text changed since `_tree` was parsed
        self._lines: LineIndex | None = None
        self.revision = 0  # bumps on every change: part of result cache keys
        self._source: tuple[int, Source] | None = None

    @property
    def tree(self):
        """The tree of the current text, reparsed now (incrementally) if an edit is pending."""
        if self.too_large:
            return None
        if self._stale:
            self._tree = _PARSER.parse(parse_text(self.data), self._tree) if self._tree is not None else \
                _PARSER.parse(parse_text(self.data))
            self._stale = False
        return self._tree

    @property
    def too_large(self) -> str | None:
        """Why this document is not analysed (None: it is)."""
        return budget.too_large(len(self.data))

    @property
    def lines(self) -> LineIndex:
        if self._lines is None:
            self._lines = LineIndex(self.data)
        return self._lines

    def apply(self, changes, version: int | None, encoding: str) -> None:
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                self._edit(change.range, change.text, encoding)
            else:  # whole-document change
                self.data = utf8(change.text)
                self._tree = None
                self._lines = None
        if self.too_large:
            self._tree = None
        self._stale = True
        self.revision += 1
        self.version = version

    def _edit(self, rng: types.Range, text: str, encoding: str) -> None:
        lines = self.lines
        start = lines.offset(rng.start.line, rng.start.character, encoding)
        end = max(start, lines.offset(rng.end.line, rng.end.character, encoding))
        new = utf8(text)
        old = self.data
        self.data = old[:start] + new + old[end:]
        self._lines = lines.edited(start, end, new, self.data)
        if self._tree is None:
            return
        if old[start - 1 : start] == b"\r" or b"\r" in new:
            # the parser sees a lone "\r" as "\n" (parse_text): a "\r" that an edit joins to a
            # "\n" changes a byte outside the edit, so parse again, whole
            self._tree = None
            return
        start_point, old_end_point = lines.point(start), lines.point(end)
        new_end_point = self._lines.point(start + len(new))
        self._tree.edit(
            start_byte=start, old_end_byte=end, new_end_byte=start + len(new),
            start_point=start_point, old_end_point=old_end_point, new_end_point=new_end_point,
        )

    def source(self) -> Source:
        """This version as a Source (one per revision: the summary's names and facts then serve
        the check too, engine.analyze); its tree comes from this document when first asked for."""
        cached = self._source
        if cached is not None and cached[0] == self.revision:
            return cached[1]
        src = self._new_source()
        self._source = (self.revision, src)
        return src

    def _new_source(self) -> Source:
        # a copy (O(1), shared nodes): the next change edits this document's tree in place, and a
        # result kept past that change (incremental.py) may still build a lazy fix from its own
        src = Source(self.data, self.path, tree_from=(lambda: self.tree.copy()) if not self.too_large else None)
        if not self.too_large:  # one line index per text (cached_property slot): diagnostics need it too
            src.__dict__["lines"] = self.lines
        return src


def utf8(text: str) -> bytes:
    """A lone surrogate (JSON allows "\\ud800") becomes U+FFFD, one unit in every encoding the
    client may count in: the document still opens, its positions still line up."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")
