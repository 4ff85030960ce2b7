"""Lazy fixes (findings.LazyFix): a check decides with tree-sitter whether a finding has a fix,
its title and applicability; libcst builds the edits only when something reads them. Proven
against the eager build (findings.EAGER_FIXES, today's code path, libcst for every fix) on every
Python file the tests and the examples hold, on a generated file like the bench's, and on call
shapes picked to hit each reason a migration is refused."""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from aoti_lsp.project import config as configmod
from aoti_lsp.analysis import findings as findingsmod
from aoti_lsp.project import runner
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.findings import Edit, Fix, FixStub, LazyFix, portable
from aoti_lsp.project.project import Project, summarize
from aoti_lsp.analysis.source import Source

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


# -- comparing a lazy run with an eager one ----------------------------------------------------------
def _fix_row(fix):
    if fix is None:
        return None
    return (type(fix) is LazyFix, fix.title, fix.applicability, fix.snippet, fix.kind, sorted(fix.other_files))


def _row(f):
    return (f.path, f.code, f.message, f.start, f.end, f.severity, f.deprecated, f.unnecessary, tuple(f.related),
            f.alternatives, _fix_row(f.fix)[1:] if f.fix is not None else None)


def compare(lazy: list, eager: list, tally: dict) -> None:
    """Same findings, same fix presence, title, applicability, files; each lazy fix, forced,
    has exactly the eager fix's edits, and never fails."""
    assert [_row(f) for f in lazy] == [_row(f) for f in eager]
    unbuilt = sum(isinstance(f.fix, LazyFix) and not f.fix.built for f in lazy)  # before any is forced
    tally["unbuilt"] = tally.get("unbuilt", 0) + unbuilt
    for mine, theirs in zip(lazy, eager):
        assert not isinstance(theirs.fix, LazyFix), "the eager run made a lazy fix: the comparison would be void"
        if isinstance(mine.fix, LazyFix):
            tally["lazy"] = tally.get("lazy", 0) + 1
            edits = mine.fix.edits
            assert mine.fix.failed is None, (mine.path, mine.code, mine.fix.failed)
            assert edits == theirs.fix.edits, (mine.path, mine.code)
            assert mine.fix.resolve() == theirs.fix
            assert mine.fix.other_files == theirs.fix.other_files
        elif isinstance(mine.fix, FixStub):  # title, applicability, files: compared above
            tally["stub"] = tally.get("stub", 0) + 1
        elif mine.fix is not None:
            tally["eager"] = tally.get("eager", 0) + 1
            assert mine.fix == theirs.fix


@pytest.fixture
def eager(monkeypatch):
    def run(work):
        with monkeypatch.context() as m:
            m.setattr(findingsmod, "EAGER_FIXES", True)
            return work()

    return run


@pytest.fixture
def no_build_errors(caplog):
    caplog.set_level(logging.ERROR, logger="aoti_lsp.analysis.findings")
    yield
    assert not [r for r in caplog.records if r.name == "aoti_lsp.analysis.findings"], caplog.text


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _single(path: Path, data: bytes | None = None):
    source = Source(path.read_bytes() if data is None else data, str(path))
    result = analyze(source, Config())
    return result.findings, result.errors


def _folder_as_project(folder: Path):
    """A fixture folder the way goldens.check_project reads it: one project, every file checked."""
    sources = [Source(f.read_bytes(), str(f)) for f in _files(folder)]
    project = Project()
    for s in sources:
        project.update(s.path, summarize(s))
    out = []
    for s in sources:
        result = analyze(s, Config(), project=project)
        out += [*result.findings]
    return out, []


def _as_runner(folder: Path, edits: bool = True):
    """A project checked the way the CLI checks it (runner.run_projects: root found, every file
    summarised, each named file checked), in this process; its findings as they leave a check
    (findings.portable): fixes built (`edits`), else stubs."""
    results, errors = runner.run_projects([str(folder)], configmod.load, ("check", False), 1, use_cache=False,
                                          edits=edits)
    rows = sorted(results, key=lambda r: r[0])
    return [f for r in rows for f in r[3]], [*errors, *(e for r in rows for e in r[4])]


