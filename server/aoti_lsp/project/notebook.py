"""Jupyter notebooks (nbformat 4) as one Python program, as ruff's ruff_notebook does.

The code cells are joined in order into one Python text that every check reads (names flow
from cell to cell). Each cell starts with a marker line (`#%% aoti-lsp cell N`, N the cell's
1-based place among all cells, as ruff numbers them), so a fixed text splits back into cells
by itself and a row maps to (cell, row in cell) without the notebook at hand. IPython lines
(`%magic`, `!shell`, `x = !cmd`, `obj?`) become placeholder lines with the same indentation,
never parsed; cells of another language (a `%%bash` cell, a non-Python `languageId`) and
markdown/raw cells are left out. Writing back splices only the changed cells' `source` values
into the original JSON text: outputs, metadata, execution counts, key order, indentation and
the trailing newline stay byte for byte.
"""

from __future__ import annotations

import json
import os
import re
from json.decoder import scanstring

from aoti_lsp import lazyre
from aoti_lsp.analysis.records import record
from aoti_lsp.analysis.source import SourceError, decode_check

SUFFIX = ".ipynb"
MARK = "#%% aoti-lsp cell {}"
_MARK = lazyre.compile(r"#%% aoti-lsp cell (\d+)\r?")
# cell magics whose body is Python (ruff's list, less the ones it marks as unknown)
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "debug", "prun", "python", "python3", "pypy"}
_ASSIGNED_MAGIC = lazyre.compile(r"[\w.\[\], ]+=\s*[%!]")
_LINE = lazyre.compile(r"[^\n]*\n|[^\n]+$")  # lines split at "\n" only, as cells are
_HELP = lazyre.compile(r"\?{1,2}[\w.]+|[\w.]+\?{1,2}")


class NotebookError(SourceError):
    """Not a notebook aoti-lsp can read (not JSON, not nbformat 4); never rewritten."""


def is_notebook(path: str | None) -> bool:
    return bool(path) and path.endswith(SUFFIX)


@record("index", "text", "masked", "magics")
class Cell:
    """`index`: 0-based place among all cells; `text`: the source as the notebook holds it;
    `masked`: what the checks read; `magics`: placeholder line -> the IPython line."""

    def __init__(self, index: int, text: str, masked: str = "", magics: dict[str, str] | None = None):
        self.index = index
        self.text = text
        self.masked = masked
        self.magics = {} if magics is None else magics


def code_cell(index: int, text: str, language: str | None = "python") -> Cell | None:
    """The cell as the checks read it; None for a cell that is not Python."""
    if language not in (None, "", "python"):
        return None
    lines = text.split("\n")
    head = lines[0].strip()
    if head.startswith("%%") and (head[2:].split() or [""])[0] not in PYTHON_CELL_MAGICS:
        return None  # %%bash, %%html ...: another language
    cell = Cell(index, text)
    out: list[str] = []
    continued = False
    for i, line in enumerate(lines):
        body = line.strip()
        if continued or (_is_magic(body, i) and _at_statement(out)):
            indent = "" if continued else line[: len(line) - len(line.lstrip())]
            placeholder = f"{indent}{'#' if continued else 'pass  #'} aoti-lsp magic {len(cell.magics)}"
            cell.magics[placeholder] = line
            out.append(placeholder)
            continued = body.endswith("\\")
        else:
            out.append(line)
    cell.masked = "\n".join(out)
    return cell


def _is_magic(body: str, row: int) -> bool:
    if body.startswith("%%"):
        return row == 0
    return (body.startswith(("%", "!")) and not body.startswith("!=")) or bool(
        _ASSIGNED_MAGIC.match(body) and not body.startswith("#")) or bool(_HELP.fullmatch(body))


def _at_statement(before: list[str]) -> bool:
    """Whether the next line starts a statement (not inside a string, brackets or a `\\` line)."""
    if not before:
        return True
    import io  # a notebook's magics only (tokenize ~1 ms: a check without notebooks never needs it)
    import tokenize

    try:
        for _ in tokenize.generate_tokens(io.StringIO("\n".join(before) + "\n").readline):
            pass
    except tokenize.TokenError:
        return False
    except (SyntaxError, ValueError):
        return True
    return True


