"""Speed where users wait (issue 25): a run pays only for what it needs. A warm run opens no
file whose stat is unchanged and imports no rule; a changed file without trigger tokens is
dropped after a byte scan; the tool's cache key is taken from stats; no worker pool for a
small tree unless asked for."""

from __future__ import annotations

import builtins
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aoti_lsp.cli import main as cli
from aoti_lsp.project import cache as cachemod
from aoti_lsp.project import config as configmod
from aoti_lsp.project import runner

ROOT = Path(__file__).resolve().parents[1]
BAD = "import torch\n\nso = torch._export.aot_compile(model, (x,))\nrunner = torch._export.aot_load(so, 'cpu')\n"
PLAIN = "import os\n\n\ndef helper(rows):\n    return sum(len(r) for r in rows)\n"


def _project(tmp_path: Path, n: int = 12) -> Path:
    """A project whose files are old enough for the cache to trust their stat (cache.RACY_NS)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(BAD)
    for i in range(n):
        (tmp_path / "pkg" / f"m{i}.py").write_text(PLAIN + f"X{i} = {i}\n")
    old = time.time() - 3600
    for f in tmp_path.rglob("*.py"):
        os.utime(f, (old, old))
    return tmp_path


def _opened(monkeypatch) -> list[str]:
    """Every path opened through open()/io.open from now on (the cache file is read through
    os.open, relative to its folder's descriptor: cache.py)."""
    seen: list[str] = []
    real = builtins.open

    def spy(file, *a, **k):
        if not isinstance(file, int):  # a descriptor: a pipe to git, not a file
            seen.append(os.path.abspath(file))
        return real(file, *a, **k)

    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(io, "open", spy)
    return seen


def test_a_warm_run_opens_no_file_whose_stat_is_unchanged(tmp_path, monkeypatch, capsys):
    root = _project(tmp_path)
    monkeypatch.chdir(root)
    assert cli.main(["--check", "-j", "1", "."]) == 1  # fills the cache
    first = capsys.readouterr()
    cachemod._TOOL = None  # a new process computes the tool key again
    opened = _opened(monkeypatch)
    assert cli.main(["--check", "-j", "1", "."]) == 1
    again = capsys.readouterr()
    assert again.out == first.out and "AOTI001" in again.out
    # the file with findings is read for the lines the report shows; nothing else (no package file, no clean file)
    py = [p for p in opened if p.endswith(".py")]
    assert py == [str(root / "pkg" / "bad.py")], opened
    # one clean file named: nothing opened at all but the config
    opened.clear()
    cachemod._TOOL = None
    assert cli.main(["--check", "-j", "1", "pkg/m3.py"]) == 0
    assert "All checks passed!" in capsys.readouterr().err
    assert [p for p in opened if not p.endswith("pyproject.toml")] == [], opened


def test_a_changed_file_is_read_once_and_only_it(tmp_path, monkeypatch, capsys):
    root = _project(tmp_path)
    monkeypatch.chdir(root)
    assert cli.main(["--check", "-j", "1", "pkg/m1.py"]) == 0
    capsys.readouterr()
    (root / "pkg" / "m1.py").write_text(PLAIN + "Y = 2\n")
    cachemod._TOOL = None
    opened = _opened(monkeypatch)
    assert cli.main(["--check", "-j", "1", "pkg/m1.py"]) == 0
    assert "All checks passed!" in capsys.readouterr().err
    assert [p for p in opened if p.endswith(".py")] == [str(root / "pkg" / "m1.py")], opened


_MODULES = """
import sys
from aoti_lsp.cli.main import main
code = main(sys.argv[1:])
print(sorted(m for m in sys.modules if m.startswith(("aoti_lsp", "tree_sitter", "libcst"))), file=sys.stderr)
sys.exit(code)
"""


def _modules(root: Path, *args: str) -> tuple[int, set[str], str]:
    out = subprocess.run([sys.executable, "-c", _MODULES, "--check", *args], cwd=root, capture_output=True, text=True)
    return out.returncode, set(eval(out.stderr.strip().splitlines()[-1])), out.stderr


@pytest.mark.parametrize("change", ["edited", "touched", None])
def test_a_warm_run_imports_no_rule_nor_the_analysis(tmp_path, change):
    """A run the cache answers (or one whose only changed file holds no trigger token, a
    typical pre-commit run; or one where a file with AOTI code, not named, was touched but not
    changed) imports neither the rules, the analysis (tree-sitter), the reporters nor the fixer."""
    root = _project(tmp_path)
    assert _modules(root, "-j", "1", "pkg/m2.py")[0] == 0  # fills the cache, its gate included
    if change == "edited":
        (root / "pkg" / "m2.py").write_text(PLAIN + "Z = 3\n")
    elif change == "touched":
        os.utime(root / "pkg" / "bad.py")
    code, mods, err = _modules(root, "-j", "1", "pkg/m2.py")
    assert code == 0 and "All checks passed!" in err
    heavy = {"aoti_lsp.rules", "aoti_lsp.analysis.source", "aoti_lsp.analysis.engine", "aoti_lsp.analysis.facts",
             "aoti_lsp.project.project", "aoti_lsp.cli.reporters", "aoti_lsp.fixes.fixer", "aoti_lsp.project.notebook",
             "tree_sitter", "tree_sitter._binding", "libcst"}
    assert not mods & heavy, sorted(mods & heavy)
    # a file with AOTI code changes: then it is parsed and checked, and the findings shown
    (root / "pkg" / "bad.py").write_text(BAD + "\n")
    code, mods, err = _modules(root, "-j", "1", "pkg/bad.py")
    assert code == 1 and "aoti_lsp.rules" in mods and "Found 2 findings." in err


GOOD = ("import torch\n\n\ndef build(model, x):\n    ep = torch.export.export(model, (x,))\n"
        "    return torch._inductor.aoti_compile_and_package(ep, package_path='m.pt2')\n")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_warm_run_of_an_unchanged_clean_file_with_aoti_code_imports_no_analysis(tmp_path):
    """Such a file lists the project (the other files' summaries may have changed); the
    analysis is imported while git lists it only when a named file is to be parsed: here the
    cache answers, and no finding is shown."""
    root = _project(tmp_path)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "pkg" / "good.py").write_text(GOOD)
    old = time.time() - 3600
    os.utime(root / "pkg" / "good.py", (old, old))
    assert _modules(root, "-j", "1", "pkg/good.py")[0] == 0
    code, mods, err = _modules(root, "-j", "1", "pkg/good.py")
    assert code == 0 and "All checks passed!" in err and "aoti_lsp.project.gitls" in mods, err
    assert not mods & {"aoti_lsp.rules", "aoti_lsp.analysis.source", "aoti_lsp.project.project", "tree_sitter._binding"}


