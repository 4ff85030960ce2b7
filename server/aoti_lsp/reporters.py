"""CLI output formats: text (ruff-like), json, sarif (2.1.0), github. Rows and columns
are 1-based; columns count code points, as ruff's do."""

from __future__ import annotations

import json
import os

from aoti_lsp import __version__
from aoti_lsp.fixer import applicable
from aoti_lsp.positions import UTF32
from aoti_lsp.rules import rule_by_code


def _loc(source, offset: int) -> dict:
    line, col = source.lines.position(offset, UTF32)
    return {"row": line + 1, "column": col + 1}


def _rel(path: str) -> str:
    try:
        rel = os.path.relpath(path)
        return path if rel.startswith("..") else rel
    except ValueError:
        return path


def to_json(items) -> list[dict]:
    out = []
    for finding, source in items:
        fix = None
        if finding.fix is not None:
            fix = {
                "applicability": finding.fix.applicability.value,
                "message": finding.fix.title,
                "edits": [
                    {"content": e.text, "location": _loc(source, e.start), "end_location": _loc(source, e.end)}
                    for e in finding.fix.edits
                ],
            }
        rule = rule_by_code(finding.code)
        out.append({
            "code": finding.code,
            "message": finding.message,
            "filename": finding.path,
            "location": _loc(source, finding.start),
            "end_location": _loc(source, finding.end),
            "fix": fix,
            "url": rule.url if rule else None,
            "noqa_row": _loc(source, finding.start)["row"],
        })
    return out


def text(items, color: bool = False) -> str:
    out = []
    for finding, source in items:
        loc = _loc(source, finding.start)
        end = _loc(source, finding.end)
        bold = (lambda s: f"\x1b[1m{s}\x1b[0m") if color else (lambda s: s)
        red = (lambda s: f"\x1b[31m{s}\x1b[0m") if color else (lambda s: s)
        marker = " [*]" if applicable(finding.fix, unsafe=False) else ""
        out.append(f"{bold(_rel(finding.path))}:{loc['row']}:{loc['column']}: {red(finding.code)}{marker} {finding.message}")
        line = source.lines.line_bytes(loc["row"] - 1).decode("utf-8", "replace").rstrip("\r")
        width = len(str(loc["row"]))
        stop = end["column"] if end["row"] == loc["row"] else len(line) + 1
        out.append(f"{' ' * width} |")
        out.append(f"{loc['row']} | {line}")
        out.append(f"{' ' * width} | {' ' * (loc['column'] - 1)}{red('^' * max(1, stop - loc['column']))}")
        if finding.fix is not None:
            out.append(f"{' ' * width} = fix ({finding.fix.applicability.value}): {finding.fix.title}")
        out.append("")
    return "\n".join(out)


def github(items) -> str:
    lines = []
    for finding, source in items:
        loc, end = _loc(source, finding.start), _loc(source, finding.end)
        msg = finding.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        lines.append(
            f"::warning title=aoti-lsp ({finding.code}),file={_rel(finding.path)},line={loc['row']},"
            f"col={loc['column']},endLine={end['row']},endColumn={end['column']}::{finding.code} {msg}"
        )
    return "\n".join(lines)


def sarif(items) -> dict:
    from aoti_lsp.rules import all_rules

    rules = [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": r.explanation},
            "helpUri": r.url,
            "defaultConfiguration": {"level": "warning"},
        }
        for r in all_rules()
    ]
    results = []
    for finding, source in items:
        loc, end = _loc(source, finding.start), _loc(source, finding.end)
        results.append({
            "ruleId": finding.code,
            "level": "warning" if finding.severity.value == "warning" else finding.severity.value.replace("info", "note"),
            "message": {"text": finding.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": _rel(finding.path).replace(os.sep, "/")},
                    "region": {"startLine": loc["row"], "startColumn": loc["column"],
                               "endLine": end["row"], "endColumn": end["column"]},
                }
            }],
        })
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "aoti-lsp", "version": __version__,
                                "informationUri": "https://github.com/aoti-lsp/aoti-lsp", "rules": rules}},
            "results": results,
        }],
    }


def render(fmt: str, items, color: bool = False) -> str:
    if fmt == "json":
        return json.dumps(to_json(items), indent=2, ensure_ascii=False)
    if fmt == "sarif":
        return json.dumps(sarif(items), indent=2, ensure_ascii=False)
    if fmt == "github":
        return github(items)
    return text(items, color)
