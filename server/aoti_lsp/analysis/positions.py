"""The one place where positions change units.

tree-sitter counts UTF-8 bytes, libcst counts code points, and an LSP client counts in the
encoding negotiated at initialize (UTF-8, UTF-16 or UTF-32). Everything inside aoti-lsp
is a byte offset; conversion happens here and nowhere else.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from operator import add

from aoti_lsp import lazyre

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


class LineIndex:
    """Line starts of a UTF-8 buffer. Lines end at b"\\r\\n", b"\\n" or a lone b"\\r", as in Python
    and the LSP spec; line_bytes() leaves the ending out."""

    def __init__(self, data: bytes):
        self.data = data
        self.starts = [0, *_ends(data, 0, len(data))]

    def edited(self, start: int, end: int, new: bytes, data: bytes) -> "LineIndex":
        """The index of `data`: this index's text with bytes [start, end) replaced by `new`.
        Cheaper than rebuilding on every keystroke: only the edited lines are scanned again
        (from the line before, since a "\\r" there and a "\\n" here make one ending)."""
        first = max(self.line_of(start) - 1, 0)
        delta = len(new) - (end - start)
        limit = min(start + len(new) + 2, len(data))  # bytes from here on are old bytes, shifted
        middle = [s for s in _ends(data, self.starts[first], min(limit + 1, len(data))) if s <= limit]
        after = bisect_right(self.starts, limit - delta)
        index = LineIndex.__new__(LineIndex)
        index.data = data
        index.starts = self.starts[: first + 1] + middle + [s + delta for s in self.starts[after:]]
        return index

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def whole_lines(self, start: int, end: int) -> tuple[int, int]:
        """(the start of the line holding `start`, the start of the line after the one holding
        `end`, or the buffer's end): the lines a statement spans, endings included."""
        last = self.line_of(end)
        return self.starts[self.line_of(start)], self.starts[last + 1] if last + 1 < len(self.starts) else len(self.data)

    def line_bytes(self, line: int) -> bytes:
        start = self.starts[line]
        if line + 1 < len(self.starts):
            return self.data[start : self.starts[line + 1]].rstrip(b"\r\n")  # one ending: a line holds no other
        return self.data[start:]

    def point(self, offset: int) -> tuple[int, int]:
        """(row, byte column): tree-sitter's Point."""
        line = self.line_of(offset)
        return line, offset - self.starts[line]

    def position(self, offset: int, encoding: str = UTF16) -> tuple[int, int]:
        """Byte offset -> (line, character) counted in `encoding`."""
        offset = max(0, min(offset, len(self.data)))
        line = self.line_of(offset)
        prefix = self.data[self.starts[line] : offset]
        return line, units(prefix, encoding)

    def offset(self, line: int, character: int, encoding: str = UTF16) -> int:
        """(line, character in `encoding`) -> byte offset. Out-of-range values clamp, as LSP asks."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.data)
        return self.starts[line] + byte_length(self.line_bytes(line), max(character, 0), encoding)

    def codepoint_offset(self, line: int, column: int) -> int:
        """libcst's (1-based line, code-point column) -> byte offset."""
        return self.offset(line - 1, column, UTF32)


_ENDING = lazyre.compile(rb"\r\n?|\n")


def _ends(data: bytes, lo: int, hi: int) -> list[int]:
    """Offsets just after each line ending in data[lo:hi]."""
    if data.find(b"\r", lo, hi) == -1:  # the common case: a split and running sums, all in C
        lines = data[lo:hi].split(b"\n")
        return list(map(add, accumulate(map(len, lines[:-1])), range(lo + 1, lo + len(lines))))
    return [m.end() for m in _ENDING.finditer(data, lo, hi)]


def units(prefix: bytes, encoding: str) -> int:
    if encoding == UTF8 or prefix.isascii():  # one unit per byte in every encoding (C-fast)
        return len(prefix)
    text = prefix.decode("utf-8", errors="replace")
    if encoding == UTF32:
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def byte_length(line: bytes, character: int, encoding: str) -> int:
    """Bytes of `line` covered by the first `character` units; never splits a character."""
    if encoding == UTF8:
        end = min(character, len(line))
        while 0 < end < len(line) and (line[end] & 0xC0) == 0x80:
            end -= 1
        return end
    text = line.decode("utf-8", errors="replace")
    count = 0
    size = 0
    for ch in text:
        step = 2 if encoding == UTF16 and ord(ch) > 0xFFFF else 1
        if count + step > character:
            break
        count += step
        size += len(ch.encode("utf-8"))
    return size