def _fixture_texts():
    for folder in (ROOT / "tests" / "fixtures", ROOT / "examples", ROOT / "tests" / "projects"):
        for path in sorted(folder.rglob("*.py")):
            yield path


@pytest.mark.parametrize("options", [{}, {"jagged-names": ["*_len*", "nnz"]}])
def test_the_gate_lets_through_every_file_a_rule_would_check_or_summarise(options):
    """runner.gate drops a file before the rules see it: it must never drop one that any rule
    would check or summarise (`wanted`), on every fixture, example and test project file."""
    from aoti_lsp.analysis.source import Source
    from aoti_lsp.project.project import summarize
    from aoti_lsp.rules import all_rules

    cfg = configmod.Config(options=options)
    clauses = runner.gate(cfg)
    rules = list(all_rules())
    kept = dropped = 0
    for path in _fixture_texts():
        data = path.read_bytes()
        source = Source(data, str(path))
        needed = runner.wanted(source, rules, cfg) or bool(summarize(Source(data, str(path)), cfg))
        if needed:
            assert runner.passes(clauses, data), path
            kept += 1
        dropped += not runner.passes(clauses, data)
    assert kept > 50 and dropped > 0  # the fixtures hold both kinds


def test_the_gate_is_kept_in_the_cache(tmp_path, monkeypatch, capsys):
    root = _project(tmp_path)
    monkeypatch.chdir(root)
    assert cli.main(["--check", "-j", "1", "."]) == 1
    capsys.readouterr()
    cfg = configmod.load(str(root))
    assert cachemod.Cache(str(root), cfg).gate == runner.gate(cfg)


