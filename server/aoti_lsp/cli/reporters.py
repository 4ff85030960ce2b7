"""CLI output formats: text (ruff-like), json, sarif (2.1.0), github. Rows and columns
are 1-based; columns count code points, as ruff's do. Every format takes the severity from
the rule class (findings.severity_of), and shows display-only fixes (editor snippets, never
applied by --fix) as such."""

from __future__ import annotations

import os
from functools import lru_cache

from aoti_lsp import __version__, lazyre
from aoti_lsp.analysis.findings import Severity, applicable, severity_of, tier
from aoti_lsp.analysis.records import record, set_field
from aoti_lsp.analysis.positions import UTF32, LineIndex
from aoti_lsp.analysis.source import absolute
from aoti_lsp.rules import rule_by_code


@record("path", "row", "column", "message", frozen=True)
class Note:
    """Something about a file that is not a finding (a syntax error): ruff's E999 visibility."""

    def __init__(self, path: str, row: int | None, column: int | None, message: str):
        set_field(self, "path", path)
        set_field(self, "row", row)  # 1-based, None: the whole file
        set_field(self, "column", column)
        set_field(self, "message", message)


def _notebook():
    from aoti_lsp.project import notebook  # here: a report of .py files needs it not (~0.3 ms)

    return notebook


def _in_notebook(path: str | None) -> bool:
    """notebook.is_notebook, without importing notebook.py."""
    return bool(path) and path.endswith(".ipynb")


def _loc(source, offset: int) -> dict:
    line, col = source.lines.position(offset, UTF32)
    return _at(source.path, source.lines.data, line, col)


def _at(path, data: bytes, line: int, col: int) -> dict:
    """1-based row and column; in a notebook, the row in its cell and the cell (notebook.py)."""
    cell = _notebook().cell_of(path, data, line) if _in_notebook(path) else None
    if cell is not None:
        return {"row": cell[1], "column": col + 1, "cell": cell[0]}
    return {"row": line + 1, "column": col + 1}


def _where(loc: dict) -> str:
    return f"{'cell ' + str(loc['cell']) + ':' if 'cell' in loc else ''}{loc['row']}:{loc['column']}"


def where(source, offset: int) -> str:
    """`row:column` of an offset as the text output writes it (`cell N:row:column` in a notebook)."""
    return _where(_loc(source, offset))


def _message(finding, source) -> str:
    if _in_notebook(source.path) or ".ipynb:" in finding.message:  # else notebook.message leaves it as is
        return _notebook().message(finding, source)
    return finding.message


def _rel(path: str) -> str:
    return _rel_from(path, os.getcwd())  # once per file and folder: a report names a file per finding


@lru_cache(maxsize=4096)
def _rel_from(path: str, cwd: str) -> str:
    try:
        rel = os.path.relpath(path, cwd)
        return path if rel.startswith("..") else rel
    except ValueError:
        return path


@lru_cache(maxsize=64)
def _lines_of(path: str) -> LineIndex | None:
    """Lines of another file a related location points into; None for a non-text file (a .pt2)."""
    if not path.endswith((".py", ".pyi", ".ipynb")):
        return None
    notebook = _notebook()
    try:
        with open(path, "rb") as fh:
            return LineIndex(notebook.python_of(path, fh.read()))
    except (OSError, notebook.NotebookError):
        return None


def related(finding, source) -> list[dict]:
    """Related locations as {message, filename (absolute), location, end_location}; location
    is None when the target is not a text file (a package's metadata)."""
    out = []
    for r in finding.related:
        path = absolute(r.path or finding.path)
        lines = source.lines if r.path is None or path == absolute(finding.path) else _lines_of(path)
        loc = end = None
        if lines is not None:
            (l1, c1), (l2, c2) = lines.position(r.start, UTF32), lines.position(r.end, UTF32)
            loc, end = _at(path, lines.data, l1, c1), _at(path, lines.data, l2, c2)
        out.append({"message": r.message, "filename": path, "location": loc, "end_location": end})
    return out


def _edit(e, finding, source) -> dict:
    """One fix edit; an edit in another file (a migration edits every file of its artifact)
    carries that file's name and positions."""
    if e.path is None:
        lines, path = source.lines, finding.path
    else:
        lines, path = _lines_of(absolute(e.path)), e.path
    if lines is None:
        return {"content": e.text, "filename": absolute(path), "location": None, "end_location": None}
    (l1, c1), (l2, c2) = lines.position(e.start, UTF32), lines.position(e.end, UTF32)
    loc, end = _at(path, lines.data, l1, c1), _at(path, lines.data, l2, c2)
    cell = loc.pop("cell", None)
    end.pop("cell", None)
    return {"content": e.text, "filename": absolute(path), **({"cell": cell} if cell else {}),
            "location": loc, "end_location": end}


