"""What a fix must keep of a file's layout, applied where edits are applied (not in each fix):
the BOM stays first, a shebang and an encoding cookie stay on lines 1-2, inserted lines take the
file's line ending. And Python's own compiler decides whether a file may be rewritten."""

from __future__ import annotations

import re
import warnings

from aoti_lsp import lazyre
from aoti_lsp.analysis.findings import Edit

BOM = b"\xef\xbb\xbf"
# PEP 263: a comment on line 1 or 2 naming the encoding
COOKIE = lazyre.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")
_ENDING = lazyre.compile(rb"\r\n?|\n")


def line_ending(data: bytes) -> str:
    """The file's first line ending (ruff does the same); "\\n" for a one-line file."""
    found = _ENDING.search(data)
    return found.group().decode() if found else "\n"


def header_end(data: bytes) -> int:
    """Offset after the BOM, a shebang line and encoding-cookie lines: nothing goes before it."""
    start = len(BOM) if data.startswith(BOM) else 0
    lines, at = [], start
    for _ in range(2):
        found = _ENDING.search(data, at)
        end = found.end() if found else len(data)
        lines.append((data[at : found.start() if found else len(data)], end))
        at = end
    (first, after_first), (second, after_second) = lines
    if COOKIE.match(second) and (not first.strip() or first.lstrip().startswith(b"#")):
        return after_second  # Python reads a cookie on line 2 only under a comment or blank line
    if first.startswith(b"#!") or COOKIE.match(first):
        return after_first
    return start


_LAST: list = [(None, None)]  # (data, its layout) of the last file adapted: a file's fixes come together


def _layout(data: bytes) -> tuple[str, int, int]:
    """(line ending, header end, BOM length) of `data`."""
    last, layout = _LAST[0]
    if last is not data:
        layout = (line_ending(data), header_end(data), len(BOM) if data.startswith(BOM) else 0)
        _LAST[0] = (data, layout)
    return layout


def adapt(data: bytes, edits) -> list[Edit]:
    """`edits` as they should land in `data`: insertions above the header moved below it, the BOM
    never touched, every line break in inserted text written as the file's own."""
    eol, head, bom = _layout(data)
    out = []
    for e in edits:
        start, end, text = e.start, e.end, e.text
        if eol != "\n" and ("\n" in text or "\r" in text):
            text = re.sub(r"\r\n?|\n", eol, text)
        if start == end and start < head:
            start = end = head
            if head > bom and data[head - 1 : head] not in (b"\n", b"\r"):
                text = eol + text  # a header line without an ending of its own
        elif start < bom:
            start, end = bom, max(end, bom)
        out.append(e if (start, end, text) == (e.start, e.end, e.text) else Edit(start, end, text))
    return out


def not_compiled(path: str, why: str) -> str:
    """Why a file was left as it is: this Python rejects it (its version named: a file of newer
    syntax than the Python running aoti-lsp, a 3.12 f-string under 3.11, compiles where the project runs)."""
    import sys

    return f"{path}: not fixed: Python {sys.version_info[0]}.{sys.version_info[1]} cannot compile it ({why})"


def compile_error(data: bytes, path: str = "<string>") -> str | None:
    """Why Python would not compile `data` (None: it compiles). IndentationError, TabError and
    nesting too deep are caught here, where tree-sitter's error recovery lets them through.
    A full compile, not only a parse: `return` outside a function, a name used before its
    `global` are the compiler's errors (the code object is built, never run)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings (invalid escapes) are not ours to print
            compile(data, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"{type(exc).__name__}: {exc.msg}{where}"
    except (RecursionError, MemoryError):
        return "nested too deeply for Python's compiler"
    except ValueError as exc:  # e.g. NUL bytes
        return f"ValueError: {exc}"
    return None