def test_the_tool_key_reads_no_file_and_follows_a_file_change(tmp_path, monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("the tool key opened a file")

    monkeypatch.setattr(builtins, "open", refuse)
    key = cachemod._tool_key()
    assert len(key) == 32
    monkeypatch.undo()
    (tmp_path / "a.py").write_text("x = 1\n")
    import hashlib

    def stat_key():
        h = hashlib.blake2b(digest_size=16)
        cachemod._stat_tree(h, str(tmp_path))
        return h.hexdigest()

    before = stat_key()
    os.utime(tmp_path / "a.py", ns=(1, 1))
    assert stat_key() != before


def test_no_worker_pool_for_a_small_tree_unless_asked(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    for i in range(runner.PARALLEL_MIN + 6):
        (tmp_path / f"p{i}.py").write_text(BAD.replace("so", f"so{i}"))
    monkeypatch.chdir(tmp_path)
    pools = []
    real = runner._run_pool
    monkeypatch.setattr(runner, "_run_pool", lambda *a, **k: pools.append(1) or real(*a, **k))
    monkeypatch.setattr(runner.os, "cpu_count", lambda: 2)
    assert cli.main(["--check", "--no-cache", "--output-format", "json", "."]) == 1
    auto = json.loads(capsys.readouterr().out)
    assert pools == []  # a few KB: one process
    assert cli.main(["--check", "--no-cache", "--output-format", "json", "-j", "2", "."]) == 1
    assert pools == [1] and json.loads(capsys.readouterr().out) == auto
    monkeypatch.setattr(runner, "PARALLEL_BYTES", 1)  # past the size: the default uses the cores
    assert cli.main(["--check", "--no-cache", "--output-format", "json", "."]) == 1
    assert pools == [1, 1] and json.loads(capsys.readouterr().out) == auto


@pytest.mark.parametrize("select, ignore", [(("ALL",), ()), (("AOTI0",), ()), (("ALL",), ("AOTI2",)), (("AOTI3",), ())])
def test_the_trigger_table_is_what_the_rules_compute(select, ignore):
    """triggers.py lets a run drop files without importing the rules: it must say exactly what
    they say (a rule's new token or a new rule fails this: copy the printed table)."""
    import pprint

    from aoti_lsp.project import triggers
    from aoti_lsp.project.project import summarizers
    from aoti_lsp.rules import all_rules, minimal

    cfg = configmod.Config(select=select, ignore=ignore)
    checks = tuple((r.code, (minimal(r.requires_any), minimal(r.triggers)) if r.requires_any else (minimal(r.triggers), ()))
                   for r in all_rules())
    summaries = tuple((r.code, (minimal(tuple(r.summary_triggers if r.summary_triggers is not None else r.triggers)), ()))
                      for r in summarizers())
    assert (triggers.CHECKS, triggers.SUMMARIES) == (checks, summaries), pprint.pformat((checks, summaries), width=110)
    assert triggers.clauses(cfg) == runner.gate(cfg)
    assert triggers.CODES == tuple(r.code for r in all_rules()) == tuple(configmod.known_codes())
    assert triggers.clauses(configmod.Config(options={"jagged-names": ["nnz"]})) is None  # the rules decide


def test_a_file_renamed_over_another_with_its_mtime_and_size_is_read_again(tmp_path, monkeypatch, capsys):
    """The stamp holds the inode: an editor's or git's write-and-rename with the same mtime and
    size (a tool that keeps mtimes, a coarse clock) is still a change."""
    root = _project(tmp_path)
    monkeypatch.chdir(root)
    target = root / "pkg" / "m5.py"
    assert cli.main(["--check", "-j", "1", "pkg/m5.py"]) == 0
    capsys.readouterr()
    before = target.stat()
    swap = root / "pkg" / "swap.tmp"
    bad = "import torch\nr = torch._export.aot_load(s, 'cpu')\n"
    text = PLAIN + "X5 = 5\n"
    swap.write_text(bad + "#" * (len(text) - len(bad) - 1) + "\n")
    assert swap.stat().st_size == before.st_size
    os.utime(swap, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(swap, target)
    assert (target.stat().st_mtime_ns, target.stat().st_size) == (before.st_mtime_ns, before.st_size)
    assert cli.main(["--check", "-j", "1", "pkg/m5.py"]) == 1
    assert "AOTI002" in capsys.readouterr().out


def test_a_check_with_findings_parses_no_toml_when_nothing_configures_aoti_lsp(tmp_path):
    """The rules' tables are read as JSON (data/*.json, kept equal to the TOML by
    test_rules_meta), and a pyproject.toml that never spells "aoti" is not parsed: no tomllib in
    a run; a pyproject.toml with our table is still read."""
    root = _project(tmp_path)
    code = "import sys; from aoti_lsp.cli.main import main; rc = main(sys.argv[1:]); " \
           "print(sorted(m for m in ('tomllib',) if m in sys.modules), file=sys.stderr); sys.exit(rc)"
    out = subprocess.run([sys.executable, "-c", code, "--check", "--no-cache", "pkg/bad.py"], cwd=root,
                         capture_output=True, text=True)
    assert out.returncode == 1 and "Found 2 findings." in out.stderr, out.stderr
    assert out.stderr.strip().splitlines()[-1] == "[]", out.stderr
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n[tool.aoti-lsp]\nignore = ['AOTI002']\n")
    out = subprocess.run([sys.executable, "-c", code, "--check", "--no-cache", "pkg/bad.py"], cwd=root,
                         capture_output=True, text=True)
    assert "Found 1 finding." in out.stderr and "'tomllib'" in out.stderr.strip().splitlines()[-1], out.stderr


@pytest.mark.parametrize("options", [{}, {"jagged-names": ["*_len*", "nnz"]}])
def test_the_rules_a_file_imports_are_every_rule_that_would_check_or_summarise_it(options):
    """rules.rules_for gives a file only the rules its tokens concern (triggers.codes_for): never
    one short of the rules that would check or summarise it, on every fixture, example and test
    project file; fewer than all of them for many files (without rule options: with them, None)."""
    from aoti_lsp.analysis.source import Source
    from aoti_lsp.project import triggers
    from aoti_lsp.rules import all_rules, rules_for

    cfg = configmod.Config(options=options)
    fewer = 0
    for path in _fixture_texts():
        source = Source(path.read_bytes(), str(path))
        needed = {r.code for r in all_rules() if r.wants(source, cfg) or (hasattr(r, "summarize") and r.wants_summary(source, cfg))}
        codes = triggers.codes_for(source.has, cfg)
        if options:
            assert codes is None
            continue
        assert needed <= set(codes) and list(codes) == sorted(codes), (path, needed, codes)
        fewer += len(codes) < len(all_rules())
        assert {r.code for r in rules_for(source, cfg)} >= needed
    assert fewer > 50 or options


def test_a_check_of_a_file_with_aoti_code_imports_only_the_rules_its_tokens_concern(tmp_path):
    """A pre-commit run on a file with one rule's code (AOTI301's environment variable)
    imports that rule's module, not the others (the device and jagged analyses, the
    migration planner): each costs milliseconds of the hook's start."""
    root = _project(tmp_path)
    (root / "pkg" / "bad.py").unlink()  # its compile is summarised for the project: every AOTI rule
    (root / "pkg" / "env.py").write_text(
        "import os\nimport torch\nx = torch.ones(2).cuda()\nos.environ.setdefault('CUDA_LAUNCH_BLOCKING', '1')\n")
    code, mods, err = _modules(root, "-j", "1", "pkg/env.py")
    assert code == 1 and "Found 1 finding." in err, err
    rules = {m for m in mods if m.startswith("aoti_lsp.rules.")}
    assert rules == {"aoti_lsp.rules.aoti301"}, sorted(rules)
    assert not mods & {"aoti_lsp.analysis.devices", "aoti_lsp.analysis.jagged", "aoti_lsp.fixes.plan"}


def test_a_file_summarised_for_the_jagged_rules_but_not_checked_by_them_imports_no_jagged_fixer(tmp_path):
    """A compile without a jagged input is summarised by AOTI201/202 (other files may call its
    package) but checked by neither: their fixer (fixes/jagged.py) is not imported."""
    root = _project(tmp_path)
    os.utime(root / "pkg" / "bad.py")  # changed since the cache: checked in this run
    code, mods, err = _modules(root, "-j", "1", "--no-cache", "pkg/bad.py")
    assert code == 1 and "Found 2 findings." in err, err
    assert {"aoti_lsp.rules.aoti201", "aoti_lsp.analysis.jagged"} <= mods and "aoti_lsp.fixes.jagged" not in mods


def _installed_env() -> dict:
    """The environment of a run as pip installs aoti-lsp (with `-S`: no site, no editable-install
    finder): the package's folder and its dependencies' on the path."""
    import sysconfig

    import aoti_lsp

    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(aoti_lsp.__file__).parents[1]),
                                                         sysconfig.get_paths()["purelib"]])}


