"""The first analysis of a large file from its relevant statements (outline.py) equals a full
analysis. Checked piece by piece against tree-sitter and names.py on every test input, the
bench's generated file, random line edits of the fixtures, and torch's own sources (when torch
is installed: no import, its files are read):
- statements.read finds exactly tree-sitter's top-level statements;
- a function's sure locals are locals (names.py's scope), never a name it reads from the module;
- a simple module-level statement's binds hold every name names.py says it binds;
- the statements kept hold every relevant one (incremental.py, from the whole tree);
- the findings equal a full analysis's (with the project, as the server runs it);
- the server's first diagnostics of a large file come from it, equal a fresh full analysis's, and
  are replaced by a full analysis once typing pauses."""

from __future__ import annotations

import importlib.util
import random
from bisect import bisect_right
from pathlib import Path

import differential as d
import inprocess
import pytest

from aoti_lsp.analysis import incremental, outline, statements
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.lsp.documents import Document
from aoti_lsp.analysis.names import Scope, _read_statement, read_scope
from aoti_lsp.project.project import Project, summarize
from aoti_lsp.analysis.source import Source, parse_text, parser

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


def _torch_files(step: int = 4) -> list[Path]:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return []
    files = sorted(Path(list(spec.submodule_search_locations)[0]).rglob("*.py"))
    return [f for f in files[::step] if f.stat().st_size < 400_000]


def _inputs() -> list[tuple[str, bytes]]:
    out = [(str(p.relative_to(ROOT)), p.read_bytes()) for p in sorted(TESTS.rglob("*.py"))
           if ("fixtures" in p.parts or "projects" in p.parts) and "editors" not in p.parts]
    out += [(str(p.relative_to(ROOT)), p.read_bytes()) for p in sorted((ROOT / "examples").rglob("*.py"))]
    out.append(("generated", d.generated_source(300, 5000).encode()))
    return out


def _mutated(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(lines))
        op = rng.randrange(4)
        if op == 0:
            lines.insert(i, lines[i])
        elif op == 1 and len(lines) > 1:
            del lines[i]
        elif op == 2:
            lines[i] = lines[i].lstrip()
        else:
            lines[i] = b"    " + lines[i]
    return b"\n".join(lines)


def _statements(tree) -> list:
    """The top-level statements, those after a `;` on their line joined to the one before (as
    statements.read has them: a statement starts a line)."""
    out = []
    for c in tree.root_node.named_children:
        if c.type == "comment":
            continue
        if out and c.start_point.row == out[-1][-1].end_point.row:
            out[-1].append(c)
        else:
            out.append([c])
    return out


def _tree_starts(data: bytes):
    tree = parser().parse(parse_text(data))
    if tree.root_node.has_error:
        return None, tree
    return [group[0].start_byte for group in _statements(tree)], tree


def _check_layout(name: str, data: bytes) -> bool:
    want, tree = _tree_starts(data)
    if want is None or b"\r" in data:
        return False
    layout = statements.read(data)
    assert layout is not None, name
    # tree-sitter also takes a statement indented for no reason (Python would not: an
    # IndentationError); statements.read keeps it with the one before
    assert layout.starts == [s for s in want if data.rfind(b"\n", 0, s) + 1 == s], name
    ends = dict(zip(layout.starts, layout.starts[1:] + [len(data)]))
    for group in _statements(tree):
        node, start = group[0], group[0].start_byte
        end = ends.get(start)
        if len(group) > 1 or end is None:
            continue  # `a = 1; b = 2`: one statement of statements.read (taken whole: all words)
        inner = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
        found = statements.definition(layout, start, end)
        if inner.type in ("function_definition", "class_definition"):
            assert found is not None and found[0] == inner.child_by_field_name("name").text.decode(), name
            assert found[1] == (inner.type == "function_definition"), name
            if inner.type == "function_definition":
                _check_locals(name, layout, start, end, inner)
        else:
            assert found is None, name
            _check_binds(name, layout, start, end, node)
    return True


def _check_locals(name, layout, start, end, node) -> None:
    scope = statements.function_scope(layout, start, end)
    if scope is None:
        return
    _, params, local = scope
    tree_scope = read_scope(node, None)
    true_locals = set(tree_scope.bindings) - tree_scope.globals
    assert {p.decode() for p in params} <= true_locals, (name, node.start_point)
    assert set(local) <= true_locals, (name, node.start_point, set(local) - true_locals)


def _check_binds(name, layout, start, end, node) -> None:
    binds = statements.module_binds(layout, start, end)
    if binds is None:
        return
    scope = Scope(node, "module", None)
    _read_statement(node, scope)
    assert set(scope.bindings) <= binds, (name, node.start_point, set(scope.bindings) - binds)