def _check(work, eager, tally):
    lazy_findings, lazy_errors = work()
    eager_findings, eager_errors = eager(work)
    assert lazy_errors == eager_errors
    compare(lazy_findings, eager_findings, tally)


FIXTURE_FILES = [p for p in _files(TESTS / "fixtures") if p.parent.parent == TESTS / "fixtures"]
FIXTURE_FOLDERS = sorted(p for p in (TESTS / "fixtures").glob("*/*") if p.is_dir())
PROJECTS = sorted(p for p in (TESTS / "projects").iterdir() if p.is_dir())


def test_the_corpus_is_what_it_claims():
    assert len(FIXTURE_FILES) > 40 and FIXTURE_FOLDERS and len(PROJECTS) >= 6
    assert _files(ROOT / "examples") and _files(TESTS / "editors" / "fixtures")


def test_fixture_files(eager, no_build_errors):
    tally = {}
    for path in FIXTURE_FILES + _files(TESTS / "editors" / "fixtures"):
        _check(lambda path=path: _single(path), eager, tally)
    assert tally["lazy"] > 30 and tally["unbuilt"] == tally["lazy"], tally


def test_fixture_folders_as_projects(eager, no_build_errors):
    tally = {}
    for folder in FIXTURE_FOLDERS:
        _check(lambda folder=folder: _folder_as_project(folder), eager, tally)
    assert tally.get("lazy", 0) > 0, tally


@pytest.mark.parametrize("name", [p.name for p in PROJECTS] + ["examples"])
def test_projects_as_the_runner_checks_them(name, tmp_path, eager, no_build_errors):
    source = ROOT / "examples" if name == "examples" else TESTS / "projects" / name
    folder = tmp_path / name  # outside the repository: the project is this folder, as in test_projects
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("expected", "__pycache__"))
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    built, stubs = {}, {}
    _check(lambda: _as_runner(folder), eager, built)  # built in the runner: a failed build would be no fix
    _check(lambda: _as_runner(folder, edits=False), eager, stubs)
    assert "lazy" not in built and "stub" not in built and "lazy" not in stubs, (built, stubs)
    if name in ("old_api_cpu_load", "examples"):  # the projects with a migration
        assert stubs["stub"] == 2 and built["eager"] == stubs["eager"] + 2, (built, stubs)