_ALL_MODULES = """
import sys
from aoti_lsp.cli.main import main
code = main(sys.argv[1:])
made = sorted(f"{m}.{k}" for m, mod in list(sys.modules.items()) if m.startswith("aoti_lsp")
              for k, v in vars(mod).items() if isinstance(v, type) and v.__module__ == m and "__dataclass_fields__" in vars(v))
print(sorted(sys.modules), made, file=sys.stderr)
sys.exit(code)
"""
def test_a_pre_commit_check_of_a_file_with_aoti_code_imports_nothing_it_does_not_use(tmp_path):
    """The hook on one changed file with AOTI code (bench.py section d): no logging (nothing is
    logged), no zipfile (no .pt2 is read), no shutil or importlib.resources (argparse's width,
    the grammar package's __init__), no difflib (a notebook's diff), no notebook.py (a .py file's report), no fixer (what
    --fix applies), no subprocess (gitls.py
    starts git), no argparse, gettext or locale (cli/args.py parses the hook's command line),
    no threading nor signal's enums (budget.py arms its timer with _signal), no typing (treesitter.py
    skips tree_sitter's __init__), no json package (jsonc.py: the cache, the rules' tables; ~1 ms); and no dataclass (records.py: the dataclasses module alone costs ~7 ms of the hook's ~65,
    each class ~0.5 ms more)."""
    root = _project(tmp_path)
    run = [sys.executable, "-c", _ALL_MODULES, "--check", "pkg/bad.py"]
    assert subprocess.run(run, cwd=root, capture_output=True).returncode == 1  # fills the cache
    (root / "pkg" / "bad.py").write_text(BAD + "\n# edited\n")
    out = subprocess.run(run, cwd=root, capture_output=True, text=True)
    assert out.returncode == 1 and "Found 2 findings." in out.stderr, out.stderr
    mods, made = eval(out.stderr.strip().splitlines()[-1].replace("] [", "], ["))
    assert {"aoti_lsp.rules.aoti001", "aoti_lsp.analysis.devices", "aoti_lsp.analysis.jagged"} <= set(mods)
    unused = {"logging", "zipfile", "shutil", "importlib.resources", "difflib", "tempfile", "tree_sitter_python",
              "aoti_lsp.analysis.pt2", "libcst", "dataclasses", "inspect", "subprocess",
              "argparse", "gettext", "locale", "threading", "typing", "signal",
              "aoti_lsp.project.notebook", "aoti_lsp.fixes.fixer", "aoti_lsp.fixes.layout", "json"}
    assert not unused & set(mods), sorted(unused & set(mods))
    assert made == [], made