def python_text(cells: list[Cell]) -> str:
    """The program the checks read: each cell after its marker line, with a newline added."""
    return "".join(f"{MARK.format(c.index + 1)}\n{c.masked}\n" for c in cells)


@record("text", "cells", "spans")
class Notebook:
    """`text`: the JSON as read; `spans`: cell index -> where its `source` value is in `text`."""

    def __init__(self, text: str, cells: list[Cell], spans: dict[int, tuple[int, int]]):
        self.text = text
        self.cells = cells
        self.spans = spans

    @property
    def source(self) -> bytes:
        return python_text(self.cells).encode("utf-8")

    def updated(self, python: bytes) -> bytes:
        """The notebook's JSON with the cells changed in `python` (the fixed program)."""
        text = self.text
        changes = sorted(self.changed(python).items(), key=lambda kv: self.spans[kv[0]][0], reverse=True)
        for index, new in changes:
            start, end = self.spans[index]
            text = text[:start] + _encode(new, text, start, end) + text[end:]
        return text.encode("utf-8")

    def changed(self, python: bytes) -> dict[int, str]:
        """cell index -> new source, for each cell whose source `python` changes."""
        parts = split(python.decode("utf-8"))
        if [n - 1 for n, _ in parts] != [c.index for c in self.cells]:
            raise NotebookError("the fixed program no longer splits into the notebook's cells")
        out = {}
        for cell, (_, body) in zip(self.cells, parts):
            body = body[:-1] if body.endswith("\n") else body  # the newline python_text added
            lines = body.split("\n")
            restored = [cell.magics.get(line, line) for line in lines]
            if sum(line in cell.magics for line in lines) != len(cell.magics):
                raise NotebookError(f"a fix changed an IPython line of cell {cell.index + 1}")
            new = "\n".join(restored)
            if new != cell.text:
                out[cell.index] = new
        return out


def split(python: str) -> list[tuple[int, str]]:
    """(cell number, text) per marker of `python`; text before the first marker belongs to it."""
    parts: list[tuple[int, str]] = []
    head: list[str] = []
    for line in _LINE.findall(python):
        m = _MARK.fullmatch(line.rstrip("\n"))
        if m:
            parts.append((int(m.group(1)), "".join(head) if not parts else ""))
            head = []
            continue
        if parts:
            parts[-1] = (parts[-1][0], parts[-1][1] + line)
        else:
            head.append(line)
    return parts


def parse(raw: bytes) -> Notebook:
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except UnicodeDecodeError as exc:
        raise NotebookError(f"not a notebook: not valid UTF-8 at byte {exc.start}, skipped") from None
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not a notebook: invalid JSON at line {exc.lineno}, column {exc.colno} "
                            f"({exc.msg}); skipped, never rewritten") from None
    if not isinstance(data, dict) or data.get("nbformat") != 4 or not isinstance(data.get("cells"), list):
        found = data.get("nbformat") if isinstance(data, dict) else None
        raise NotebookError(f"not a notebook aoti-lsp reads: nbformat 4 with a list of cells expected"
                            f"{f', found nbformat {found}' if found is not None else ''}; skipped")
    language = ((data.get("metadata") or {}).get("language_info") or {}).get("name", "python")
    spans = _source_spans(text)
    cells = []
    for i, raw_cell in enumerate(data["cells"]):
        if language != "python" or not isinstance(raw_cell, dict) or raw_cell.get("cell_type") != "code":
            continue
        source = raw_cell.get("source", "")
        if i not in spans or not isinstance(source, (str, list)):
            continue
        cell_language = ((raw_cell.get("metadata") or {}).get("vscode") or {}).get("languageId", "python")
        cell = code_cell(i, source if isinstance(source, str) else "".join(source), cell_language)
        if cell is not None:
            cells.append(cell)
    return Notebook(text, cells, spans)