def to_json(items, notes=()) -> list[dict]:
    out = []
    for finding, source in items:
        fix = None
        built = finding.fix.resolve() if finding.fix is not None else None  # a lazy fix's edits, built here
        if built is not None:
            fix = {
                "applicability": built.kind,
                "message": built.title,
                "edits": [_edit(e, finding, source) for e in built.plain_edits()],
            }
        rule = rule_by_code(finding.code)
        loc, end = _loc(source, finding.start), _loc(source, finding.end)
        cell = loc.pop("cell", None)  # a notebook's: ruff's `cell`, rows counted in it
        end.pop("cell", None)
        out.append({
            **({"cell": cell} if cell else {}),
            "code": finding.code,
            "severity": severity_of(finding).value,
            "message": _message(finding, source),
            "filename": absolute(finding.path),
            "location": loc,
            "end_location": end,
            "fix": fix,
            "url": rule.url if rule else None,
            "noqa_row": loc["row"],
            "related": related(finding, source),
        })
    for n in notes:  # ruff's shape for a syntax error: no code
        loc = {"row": n.row, "column": n.column} if n.row else None
        out.append({"code": None, "severity": "warning", "message": n.message, "filename": absolute(n.path),
                    "location": loc, "end_location": loc, "fix": None, "url": None, "noqa_row": None, "related": []})
    return out


_COLORS = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}


def text(items, color: bool = False, unsafe: bool = False) -> str:
    def paint(code, s):
        return f"\x1b[{code}m{s}\x1b[0m" if color else s

    out = []
    places = _Places()  # what each finding asks of its file, read once per file (~4,000 findings)
    for finding, source in items:
        rel = places.rel(finding.path)
        (row, col, cell), (end_row, end_col, _) = places.at(source, finding.start), places.at(source, finding.end)
        loc = f"{'cell ' + str(cell) + ':' if cell is not None else ''}{row}:{col}"
        sev = severity_of(finding)
        colour = _COLORS[sev]
        marker = " [*]" if applicable(finding.fix, unsafe) else ""  # what this --fix would apply
        out.append(f"{paint('1', rel)}:{loc}: {paint(colour, finding.code)}{marker} "
                   f"{paint(colour, sev.value)}: {_message(finding, source)}")
        line = places.line_text(source, finding.start)
        width = len(str(row))
        stop = end_col if end_row == row else len(line) + 1
        pad = " " * width
        out.append(f"{pad} |")
        out.append(f"{row} | {line}")
        out.append(f"{pad} | {' ' * (col - 1)}{paint(colour, '^' * max(1, stop - col))}")
        if finding.related:
            for where, message in places.notes(finding, source):
                out.append(f"{pad} = note: {where}: {message}")
        if finding.fix is not None:
            out.append(f"{pad} = fix ({tier(finding.fix.applicability, finding.fix.snippet)}): {finding.fix.title}")
        out.append("")
    return "\n".join(out)


class _Places:
    """(row, column, cell or None) of offsets and the text of their lines, as _loc says, with
    what each file's look-ups need (its line starts, whether it is a notebook) read once."""

    def __init__(self):
        self._files: dict[int, tuple] = {}
        self._paths: dict[str, str] = {}  # path -> absolute
        self._rels: dict[str, str] = {}  # path -> as the report names it

    def _file(self, source) -> tuple:
        kept = self._files.get(id(source))
        if kept is None or kept[0] is not source:
            lines = source.lines
            kept = self._files[id(source)] = (source, lines, _in_notebook(source.path))
        return kept

    def at(self, source, offset: int) -> tuple[int, int, int | None]:
        _, lines, in_notebook = self._file(source)
        if in_notebook:
            loc = _loc(source, offset)
            return loc["row"], loc["column"], loc.get("cell")
        line, col = lines.position(offset, UTF32)  # positions convert in one place
        return line + 1, col + 1, None

    def notes(self, finding, source) -> list[tuple[str, str]]:
        """(where, message) of each related location, as `related` says them."""
        here = self._absolute(finding.path)
        if any(r.path is not None and self._absolute(r.path) != here for r in finding.related):
            return [(_rel(r["filename"]) + (f":{_where(r['location'])}" if r["location"] else ""), r["message"])
                    for r in related(finding, source)]  # another file's lines: read as related() does
        rel = self.rel(here)
        out = []
        for r in finding.related:
            row, col, cell = self.at(source, r.start)
            out.append((f"{rel}:{'cell ' + str(cell) + ':' if cell is not None else ''}{row}:{col}", r.message))
        return out

    def _absolute(self, path: str) -> str:
        found = self._paths.get(path)
        if found is None:
            found = self._paths[path] = absolute(path)
        return found

    def rel(self, path: str) -> str:
        """_rel(path), once per path."""
        found = self._rels.get(path)
        if found is None:
            found = self._rels[path] = _rel(path)
        return found

    def line_text(self, source, offset: int) -> str:
        _, lines, _ = self._file(source)
        return lines.line_bytes(lines.line_of(offset)).decode("utf-8", "replace").rstrip("\r")