def test_a_pre_commit_check_as_installed_imports_neither_contextlib_nor_importlib(tmp_path):
    """The hook as pip installs it (`-S`, the package and its dependencies on the path: no
    editable-install finder, which imports both): on a changed file with AOTI code and on one
    without, no contextlib (budget.py's and cache.py's context managers are classes) and no
    importlib.util (aoti_lsp.find_spec asks the finders; ~0.6 ms of the run), nor the importlib
    package itself, which imports warnings (grammar.py loads the grammar with the import system's
    own finder and loader; rules/__init__ imports a rule's module with __import__)."""
    root = _project(tmp_path)
    if shutil.which("git") is not None:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = _installed_env()
    for name, code, said in (("bad.py", 1, "Found 2 findings."), ("m0.py", 0, "All checks passed!")):
        run = [sys.executable, "-S", "-c", _ALL_MODULES, "--check", f"pkg/{name}"]
        subprocess.run(run, cwd=root, capture_output=True, env=env)  # fills the cache
        (root / "pkg" / name).write_text((root / "pkg" / name).read_text() + "\n# edited\n")
        out = subprocess.run(run, cwd=root, capture_output=True, text=True, env=env)
        assert out.returncode == code and said in out.stderr, out.stderr
        mods, _ = eval(out.stderr.strip().splitlines()[-1].replace("] [", "], ["))
        assert not {"contextlib", "importlib", "importlib.util", "importlib._abc", "warnings"} & set(mods), (name, sorted(mods))
    assert "aoti_lsp.analysis.budget" in mods and "aoti_lsp.project.cache" in mods


