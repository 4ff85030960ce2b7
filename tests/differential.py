"""The differential check: every finding of the small inputs (and of a generated file), in a
canonical JSON form, to compare against a golden made by trusted code. Findings are compared
whole: code, message, range, severity, related information, fix and alternative fixes (title,
applicability, edits).

Inputs, each analysed two ways:
- the `--check` path (runner.run, one process, no cache): a project's files summarised, then
  checked with the summaries (the way the server does: summary, then analysis);
- `analyze` alone, no project (the way tests/goldens.py checks a fixture file).
Units: each folder of tests/projects and each project folder of tests/fixtures/<CODE>/ (a
project), each other fixture file (a project of one file), examples/ (a project), and
scripts/bench.py's `generate(sites=300, lines=5000)` (imported by path, written to a scratch
folder). Absolute paths inside results are written relative to the unit's root.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from pathlib import Path

from aoti_lsp.project.config import Config, parse
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.project.files import rooted
from aoti_lsp.analysis.source import Source

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
GOLDEN = TESTS / "golden"
SMALL = GOLDEN / "findings.json"
GENERATED = GOLDEN / "generated.json"
GENERATED_SIZE = {"sites": 300, "lines": 5000}


def units() -> list[tuple[str, Path, list[Path]]]:
    """(name, root folder, Python files) of every small input."""
    out = []
    for folder in sorted(p for p in (TESTS / "projects").iterdir() if p.is_dir()):
        out.append((f"projects/{folder.name}", folder, _py(folder)))
    for code in sorted(p for p in (TESTS / "fixtures").iterdir() if p.is_dir()):
        for item in sorted(code.iterdir()):
            if item.is_dir():
                out.append((f"fixtures/{code.name}/{item.name}", item, _py(item)))
            elif item.suffix == ".py":
                out.append((f"fixtures/{code.name}/{item.name}", code, [item]))
    out.append(("examples", ROOT / "examples", _py(ROOT / "examples")))
    return out


def _py(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def config_for(root: Path) -> Config:
    """The unit's configuration as the CLI would read it (its own pyproject.toml), rooted."""
    pyproject = root / "pyproject.toml"
    cfg = parse(pyproject) if pyproject.is_file() else Config()
    return rooted(cfg, str(root))


def check_unit(root: Path, files: list[Path]) -> dict:
    """{"check": {file: results}, "alone": {file: results}} of one unit."""
    from aoti_lsp.project import runner

    cfg = config_for(root)
    paths = [str(f) for f in files]
    strip = _stripper(root)
    checked = {}
    for path, _, _, findings, errors in runner.run(paths, cfg, ("check", False), 1, scan=paths, root=str(root)):
        checked[strip(os.path.relpath(path, root))] = {"findings": [finding(f, strip) for f in findings],
                                                        "errors": [strip(e) for e in errors]}
    alone = {}
    for f in files:
        result = analyze(Source(f.read_bytes(), str(f)), cfg)
        alone[os.path.relpath(f, root)] = {"findings": [finding(x, strip) for x in result.findings],
                                           "errors": [strip(e) for e in result.errors]}
    return {"check": dict(sorted(checked.items())), "alone": dict(sorted(alone.items()))}


def _stripper(root: Path):
    prefixes = sorted({str(root), os.path.realpath(root)}, key=len, reverse=True)

    def strip(value):
        if not isinstance(value, str):
            return value
        for p in prefixes:
            value = value.replace(p + os.sep, "<root>/").replace(p, "<root>")
        return value

    return strip


def finding(f, strip) -> dict:
    return {
        "code": f.code, "message": strip(f.message), "range": [f.start, f.end], "path": strip(f.path),
        "severity": f.severity.value, "deprecated": f.deprecated, "unnecessary": f.unnecessary,
        "related": [[r.start, r.end, strip(r.message), strip(r.path)] for r in f.related],
        "fix": fix(f.fix, strip),
        "alternatives": [fix(a, strip) for a in f.alternatives],
    }


def fix(x, strip) -> dict | None:
    if x is None:
        return None
    return {"title": strip(x.title), "applicability": x.applicability.value, "snippet": x.snippet,
            "edits": [[e.start, e.end, e.text, strip(e.path)] for e in x.edits]}


def small() -> dict:
    return {name: check_unit(root, files) for name, root, files in units()}


# -- the generated file ----------------------------------------------------------------------
def generated_source(sites: int = GENERATED_SIZE["sites"], lines: int = GENERATED_SIZE["lines"]) -> str:
    spec = importlib.util.spec_from_file_location("_aoti_bench", ROOT / "scripts" / "bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.generate(sites=sites, lines=lines)[0]


def check_text(text: str) -> dict:
    """The results of one generated file (`big.py`, alone in a scratch folder)."""
    with tempfile.TemporaryDirectory(prefix="aoti-differential-") as tmp:
        path = Path(tmp) / "big.py"
        path.write_text(text, "utf-8")
        return check_unit(Path(tmp), [path])


def generated(sites: int = GENERATED_SIZE["sites"], lines: int = GENERATED_SIZE["lines"]) -> tuple[str, dict]:
    """(sha256 of the generated source, its results)."""
    text = generated_source(sites, lines)
    return sha(text), check_text(text)


# -- canonical form and comparison ------------------------------------------------------------
def dumps(value) -> str:
    """Sorted JSON, one finding a line (diffs stay readable, the file small)."""
    return _dump(value, 0) + "\n"


def _dump(value, depth: int) -> str:
    if not isinstance(value, dict) or not value or depth >= 4:
        if isinstance(value, list) and value and isinstance(value[0], dict) and depth < 5:
            pad = " " * (depth + 1)
            return "[\n" + ",\n".join(pad + _dump(v, 9) for v in value) + "\n" + " " * depth + "]"
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    pad = " " * (depth + 1)
    items = [f"{pad}{json.dumps(k)}: {_dump(v, depth + 1)}" for k, v in sorted(value.items())]
    return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"


def sha(value) -> str:
    text = value if isinstance(value, str) else dumps(value)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def differences(want: dict, got: dict, limit: int = 20) -> list[str]:
    """Readable differences (the first `limit`): which unit, which file, which finding."""
    out = []
    for name in sorted(set(want) | set(got)):
        a, b = want.get(name), got.get(name)
        if a == b:
            continue
        if a is None or b is None:
            out.append(f"{name}: {'missing' if b is None else 'new'}")
            continue
        for how in ("check", "alone"):
            for path in sorted(set(a[how]) | set(b[how])):
                x, y = a[how].get(path), b[how].get(path)
                if x == y:
                    continue
                if x is None or y is None:
                    out.append(f"{name} [{how}] {path}: {'missing' if y is None else 'new'}")
                    continue
                if x["errors"] != y["errors"]:
                    out.append(f"{name} [{how}] {path}: errors {x['errors']} != {y['errors']}")
                fx, fy = x["findings"], y["findings"]
                for i in range(max(len(fx), len(fy))):
                    p = fx[i] if i < len(fx) else None
                    q = fy[i] if i < len(fy) else None
                    if p != q:
                        out.append(f"{name} [{how}] {path} finding {i}:\n  want {json.dumps(p)}\n  got  {json.dumps(q)}")
                        break
    return out[:limit]