def python_of(path: str, data: bytes) -> bytes:
    """What the checks read of the file at `path`: its program when it is a notebook."""
    return parse(data).source if is_notebook(path) else data


def read_program(path: str) -> bytes | None:
    """The program of the file at `path` as the checks read it (a notebook's cells), or None when
    it cannot be read or analysed (missing, binary, not UTF-8, a broken notebook)."""
    try:
        with open(path, "rb") as fh:
            data = python_of(path, fh.read())
        decode_check(data)
        return data
    except (OSError, SourceError):
        return None


def read_notebook(path: str) -> Notebook:
    with open(path, "rb") as fh:
        return parse(fh.read())


def on_disk(path: str, old: bytes, new: bytes) -> tuple[bytes, bytes]:
    """(the file as read, the file to write) for a fix that turned program `old` into `new`."""
    from aoti_lsp.fixes.writes import Skipped

    try:
        nb = read_notebook(path)
    except (OSError, NotebookError) as exc:
        raise Skipped(f"{path}: not fixed: {exc}") from None
    if nb.source != old:
        raise Skipped(f"{path}: changed on disk while it was being fixed, not written")
    try:
        return nb.text.encode("utf-8"), nb.updated(new)
    except NotebookError as exc:
        raise Skipped(f"{path}: not fixed: {exc}") from None


def diff(path: str, old: bytes, new: bytes) -> str:
    """The fix as a unified diff per changed cell (as ruff shows a notebook's)."""
    import difflib  # only here: reporters import this module for every check

    try:
        nb = read_notebook(path)
        changed = nb.changed(new)
    except (OSError, NotebookError) as exc:
        return f"# {path}: cannot show the diff: {exc}\n"
    out = []
    for cell in nb.cells:
        if cell.index in changed:
            out += difflib.unified_diff(_lines(cell.text), _lines(changed[cell.index]),
                                        fromfile=f"a/{path}:cell {cell.index + 1}", tofile=f"b/{path}:cell {cell.index + 1}")
    return "".join(out)


def _lines(text: str) -> list[str]:
    return [line + "\n" for line in text.split("\n")]


def cell_rows(python: bytes) -> list[tuple[int, int] | None]:
    """Per 0-based row of a notebook's program: (cell number, 1-based row in the cell), None
    on a marker line. Rows before the first marker (a fix inserted them) belong to its cell."""
    lines = python.split(b"\n")
    first = next((int(m.group(1)) for line in lines if (m := _MARK.fullmatch(line.decode("utf-8", "replace")))), 1)
    out: list[tuple[int, int] | None] = []
    cell, row, seen = first, 0, False
    for line in lines:
        m = _MARK.fullmatch(line.decode("utf-8", "replace"))
        if m:
            out.append(None)
            cell = int(m.group(1))
            row = row if not seen else 0  # rows above the first marker count in its cell
            seen = True
            continue
        row += 1
        out.append((cell, row))
    return out


_ROWS: dict[int, tuple[bytes, list]] = {}


def cell_of(path: str | None, python: bytes, line: int) -> tuple[int, int] | None:
    """(cell number, 1-based row in it) of 0-based `line` of a notebook's program; None for
    another file."""
    if not is_notebook(path):
        return None
    kept = _ROWS.get(id(python))
    if kept is None or kept[0] is not python:
        if len(_ROWS) > 64:
            _ROWS.clear()
        kept = _ROWS[id(python)] = (python, cell_rows(python))
    rows = kept[1]
    return rows[line] if 0 <= line < len(rows) else None


def where(path: str | None, python: bytes, row: int) -> str:
    """1-based `row` of a file as a report names it: `cell C:L` in a notebook."""
    at = cell_of(path, python, row - 1)
    return f"cell {at[0]}:{at[1]}" if at else str(row)