def test_a_pre_commit_check_of_a_file_without_aoti_code_imports_neither_re_enum_nor_json(tmp_path):
    """Most commits: the hook on one changed file without AOTI code, as pip 26.3's console script
    runs it (its template imports no `re`: bench.console_script), reads and writes the cache.
    None of `re` (with enum: ~7 ms), `enum` (findings.Choice) nor the json package (~2 ms more:
    plaindata runs json's C encoder and scanner itself) is imported: the whole run was ~20 ms."""
    root = _project(tmp_path)
    if shutil.which("git") is not None:  # as a commit's: git lists the project
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = _installed_env()
    run = [sys.executable, "-S", "-c", _ALL_MODULES, "--check", "pkg/m0.py"]
    subprocess.run(run, cwd=root, capture_output=True, env=env)  # fills the cache
    (root / "pkg" / "m0.py").write_text(PLAIN + "# edited\n")
    out = subprocess.run(run, cwd=root, capture_output=True, text=True, env=env)
    assert out.returncode == 0 and "All checks passed!" in out.stderr, out.stderr
    mods, _ = eval(out.stderr.strip().splitlines()[-1].replace("] [", "], ["))
    assert "aoti_lsp.project.cache" in mods and "aoti_lsp.project.plaindata" in mods
    assert not {"re", "enum", "json", "fnmatch"} & set(mods), sorted({"re", "enum", "json", "fnmatch"} & set(mods))
    assert (root / ".aoti_lsp_cache").is_dir()  # the cache was written (without json) and read back


def test_a_pre_commit_check_of_a_file_with_aoti_code_imports_neither_re_nor_fnmatch(tmp_path):
    """The hook on a changed file with AOTI code and a model (bench.py section d's shape), as
    installed (`-S`): no `re` nor fnmatch (~5 ms of a ~35 ms run). tree-sitter's extension takes
    `re.compile` when it loads and gets a stand-in (treesitter.py); names, keywords and device
    strings are read by bytes; AOTI201's regexes and fnmatch run only where a jagged name is spelt."""
    root = _project(tmp_path)
    if shutil.which("git") is not None:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = _installed_env()
    run = [sys.executable, "-S", "-c", _ALL_MODULES, "--check", "pkg/bad.py"]
    subprocess.run(run, cwd=root, capture_output=True, env=env)  # fills the cache
    (root / "pkg" / "bad.py").write_text(BAD + "\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
                                         "        return x.relu()\n\n# edited\n")
    out = subprocess.run(run, cwd=root, capture_output=True, text=True, env=env)
    assert out.returncode == 1 and "Found 2 findings." in out.stderr, out.stderr
    mods, _ = eval(out.stderr.strip().splitlines()[-1].replace("] [", "], ["))
    assert {"aoti_lsp.rules.aoti001", "aoti_lsp.rules.aoti201", "aoti_lsp.analysis.jagged"} <= set(mods)
    assert not {"re", "fnmatch"} & set(mods), sorted({"re", "fnmatch"} & set(mods))