def _check_kept(name: str, data: bytes, config: Config) -> None:
    layout = statements.read(data)
    if layout is None or not layout.starts or b"\r" in data:  # (no statement: nothing to keep)
        return
    state = incremental.state_of(Source(data, name), config, fresh=True)
    kept = set(outline._kept(layout, config))
    missed = [s for s, r in zip(state.starts, state.relevant)
              if r and s >= layout.starts[0] and bisect_right(layout.starts, s) - 1 not in kept]
    # (the statement holding it; what comes before the first statement, comments, is always kept)
    assert not missed, (name, missed[:5])


def test_layout_and_kept_statements_on_every_input():
    checked = 0
    for name, data in _inputs():
        if _check_layout(name, data):
            _check_kept(name, data, Config())
            checked += 1
    assert checked > 50, "too few inputs parsed cleanly: the test proves little"


def test_layout_on_random_line_edits(monkeypatch):
    monkeypatch.setattr(outline, "MAX_KEPT", 1.0)  # small files keep most of their statements
    rng = random.Random(8)
    fixtures = [data for name, data in _inputs() if "fixtures" in name]
    checked = 0
    compared = 0
    for _ in range(600):
        data = _mutated(rng.choice(fixtures), rng)
        if _check_layout("mutated", data):
            _check_kept("mutated", data, Config())
            checked += 1
            compared += _same("mutated", data, "mutated.py", Config())
    assert checked > 100 and compared > 100


def test_layout_on_torch_sources():
    files = _torch_files()
    if not files:
        pytest.skip("torch is not installed (its sources are the largest real inputs here)")
    checked = 0
    for f in files:
        data = f.read_bytes()
        if _check_layout(str(f), data):
            _check_kept(str(f), data, Config())
            checked += 1
    assert checked > 200


def _same(name: str, source_bytes: bytes, path: str, config: Config, project=None) -> bool:
    first = outline.first_result(Source(source_bytes, path), config, project, min_bytes=0)
    if first is None:
        return False
    full = analyze(Source(source_bytes, path), config, project=project)
    assert [_view(f) for f in first.findings] == [_view(f) for f in full.findings], name
    assert first.partial and first.outlined
    return True


def _view(f) -> tuple:
    fixes = tuple((x.title, x.applicability) if x is not None else None for x in (f.fix, *f.alternatives))
    return (f.code, f.message, f.start, f.end, f.severity, f.deprecated, f.unnecessary,
            tuple((r.start, r.end, r.message, r.path) for r in f.related), fixes)


@pytest.mark.parametrize("name,root,files", d.units(), ids=[u[0] for u in d.units()])
def test_findings_equal_a_full_analysis(name, root, files, monkeypatch):
    monkeypatch.setattr(outline, "MAX_KEPT", 1.0)  # small files keep most of their statements
    cfg = d.config_for(root)
    project = Project(root=str(root))
    for f in files:
        project.update(str(f), summarize(Source(f.read_bytes(), str(f)), cfg))
    for f in files:
        _same(f"{name}/{f.name}", f.read_bytes(), str(f), cfg, project)


def test_findings_equal_a_full_analysis_on_the_bench_file():
    text = d.generated_source(1100, 20_000).encode()
    assert _same("generated", text, "big.py", Config())
    assert outline.first_result(Source(text, "big.py"), Config()) is not None, "the bench file takes the fast path"


def test_findings_equal_a_full_analysis_on_torch_sources(monkeypatch):
    """torch's files keep nearly every statement (they all read `torch`): the server parses
    them whole; here they are compared all the same."""
    monkeypatch.setattr(outline, "MAX_KEPT", 1.0)
    files = [f for f in _torch_files(step=4) if any(t in f.read_bytes() for t in (b"aot_", b"aoti_", b"lengths"))]
    if not files:
        pytest.skip("torch is not installed")
    compared = sum(_same(str(f), f.read_bytes(), str(f), Config()) for f in files)
    assert compared > 10


def test_server_first_diagnostics_then_the_whole_file_once_typing_pauses():
    text = d.generated_source(300, 6000)
    path = str(ROOT / "big_outline.py")
    uri = Path(path).as_uri()
    ls = inprocess.server()
    doc = ls.docs[uri] = Document(uri, path, text, 0)
    ls.update_summary(doc.path, doc.source(), defer=True)  # as didOpen does
    items = ls.diagnostics(doc)
    assert getattr(ls._results[uri][1], "outlined", False), "the first analysis of a large file is the outline's"
    fresh = inprocess.fresh_diagnostics(doc)
    assert items == fresh and items
    ls.settled()
    assert not getattr(ls.result(doc), "outlined", False) and not getattr(ls.result(doc), "partial", False)
    assert ls.diagnostics(doc) == fresh