def _bench():
    spec = importlib.util.spec_from_file_location("aoti_bench", ROOT / "scripts" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_file(eager, no_build_errors, tmp_path):
    text, _, _ = _bench().generate(sites=200, lines=3000)
    path = tmp_path / "big.py"
    path.write_text(text, "utf-8")
    tally = {}
    _check(lambda: _single(path), eager, tally)
    assert tally["lazy"] > 20, tally


# -- the reasons a migration is refused, one call shape each -----------------------------------------
HEAD = "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    pass\nmodel = M()\n"
SHAPES = {
    # compile
    "ok": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, 'cpu')\n",
    "star": "so = torch._export.aot_compile(model, *a)\n",
    "dstar": "so = torch._export.aot_compile(model, (x,), **kw)\n",
    "star after too many": "so = torch._export.aot_compile(model, (x,), {}, 1, *a)\n",
    "too many": "so = torch._export.aot_compile(model, (x,), {}, None)\n",
    "too many before star": "so = torch._export.aot_compile(model, (x,), {}, None, *rest)\n",
    "no inputs": "so = torch._export.aot_compile(model)\n",
    "keyword inputs": "so = torch._export.aot_compile(model, args=(x,))\n",
    "keyword model": "so = torch._export.aot_compile(f=model, args=(x,))\n",
    "plain function by its caller": "import functools\ndef comp(fn, **kw):\n    torch._export.aot_compile(fn, (), kw)\n"
                                    "comp(functools.partial(g, m=model), x=x)\n",
    "lambda by its caller": "def comp(fn):\n    torch._export.aot_compile(fn, (x,))\ncomp(lambda t: t)\n",
    "module by its caller": "def comp(fn):\n    torch._export.aot_compile(fn, (x,))\ncomp(model)\n",
    "constraints": "so = torch._export.aot_compile(model, (x,), constraints=[c])\nr = torch._export.aot_load(so, 'cpu')\n",
    "keyword torch ignores": "so = torch._export.aot_compile(model, (x,), remove_runtime_assertions=True)\n",
    "keyword torch rejects": "so = torch._inductor.aot_compile(gm, (x,), same_signature=True)\n",
    "plain def": "def fn(x):\n    return x\nso = torch._export.aot_compile(fn, (x,))\n",
    "plain def in parens": "def fn(x):\n    return x\nso = torch._export.aot_compile((fn), (x,))\n",
    "plain def by keyword": "def fn(x):\n    return x\nso = torch._export.aot_compile(f=fn, args=(x,))\n",
    "gm": "so = torch._inductor.aot_compile(gm, (x,))\n",
    "gm named f": "so = torch._inductor.aot_compile(f=gm, args=(x,))\n",
    "module of something": "so = torch._inductor.aot_compile(thing.module(), (x,))\n",
    "options dict": "torch._export.aot_compile(model, (x,), options={'aot_inductor.output_path': 'm.so', 'k': 1})\n"
                    "r = torch._export.aot_load('m.so', 'cpu')\n",
    "options None": "so = torch._export.aot_compile(model, (x,), options=None)\n",
    "options (None)": "so = torch._export.aot_compile(model, (x,), options=(None))\n",
    "options name with output path": "OPTS = {'aot_inductor.output_path': 'm.so'}\n"
                                     "so = torch._export.aot_compile(model, (x,), options=OPTS)\n",
    "options (name) with output path": "OPTS = {'aot_inductor.output_path': 'm.so'}\n"
                                       "so = torch._export.aot_compile(model, (x,), options=(OPTS))\n",
    "options name read twice": "OPTS = {'aot_inductor.output_path': 'm.so', 'k': 1}\n"
                               "so = torch._export.aot_compile(model, (x,), options=OPTS)\nprint(OPTS)\n",
    "options name, more keys": "OPTS = {\n    'max_autotune': True,\n    'aot_inductor.output_path': 'm.so',\n}\n"
                               "so = torch._export.aot_compile(model, (x,), options=OPTS)\n"
                               "r = torch._export.aot_load(so, 'cpu')\n",
    "options name rebound between": "d = 'a'\nOPTS = {'aot_inductor.output_path': d + '/m.so'}\nd = 'b'\n"
                                    "so = torch._export.aot_compile(model, (x,), options=OPTS)\n",
    "options name": "OPTS = {'max_autotune': True}\nso = torch._export.aot_compile(model, (x,), options=OPTS)\n",
    "exported program": "ep = torch.export.export(model, (x,))\nso = torch._inductor.aot_compile(ep.module(), (x,))\n"
                        "r = torch._export.aot_load(so, 'cpu')\n",
    "exported program inline": "so = torch._inductor.aot_compile(torch.export.export(model, (x,)).module(), (x,))\n"
                               "r = torch._export.aot_load(so, 'cpu')\n",
    "options call": "so = torch._export.aot_compile(model, (x,), options=dict(a=1))\n",
    "options dict comprehension": "so = torch._export.aot_compile(model, (x,), options={k: v for k, v in c})\n",
    "options ({})": "so = torch._export.aot_compile(model, (x,), options=({'aot_inductor.output_path': 'm.so'}))\n",
    "lambda": "f = lambda: torch._export.aot_compile(model, (x,))\n",
    "conditional": "so = torch._export.aot_compile(model, (x,)) if c else None\n",
    "in a with": "with torch._export.aot_compile(model, (x,)) as so:\n    pass\n",
    "comments": "so = torch._export.aot_compile(  # c\n    model,  # the model\n    (x,),\n)\n",
    "continued": "so = torch._export.aot_compile(model, \\\n    (x,))\n",
    "split before (": "so = (torch._export.aot_compile\n      (model, (x,)))\n",
    "keyword then positional": "so = torch._export.aot_compile(options={}, model, (x,))\n",
    "** then *": "so = torch._export.aot_compile(model, (x,), **kw, *a)\n",
    "generator": "so = torch._export.aot_compile(m for m in ms)\n",
    "generator and more": "so = torch._export.aot_compile(m for m in ms, (x,))\n",
    "walrus": "so = torch._export.aot_compile(model, (x,), options=(o := {}))\n",
    "nested": "r = torch._export.aot_load(torch._export.aot_compile(model, (x,)), 'cpu')\n",
    "torch shadowed": "so = torch._export.aot_compile(model, (x,))\ndef torch():\n    pass\n",
    "torch a parameter": "from torch._export import aot_compile, aot_load\ndef g(torch):\n"
                         "    so = aot_compile(model, (x,))\n    return aot_load(so, 'cpu')\n",
    "torch missing": "from torch._export import aot_compile, aot_load\nso = aot_compile(model, (x,))\nr = aot_load(so, 'cpu')\n",
    # load
    "load literal": "torch._export.aot_compile(model, (x,), options={'aot_inductor.output_path': 'm.so'})\n"
                    "r = torch._export.aot_load('m.so', 'cuda:1')\n",
    "device missing": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so)\n",
    "device keyword": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, device='cuda')\n",
    "path keyword": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so_path=so, device='cpu')\n",
    "device bytes": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, b'cpu')\n",
    "device f-string": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, f'cpu')\n",
    "device concatenated": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, 'cu' 'da')\n",
    "device raw": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, r'cuda:0')\n",
    "device escaped": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, 'cp\\x75')\n",
    "device (literal)": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, ('cuda:2'))\n",
    "device cpu:0": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, 'cpu:0')\n",
    "device constant": "DEV = 'cuda:3'\nso = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, DEV)\n",
    "device constant f": "DEV = f'cuda'\nso = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, DEV)\n",
    "device run time": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, sys.argv[1])\n",
    "device ternary": "d = 'cuda' if torch.cuda.is_available() else 'cpu'\nso = torch._export.aot_compile(model, (x,))\n"
                      "r = torch._export.aot_load(so, d)\n",
    "device ternary indices": "so = torch._export.aot_compile(model, (x,))\n"
                              "r = torch._export.aot_load(so, 'cuda:1' if c else 'cpu')\n",
    "device torch.device": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, torch.device('cpu'))\n",
    "load star": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(*so)\n",
    "load too many": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(so, 'cpu', 1)\n",
    "load split before (": "so = torch._export.aot_compile(model, (x,))\nr = (torch._export.aot_load\n     (so, 'cpu'))\n",
    "load keyword then positional": "so = torch._export.aot_compile(model, (x,))\nr = torch._export.aot_load(device='cpu', so)\n",
    "unused import": "from torch._export import aot_load, aot_compile as ac\nimport torch._export as te\n",
    "unused import in a function": "def f():\n    from torch._export import aot_load\n    return 1\n",
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_call_shapes(name, eager, no_build_errors, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(HEAD + SHAPES[name], "utf-8")
    _check(lambda: _single(path), eager, {})


def test_call_shapes_refuse_as_they_should(no_build_errors, tmp_path):
    """The shapes above do reach the refusals they are named after (else the comparison proves little)."""
    reasons = set()
    for text in SHAPES.values():
        found, _ = _single(tmp_path / "m.py", (HEAD + text).encode())
        reasons |= {r.message for f in found for r in f.related if r.message.startswith("no automatic fix")}
    for part in ("*args/**kwargs", "more positional arguments", "model or the example inputs are missing",
                 "not a plain function", "are also read at", "may change before the call", "may not run",
                 "part of a with", "path or the device is missing", "is not known here", "takes only an index",
                 "cannot tell is an ExportedProgram", "a torch.device object", "bound to something else",
                 "`constraints=`", "`same_signature=`, which torch._inductor",
                 "passes `functools.partial(...)` for `fn`", "passes a lambda for `fn`"):
        assert any(part in r for r in reasons), (part, reasons)


# -- a build that fails after its preflight passed ---------------------------------------------------
def test_a_fix_that_cannot_be_built_is_no_fix(monkeypatch, caplog, tmp_path):
    """A preflight bug: the build raises. It is logged; --fix skips it; JSON shows no fix."""
    from aoti_lsp.fixes.fixer import fix_source
    from aoti_lsp.fixes import migrate
    from aoti_lsp.fixes.migrate import CannotFix
    from aoti_lsp.cli.reporters import to_json

    def broken(*args, **kwargs):
        raise CannotFix("a reason the preflight missed")

    monkeypatch.setattr(migrate, "load_fix", broken)
    monkeypatch.setattr("aoti_lsp.fixes.plan.load_fix", broken)
    source = Source((HEAD + SHAPES["ok"]).encode(), str(tmp_path / "m.py"))
    result = analyze(source, Config())
    fixes = [f.fix for f in result.findings if f.fix is not None]
    assert fixes and all(isinstance(f, LazyFix) and not f.built for f in fixes)
    caplog.set_level(logging.ERROR, logger="aoti_lsp.analysis.findings")
    assert fixes[0].resolve() is None and fixes[0].edits == () and "a reason the preflight missed" in fixes[0].failed
    assert "could not be built" in caplog.text
    assert [j["fix"] for j in to_json([(f, source) for f in result.findings])] == [None, None]
    fixed = fix_source(Source(source.data, source.path), Config(), unsafe=True)
    assert fixed.data == source.data and fixed.applied == 0


# -- what crosses a process boundary -----------------------------------------------------------------
def test_portable_findings(tmp_path):
    import pickle

    source = Source((HEAD + SHAPES["ok"]).encode(), str(tmp_path / "m.py"))
    found = analyze(source, Config()).findings
    assert all(isinstance(f.fix, LazyFix) for f in found)
    stubs = [portable(f, edits=False) for f in found]
    assert all(isinstance(f.fix, FixStub) for f in stubs) and not any(f.fix.built for f in found)
    for stub, f in zip(pickle.loads(pickle.dumps(stubs)), found):
        assert (stub.fix.title, stub.fix.applicability, stub.fix.kind, stub.fix.other_files) == \
            (f.fix.title, f.fix.applicability, f.fix.kind, f.fix.other_files)
        with pytest.raises(RuntimeError, match="not built"):
            _ = stub.fix.edits
    built = pickle.loads(pickle.dumps([portable(f, edits=True) for f in found]))
    assert all(type(f.fix) is Fix and f.fix.edits for f in built)
    assert [f.fix for f in built] == [f.fix.resolve() for f in found]
    # a lazy fix already built travels built, even when the output does not need it
    assert type(portable(found[0], edits=False).fix) is Fix
    assert found[0].fix is not None and isinstance(found[0].fix, LazyFix)  # the original is untouched


def test_a_text_check_never_imports_libcst(tmp_path):
    """The default output, in one process or many: libcst is imported by no process (`-X
    importtime` reports the imports of forked workers too). JSON holds the edits: libcst builds them."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (tmp_path / "m.py").write_text(HEAD + SHAPES["ok"] + SHAPES["unused import"])
    for i in range(70):  # past runner.PARALLEL_MIN: worker processes
        (tmp_path / f"p{i}.py").write_text(f"import torch\nso{i} = torch._export.aot_compile(model, (x,))\n"
                                           f"r{i} = torch._export.aot_load(so{i}, 'cpu')\n")
    for args in (["m.py"], ["-j", "2", "."], ["-j", "1", "."]):
        for fmt in ("text", "github", "sarif", "json"):
            out = subprocess.run([sys.executable, "-X", "importtime", "-m", "aoti_lsp", "--check", "--no-cache",
                                  "--output-format", fmt, *args], capture_output=True, text=True, cwd=tmp_path)
            assert out.returncode == 1, out.stderr
            imported = any(line.rstrip().endswith("| libcst") for line in out.stderr.splitlines())
            assert imported == (fmt == "json"), (args, fmt)
            if fmt == "json":
                fixes = [f["fix"] for f in json.loads(out.stdout) if f["fix"] is not None]
                assert len(fixes) > 3 and all(f["edits"] for f in fixes)
            elif fmt == "text":
                assert "= fix (unsafe): Migrate to aoti_compile_and_package + aoti_load_package" in out.stdout
                assert "= fix (safe): Remove unused import of torch._export.aot_load" in out.stdout


def test_the_cache_never_serves_stubs_to_an_output_that_needs_edits(tmp_path, monkeypatch, capsys):
    """A text run caches results without edits (stubs); a JSON run after it checks again and
    caches them with edits; from then on both are served from the cache."""
    from aoti_lsp.project import cache as cachemod
    from aoti_lsp.cli.main import main

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (tmp_path / "m.py").write_text(HEAD + SHAPES["ok"] + SHAPES["unused import"])
    monkeypatch.chdir(tmp_path)
    checked = []
    real = runner._check
    monkeypatch.setattr(runner, "_check", lambda sources, *a: checked.extend(s.path for s in sources) or real(sources, *a))

    def run(fmt, *more):
        checked.clear()
        assert main(["--check", "--output-format", fmt, *more, "m.py"]) == 1
        cache = cachemod.Cache(str(tmp_path), configmod.load(str(tmp_path)))
        kinds = {type(f.fix).__name__ for r in cache.results.values() for f in r[2] if f.fix is not None}
        return capsys.readouterr().out, bool(checked), kinds

    fresh_json = run("json", "--no-cache")[0]
    fresh_text = run("text", "--no-cache")[0]
    assert run("text") == (fresh_text, True, {"FixStub"})  # checked, stored without edits
    assert run("text") == (fresh_text, False, {"FixStub"})  # from the cache
    assert run("json") == (fresh_json, True, {"Fix"})  # stubs are a miss: checked again, stored with edits
    assert run("json") == (fresh_json, False, {"Fix"})  # from the cache, edits and all
    assert run("text") == (fresh_text, False, {"Fix"})


# -- fuzzed files (test_fuzz's: fixtures with headers, line endings, tabs, nesting, hostile lines) ---
def test_fuzzed_files():
    from hypothesis import given, settings
    from test_fuzz import (  # the same strategy and settings (derandomized in CI)
        FUZZ,
        LONG,
        files,
    )

    tally = {}

    @settings(FUZZ, max_examples=3000 if LONG else 200)
    @given(files())
    def same(data):
        lazy = analyze(Source(data, "fuzz.py"), Config())
        findingsmod.EAGER_FIXES = True
        try:
            eager = analyze(Source(data, "fuzz.py"), Config())
        finally:
            findingsmod.EAGER_FIXES = False
        assert lazy.errors == eager.errors
        compare(lazy.findings, eager.findings, tally)

    same()
    assert tally.get("lazy", 0) > 10, tally


def test_random_call_shapes():
    """Argument lists drawn from the pieces the preflight reads (positional, keyword, * and **,
    comments, parentheses, line breaks, strings of every prefix, constants, functions), for the
    compile and for the loader of its artifact: the lazy fix and its refusal are the eager one's,
    whatever the order and the nesting."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from test_fuzz import FUZZ, LONG

    values = st.sampled_from([
        "model", "(model)", "fn", "(fn)", "gm", "(x,)", "x", "{}", "None", "(None)", "OPTS", "(OPTS)", "GOOD",
        "{'aot_inductor.output_path': 'm.so'}", "{'aot_inductor.package': True, 'k': 1}", "dict(a=1)",
        "'cpu'", "'cuda:1'", "('cuda')", "b'cpu'", "f'cpu'", "r'cpu'", "u'cuda:0'", "'cu' 'da'", "'cpu:0'", "'mps'",
        "'\\x63pu'", "DEV", "BAD_DEV", "FDEV", "so", "sys.argv[1]", "(o := {})", "lambda: 1", "ms[0]",
        "(model  # c\n)", "m for m in ms", "torch.device('cpu')",
    ])
    keywords = st.sampled_from(["f", "gm", "args", "kwargs", "options", "dynamic_shapes", "so_path", "device", "x"])
    arg = st.one_of(
        values, values,
        st.tuples(keywords, values).map(lambda kv: f"{kv[0]}={kv[1]}"),
        st.sampled_from(["*a", "**kw", "# a comment\n", "\n"]),
    )
    compiles = st.sampled_from(["torch._export.aot_compile", "torch._inductor.aot_compile", "aot_compile",
                                "(aot_compile\n)"])
    loads = st.sampled_from(["torch._export.aot_load", "aot_load", "(aot_load\n)"])
    head = (HEAD + "import sys\nfrom torch._export import aot_compile, aot_load\ndef fn(x):\n    return x\n"
            "OPTS = {'aot_inductor.output_path': 'm.so'}\nGOOD = {'max_autotune': True}\nDEV = 'cuda:2'\n"
            "BAD_DEV = 'gpu'\nFDEV = f'cpu'\n")

    def joined(args):
        return ", ".join(a.rstrip("\n") + ("\n" if a.endswith("\n") else "") for a in args)

    tally = {}

    @settings(FUZZ, max_examples=3000 if LONG else 300)
    @given(compiles, loads, st.lists(arg, max_size=5), st.lists(arg, max_size=4), st.sampled_from(["so, ", "so_path=so, ", ""]))
    def same(compile_, load, compile_args, load_args, path):
        first = ["model, (x,)"] if not compile_args else []  # a compile the loader can always name
        text = (head + f"so = {compile_}({joined(first + compile_args)})\n"
                + f"r = {load}({path}{joined(load_args)})\n")
        lazy = analyze(Source(text.encode(), "m.py"), Config())
        findingsmod.EAGER_FIXES = True
        try:
            eager = analyze(Source(text.encode(), "m.py"), Config())
        finally:
            findingsmod.EAGER_FIXES = False
        assert lazy.errors == eager.errors
        compare(lazy.findings, eager.findings, tally)
        for f in lazy.findings:
            why = next((r.message for r in f.related if r.message.startswith("no automatic fix")), None)
            kind = "lazy" if isinstance(f.fix, LazyFix) else "built" if f.fix is not None else why or "none"
            tally.setdefault("kinds", set()).add(kind)

    same()
    refusals = {k for k in tally["kinds"] if k.startswith("no automatic fix")}
    assert "lazy" in tally["kinds"] and len(refusals) >= 6, tally["kinds"]


# -- a lazy fix moved past an edit elsewhere in its file (incremental.py's shift_fix) ----------------
def test_a_shifted_fix_builds_the_edits_of_the_moved_text():
    """`shifted(at)`: edits in the finding's file moved by `at` once built, other files' kept;
    the same as the eager fix of the text with the edit made. Moves pile up flat."""
    text = (HEAD + SHAPES["torch missing"] + SHAPES["unused import"]).replace("import torch\nimport torch.nn as nn\n",
                                                                             "import torch.nn as nn\n")
    fixes = [f.fix for f in analyze(Source(text.encode(), "m.py"), Config()).findings if isinstance(f.fix, LazyFix)]
    assert len(fixes) >= 3
    inserted = "# an edit no rule sees\n"
    at = text.index("model = M()")  # between the imports (the `import torch` goes before them) and the calls
    moved_text = text[:at] + inserted + text[at:]
    findingsmod.EAGER_FIXES = True
    try:
        eager = [f.fix for f in analyze(Source(moved_text.encode(), "m.py"), Config()).findings if f.fix is not None]
    finally:
        findingsmod.EAGER_FIXES = False
    assert len(eager) == len(fixes) and eager[0].edits[0] == Edit(0, 0, "import torch\n")
    # one shift of len(inserted), or the same as many shifts of one byte
    one = [fix.shifted(lambda o: o + len(inserted) if o >= at else o) for fix in fixes]
    many = list(fixes)
    for _ in range(len(inserted)):
        many = [fix.shifted(lambda o: o + 1 if o >= at else o) for fix in many]
    assert not any(f.built for f in fixes + one + many)
    for moved in (one, many):
        assert [(f.title, f.applicability, f.other_files) for f in moved] == \
            [(f.title, f.applicability, f.other_files) for f in eager]
        assert [f.edits for f in moved] == [f.edits for f in eager]
        assert not any(f.failed for f in moved)
    assert [f.edits for f in fixes] != [f.edits for f in eager]  # the originals: where the text was
    # a fix built before it is moved moves its edits at once
    built = fixes[0].shifted(lambda o: o + len(inserted) if o >= at else o)
    assert built.built and built.edits == one[0].edits