def message(finding, source, from_cell: int | None = None) -> str:
    """A finding's message in a notebook's terms: `line N` of this notebook as `cell C, line L`,
    and `name.ipynb:N` (a site in another notebook, named by its file name) as `name.ipynb:cell C:L`.
    `from_cell` (the editor, which may not send every cell: its numbers are not the file's): a
    line named from the finding's cell, `line L` there, else `line L of a cell above/below`."""
    text = finding.message
    if "line " in text and is_notebook(source.path):
        def this(m: re.Match) -> str:
            at = cell_of(source.path, source.data, int(m.group(1)) - 1)
            if at is None:
                return m.group(0)
            if from_cell is not None:
                where = "" if at[0] == from_cell else f" of a cell {'above' if at[0] < from_cell else 'below'}"
                return f"line {at[1]}{where}"
            return f"cell {at[0]}, line {at[1]}"

        text = re.sub(r"\bline (\d+)\b", this, text)
    if SUFFIX + ":" in text:
        paths = {os.path.basename(r.path): r.path for r in finding.related if is_notebook(r.path)}

        def other(m: re.Match) -> str:
            path = paths.get(m.group(1))
            try:
                at = cell_of(path, read_notebook(path).source, int(m.group(2)) - 1) if path else None
            except (OSError, NotebookError):
                at = None
            return f"{m.group(1)}:cell {at[0]}:{at[1]}" if at else m.group(0)

        text = re.sub(r"([^\s:()`'\"]+\.ipynb):(\d+)\b", other, text)
    return text


# -- the JSON text: where each cell's `source` value is, and its new value written alike --

_WS = lazyre.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(s: str, i: int) -> int:
    return _WS.match(s, i).end()


def _members(s: str, i: int) -> dict[str, tuple[int, int]]:
    """key -> (start, end) of its value, for the object at s[i] (valid JSON: json.loads said so)."""
    out = {}
    i = _skip(s, i + 1)
    while s[i] != "}":
        key, i = scanstring(s, i + 1)
        i = _skip(s, _skip(s, i) + 1)  # past the colon
        _, end = _DECODER.raw_decode(s, i)
        out[key] = (i, end)
        i = _skip(s, end)
        if s[i] == ",":
            i = _skip(s, i + 1)
    return out


def _items(s: str, i: int) -> list[tuple[int, int]]:
    out = []
    i = _skip(s, i + 1)
    while s[i] != "]":
        _, end = _DECODER.raw_decode(s, i)
        out.append((i, end))
        i = _skip(s, end)
        if s[i] == ",":
            i = _skip(s, i + 1)
    return out


def _source_spans(text: str) -> dict[int, tuple[int, int]]:
    top = _members(text, _skip(text, 0))
    out = {}
    for n, (start, _) in enumerate(_items(text, top["cells"][0])):
        if text[start] == "{":
            span = _members(text, start).get("source")
            if span is not None:
                out[n] = span
    return out


def _encode(new: str, text: str, start: int, end: int) -> str:
    """`new` as a `source` value written like the one at text[start:end] (a string, or a list of
    lines with the same separators), escaping non-ASCII only where the file does."""
    ascii_only = not any(ord(ch) > 127 for ch in text) and "\\u" in text
    if text[start] == '"':
        return json.dumps(new, ensure_ascii=ascii_only)
    lines = _LINE.findall(new)
    if not lines:
        return "[]"
    items = _items(text, start)
    if items:
        lead, trail = text[start + 1 : items[0][0]], text[items[-1][1] : end - 1]
        sep = text[items[0][1] : items[1][0]] if len(items) > 1 else "," + (lead or " ")
    else:  # `[]`: one indentation step below the key, as the file indents
        line_start = text.rfind("\n", 0, start) + 1
        indent = text[line_start : line_start + len(text[line_start:]) - len(text[line_start:].lstrip(" \t"))]
        step = _WS.match(text, text.find("\n") + 1).group(0) if "\n" in text else " "
        lead, trail = "\n" + indent + step, "\n" + indent
        sep = "," + lead
    return "[" + lead + sep.join(json.dumps(line, ensure_ascii=ascii_only) for line in lines) + trail + "]"