def _data(s: str) -> str:
    """A workflow command's message (GitHub's escapeData)."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    """A workflow command's property value (GitHub's escapeProperty): a file name holding
    `,` or `::` must not end the property list or start a command of its own."""
    return _data(s).replace(":", "%3A").replace(",", "%2C")


_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def github(items, notes=()) -> str:
    lines = []
    for finding, source in items:
        loc, end = _loc(source, finding.start), _loc(source, finding.end)
        lines.append(
            f"::{_GITHUB_LEVEL[severity_of(finding)]} title={_prop(f'aoti-lsp ({finding.code})')},"
            f"file={_prop(_rel(finding.path))},line={loc['row']},"
            f"col={loc['column']},endLine={end['row']},endColumn={end['column']}::"
            f"{_data(('cell ' + str(loc['cell']) + ': ' if 'cell' in loc else '') + f'{finding.code} {_message(finding, source)}')}"
        )
    for n in notes:
        where = f",line={n.row},col={n.column}" if n.row else ""
        lines.append(f"::warning title=aoti-lsp,file={_prop(_rel(n.path))}{where}::{_data(n.message)}")
    return "\n".join(lines)


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _sarif_location(filename: str, loc: dict | None, end: dict | None, message: str | None = None) -> dict:
    physical = {"artifactLocation": {"uri": _rel(filename).replace(os.sep, "/")}}
    if loc is not None:
        physical["region"] = {"startLine": loc["row"], "startColumn": loc["column"],
                              "endLine": end["row"], "endColumn": end["column"]}
    out = {"physicalLocation": physical}
    if loc is not None and "cell" in loc:  # a notebook: rows count in this cell
        out["properties"] = {"cell": loc["cell"]}
    if message is not None:
        out["message"] = {"text": message}
    return out


def sarif(items, notes=()) -> dict:
    from aoti_lsp.rules import all_rules

    rules = [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": r.explanation},
            "helpUri": r.url,
            "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity]},
        }
        for r in all_rules()
    ]
    results = []
    for finding, source in items:
        loc, end = _loc(source, finding.start), _loc(source, finding.end)
        result = {
            "ruleId": finding.code,
            "level": _SARIF_LEVEL[severity_of(finding)],
            "message": {"text": _message(finding, source)},
            "locations": [_sarif_location(finding.path, loc, end)],
        }
        rel = related(finding, source)
        if rel:
            result["relatedLocations"] = [
                {"id": i, **_sarif_location(r["filename"], r["location"], r["end_location"], r["message"])}
                for i, r in enumerate(rel)
            ]
        results.append(result)
    notifications = [
        {"level": "warning", "message": {"text": n.message},
         "locations": [_sarif_location(n.path, {"row": n.row, "column": n.column} if n.row else None,
                                       {"row": n.row, "column": n.column} if n.row else None)]}
        for n in notes
    ]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "aoti-lsp", "version": __version__,
                                "informationUri": "https://github.com/aoti-lsp/aoti-lsp", "rules": rules}},
            "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
            "results": results,
        }],
    }


def render(fmt: str, items, color: bool = False, notes=(), unsafe: bool = False) -> str:
    if fmt in ("json", "sarif"):
        import json  # here: the package imports re (~7 ms of a text run)

        data = to_json(items, notes) if fmt == "json" else sarif(items, notes)
        return shown(json.dumps(data, indent=2, ensure_ascii=False), in_json=True)
    if fmt == "github":
        return shown(github(items, notes))
    return shown(text(items, color, unsafe))


_LONE = lazyre.compile("[\ud800-\udfff]")  # compiled for text that is not ASCII only (~0.25 ms)


def shown(s: str, in_json: bool = False) -> str:
    """`s` as UTF-8 can carry it: a lone surrogate (a string literal `'\\ud800'`, a file name
    that is not UTF-8) is written as the escape the source spells, `\\ud800`. In JSON (where
    ensure_ascii=False left it raw, inside a string) the backslash is escaped too, so a reader
    gets the same text, not the surrogate back."""
    if s.isascii() or not _LONE.search(s):
        return s
    slash = "\\\\" if in_json else "\\"
    return _LONE.sub(lambda m: f"{slash}u{ord(m.group()):04x}", s)
