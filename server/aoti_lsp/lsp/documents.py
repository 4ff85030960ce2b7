"""Open documents: our own copy of the text and an incrementally reparsed tree.

pygls applies each change to its own copy before our handler runs, so we keep ours and
apply the same changes, turning LSP ranges into byte offsets (positions.py) for tree.edit.
"""

from __future__ import annotations

from lsprotocol import types

from aoti_lsp.positions import LineIndex
from aoti_lsp.source import Source, parser

_PARSER = parser()


class Document:
    def __init__(self, uri: str, path: str, text: str, version: int | None):
        self.uri, self.path, self.version = uri, path, version
        self.data = text.encode("utf-8")
        self.tree = _PARSER.parse(self.data)
        self._lines: LineIndex | None = None

    @property
    def lines(self) -> LineIndex:
        if self._lines is None:
            self._lines = LineIndex(self.data)
        return self._lines

    def apply(self, changes, version: int | None, encoding: str) -> None:
        edited = False
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                self._edit(change.range, change.text, encoding)
                edited = True
            else:  # whole-document change
                self.data = change.text.encode("utf-8")
                self.tree = _PARSER.parse(self.data)
                self._lines = None
                edited = False
        if edited:
            self.tree = _PARSER.parse(self.data, self.tree)
        self.version = version

    def _edit(self, rng: types.Range, text: str, encoding: str) -> None:
        lines = self.lines
        start = lines.offset(rng.start.line, rng.start.character, encoding)
        end = max(start, lines.offset(rng.end.line, rng.end.character, encoding))
        new = text.encode("utf-8")
        start_point, old_end_point = lines.point(start), lines.point(end)
        if b"\n" in new:
            new_end_point = (start_point[0] + new.count(b"\n"), len(new) - new.rfind(b"\n") - 1)
        else:
            new_end_point = (start_point[0], start_point[1] + len(new))
        self.data = self.data[:start] + new + self.data[end:]
        self._lines = lines.edited(start, end, new, self.data)
        self.tree.edit(
            start_byte=start, old_end_byte=end, new_end_byte=start + len(new),
            start_point=start_point, old_end_point=old_end_point, new_end_point=new_end_point,
        )

    def source(self) -> Source:
        src = Source(self.data, self.path, tree=self.tree)
        if self._lines is not None:
            src.__dict__["lines"] = self._lines  # share the line index (cached_property slot)
        return src