def test_a_folder_outside_git_without_aoti_code_starts_no_process_nor_imports_typing_or_dataclasses(tmp_path):
    """A tree outside any git work tree (an export, a CI copy: what the bench's trees are) is
    walked without asking git (a failing `git` and the subprocess module cost ~5 ms); a run
    that parses nothing imports neither typing, dataclasses nor pathlib (~3, ~7 and ~3 ms), nor
    signal and threading (budget.py's timer: ~0.8 ms). In a
    work tree git is still asked, so .gitignore'd files stay out. Run as pip installs the CLI
    (the package and its dependencies on the path, `-S`: no editable-install finder, which
    imports pathlib itself)."""
    (tmp_path / "pkg").mkdir()
    for i in range(5):
        (tmp_path / "pkg" / f"m{i}.py").write_text(PLAIN)
    (tmp_path / "ignored.py").write_text(BAD)
    env = _installed_env()
    run = [sys.executable, "-S", "-c", _ALL_MODULES, "--check", "--no-cache", "pkg"]
    out = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0 and "All checks passed!" in out.stderr, out.stderr
    mods, _ = eval(out.stderr.strip().splitlines()[-1].replace("] [", "], ["))
    heavy = {"subprocess", "aoti_lsp.project.gitls", "typing", "dataclasses", "pathlib", "tree_sitter._binding", "signal",
             "threading"}
    assert not heavy & set(mods), sorted(heavy & set(mods))
    # the same folder as a work tree: git is asked, and what it ignores is not checked
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    out = subprocess.run([*run[:-1], "."], cwd=tmp_path, capture_output=True, text=True, env=env)
    mods, _ = eval(out.stderr.strip().splitlines()[-1].replace("] [", "], ["))
    assert out.returncode == 0 and "aoti_lsp.project.gitls" in mods, out.stderr
    (tmp_path / ".gitignore").write_text("")
    out = subprocess.run([*run[:-1], "."], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 1 and "ignored.py" in out.stdout, out.stdout + out.stderr


def test_tree_sitter_is_loaded_without_its_init_and_imported_later_as_usual():
    """treesitter.py (no typing yet): tree_sitter's own classes, from its extension module; a
    later `import tree_sitter` runs the package's __init__ and gives the same classes."""
    code = ("import sys\nfrom aoti_lsp.analysis import treesitter as t\n"
            "assert 'typing' not in sys.modules and 'tree_sitter' not in sys.modules\n"
            "from aoti_lsp.analysis.source import Source\n"
            "assert Source(b'x = 1\\n', 'm.py').tree.root_node.type == 'module'\n"
            "import tree_sitter\n"
            "assert (t.Language, t.Node, t.Parser, t.Query, t.QueryCursor, t.Tree) == (tree_sitter.Language, "
            "tree_sitter.Node, tree_sitter.Parser, tree_sitter.Query, tree_sitter.QueryCursor, tree_sitter.Tree)\n"
            "assert tree_sitter.QueryPredicate and 'typing' in sys.modules\n")
    # as installed (-S: no site, no editable-install finder): the package's folder and its dependencies'
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=_installed_env())
    assert out.returncode == 0, out.stderr


def test_find_spec_is_importlib_util_find_spec():
    """aoti_lsp.find_spec (no importlib.util on the hook's path) finds what importlib.util does:
    the cache's tool key reads the folders it names."""
    import importlib.util

    from aoti_lsp import find_spec

    for name in ("tree_sitter", "tree_sitter_python", "aoti_lsp.queries", "aoti_lsp.rules.aoti001", "json", "sys",
                 "no_such_module_here", "aoti_lsp.no_such_module"):
        ours, theirs = find_spec(name), importlib.util.find_spec(name)
        assert (ours is None) == (theirs is None), name
        if ours is not None:
            assert (ours.name, ours.origin, ours.submodule_search_locations) == (
                theirs.name, theirs.origin, theirs.submodule_search_locations), name
