"""The project root, the file sets, and the on-disk cache (.aoti_lsp_cache/)."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from aoti_lsp.project import cache as cachemod
from aoti_lsp.cli import main as cli
from aoti_lsp.analysis import source
from aoti_lsp.analysis.records import replace
from aoti_lsp.project.config import Config
from aoti_lsp.project.files import by_root, find_root, project_files

PROJECTS = Path(__file__).parent / "projects"


def run(capsys, *args) -> tuple[int, str]:
    code = cli.main(["--check", "-j", "1", "--output-format", "json", *args])
    out = capsys.readouterr().out
    return code, out


def findings(out: str) -> list[tuple]:
    """(path relative to the working folder, row, code); JSON file names are absolute."""
    def shown(path):
        rel = os.path.relpath(path)
        return Path(path if rel.startswith("..") else rel).as_posix()

    return [(shown(f["filename"]), f["location"]["row"], f["code"]) for f in json.loads(out or "[]") if f["code"]]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """aoti102_cross_file (app.py runs a package scripts/make_package.py compiles for cuda) in a git repository."""
    folder = tmp_path / "proj"
    shutil.copytree(PROJECTS / "aoti102_cross_file", folder, ignore=shutil.ignore_patterns("expected"))
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def parses(monkeypatch):
    """How many files were parsed (tree-sitter) in this process."""
    count = [0]
    real = source.parser

    def counting():
        count[0] += 1
        return real()

    monkeypatch.setattr(source, "parser", counting)
    return count


CROSS = [("app.py", 12, "AOTI102")]


# -- the root --------------------------------------------------------------------------------------
def test_root_is_nearest_pyproject_then_git_top_then_common_parent(tmp_path):
    (tmp_path / "repo" / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    f = tmp_path / "repo" / "pkg" / "sub" / "m.py"
    f.write_text("")
    assert find_root([str(f)]) == str(tmp_path / "repo")  # no pyproject: the work tree's top
    (tmp_path / "repo" / "pkg" / "pyproject.toml").write_text("")
    assert find_root([str(f)]) == str(tmp_path / "repo" / "pkg")  # the nearest pyproject.toml
    assert find_root([str(tmp_path / "repo" / "pkg")]) == str(tmp_path / "repo" / "pkg")  # a folder is its own start
    # a pyproject.toml above the work tree does not make the root
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "repo" / "pkg" / "pyproject.toml").unlink()
    assert find_root([str(f)]) == str(tmp_path / "repo")
    # neither: the common parent of the paths
    (tmp_path / "pyproject.toml").unlink()
    shutil.rmtree(tmp_path / "repo" / ".git")
    other = tmp_path / "repo" / "pkg" / "o.py"
    other.write_text("")
    if not any((p / "pyproject.toml").exists() or (p / ".git").exists() for p in tmp_path.parents):
        assert find_root([str(f), str(other)]) == str(tmp_path / "repo" / "pkg")
        assert find_root([str(f)]) == str(f.parent)
        assert by_root([str(f), str(other)]) == [(str(tmp_path / "repo" / "pkg"), [str(f), str(other)])]


def test_one_file_summarises_the_project_but_reports_only_that_file(project):
    cfg = Config(root=str(project))
    check, scan, errors = project_files(["app.py"], cfg, str(project))
    assert check == ["app.py"] and not errors
    assert sorted(scan) == ["app.py", "scripts/make_package.py"]
    check, scan, _ = project_files(["."], cfg, str(project))
    assert check == scan


def test_a_file_no_rule_checks_is_checked_without_listing_the_project(project, capsys, monkeypatch, parses):
    """Most commits touch no AOTI code: such a file cannot have a finding whatever the other
    files say, so the hook's run does not list the project (`git ls-files`), and the cache keeps
    the entries of the files it did not read. A named file with AOTI code still lists it."""
    from aoti_lsp.project import files

    (project / "util.py").write_text("def add(a, b):\n    return a + b\n")
    assert run(capsys, ".")[0] == 1  # the cache holds every file
    listed = []
    real = files.discover
    monkeypatch.setattr(files, "discover", lambda paths, *a: listed.append(list(paths)) or real(paths, *a))
    before = cachemod.Cache(str(project), Config(root=str(project)))
    (project / "util.py").write_text("def add(a, b):\n    return b + a\n")  # edited, as before a commit
    assert run(capsys, "util.py") == (0, "[]\n")
    assert listed == [["util.py"]]  # the named file only: the project was not listed
    after = cachemod.Cache(str(project), Config(root=str(project)))
    key = after.rel(str(project / "util.py"))
    assert set(after.entries) == set(before.entries) and after.entries[key] != before.entries[key]
    assert after.results.keys() == before.results.keys()
    parses[0] = 0
    assert findings(run(capsys, ".")[1]) == CROSS and parses[0] == 0  # the kept results still serve
    listed.clear()
    assert findings(run(capsys, "app.py")[1]) == CROSS  # other files' summaries matter to it: listed
    assert len(listed) == 2 and listed[0] == ["app.py"]


def test_one_file_from_the_root_gives_the_cross_file_finding(project, capsys):
    assert run(capsys, "app.py") == (1, run(capsys, ".")[1])
    assert findings(run(capsys, "app.py")[1]) == CROSS
    assert findings(run(capsys, "scripts/make_package.py")[1]) == []  # the finding is not this file's
    os.chdir("scripts")  # from a sub-folder the root is the same
    code, out = run(capsys, "../app.py")
    assert code == 1 and [(os.path.relpath(p), r, c) for p, r, c in findings(out)] == [("../app.py", 12, "AOTI102")]


def test_gitignored_named_file_is_still_checked(project, capsys):
    # .gitignore'd: not part of `--check .`, but checked (with the project) when named
    (project / ".gitignore").write_text("app.py\n")
    assert findings(run(capsys, ".")[1]) == []
    assert findings(run(capsys, "app.py")[1]) == CROSS


def test_files_of_several_projects_are_checked_each_with_its_own(project, tmp_path, capsys):
    """pre-commit in a monorepo names files of several projects: each is checked with its own."""
    outside = tmp_path / "elsewhere"  # no pyproject.toml, no git: its folder is its project
    outside.mkdir()
    shutil.copy(project / "app.py", outside / "app2.py")
    code, out = run(capsys, "scripts/make_package.py", str(outside / "app2.py"))
    assert code == 0 and findings(out) == []  # not summarised with the first project
    shutil.copytree(project / "scripts", outside / "scripts")
    code, out = run(capsys, "scripts/make_package.py", str(outside / "app2.py"))
    assert code == 1 and findings(out) == [(str(outside / "app2.py"), 12, "AOTI102")]
    # two projects with a pyproject.toml each, in one git repository
    mono = tmp_path / "mono"
    for name in ("a", "b"):
        shutil.copytree(project, mono / name, ignore=shutil.ignore_patterns(".git", cachemod.DIR))
        (mono / name / "pyproject.toml").write_text("")
    subprocess.run(["git", "init", "-q"], cwd=mono, check=True)
    os.chdir(mono)
    code, out = run(capsys, "a/app.py", "b/app.py")
    assert code == 1 and findings(out) == [("a/app.py", 12, "AOTI102"), ("b/app.py", 12, "AOTI102")]
    assert (mono / "a" / cachemod.DIR).is_dir() and (mono / "b" / cachemod.DIR).is_dir()


def test_named_file_that_is_excluded_is_skipped(project, capsys):
    (project / "pyproject.toml").write_text('[tool.aoti-lsp]\nextend-exclude = ["app.py"]\n')
    code, out = run(capsys, "app.py")
    assert code == 0 and findings(out) == []  # as ruff with --force-exclude: pre-commit names every staged file


# -- the cache -------------------------------------------------------------------------------------
def cache_files(folder: Path) -> list[Path]:
    return sorted((folder / cachemod.DIR).glob("*.json"))


def test_cache_is_made_gitignored_and_a_warm_run_parses_nothing(project, capsys, parses):
    assert findings(run(capsys, ".")[1]) == CROSS
    assert parses[0] > 0
    assert (project / cachemod.DIR / ".gitignore").read_text().splitlines()[-1] == "*"
    assert subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True).stdout.count(cachemod.DIR) == 0
    assert len(cache_files(project)) == 1
    _age(project)  # files just written are re-hashed (their mtime could still hide an edit): make them old
    run(capsys, ".")
    parses[0] = 0
    assert findings(run(capsys, ".")[1]) == CROSS
    assert findings(run(capsys, "app.py")[1]) == CROSS
    assert parses[0] == 0
    # a touched file is re-hashed, not parsed
    os.utime(project / "scripts" / "make_package.py")
    assert findings(run(capsys, "app.py")[1]) == CROSS
    assert parses[0] == 0


def _age(folder: Path) -> None:
    for p in folder.rglob("*.py"):
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - 10**10))


def test_a_summary_change_in_another_file_invalidates_the_result(project, capsys):
    assert findings(run(capsys, "app.py")[1]) == CROSS
    make = project / "scripts" / "make_package.py"
    make.write_text(make.read_text().replace('device="cuda"', 'device="cpu"'))
    assert findings(run(capsys, "app.py")[1]) == [("app.py", 13, "AOTI102")]  # now the cuda input is wrong
    make.write_text(make.read_text().replace('device="cpu"', 'device="cuda"'))
    assert findings(run(capsys, "app.py")[1]) == CROSS
    # and the file's own edit
    app = project / "app.py"
    app.write_text(app.read_text().replace("print(runner(torch.randn(4, 8)))", "pass"))
    assert findings(run(capsys, "app.py")[1]) == []


def test_a_change_in_a_module_of_plain_constants_invalidates_the_result(tmp_path, monkeypatch, capsys):
    """paths.py holds only a path (no trigger token: no summary, so no part of the project
    digest); serve.py's finding reads it from disk. Changing it must change a warm run's answer
    as it does a cold one's (before: the cached AOTI101 stayed)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 's'\nversion = '0'\n")
    (tmp_path / "paths.py").write_text('MODEL = "model.so"\n')
    (tmp_path / "build.py").write_text(
        "import torch\n\n\ndef build(m, x):\n"
        "    torch._export.aot_compile(m, (x.cuda(),), options={'aot_inductor.output_path': 'model.so'})\n")
    (tmp_path / "serve.py").write_text("import torch\nfrom paths import MODEL\n\nrunner = torch._export.aot_load(MODEL, 'cpu')\n")
    _age(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert ("serve.py", 4, "AOTI101") in findings(run(capsys, ".")[1])
    (tmp_path / "paths.py").write_text('MODEL = "elsewhere.so"\n')  # now nothing compiles what serve.py loads
    warm = findings(run(capsys, ".")[1])
    assert warm == findings(run(capsys, "--no-cache", ".")[1]) and ("serve.py", 4, "AOTI101") not in warm
    assert findings(run(capsys, "serve.py")[1]) == findings(run(capsys, "--no-cache", "serve.py")[1])


def test_a_change_of_a_caller_read_only_when_asked_invalidates_the_result(tmp_path, monkeypatch, capsys):
    """caller.py spells only `offsets=`: pass 1 summarises it unparsed ("lazy_kw"), and
    inner.py's check reads its calls when it asks (jagged.summary_from_text). Its summary stays
    the same when the call changes: the read, not the digest, must invalidate the cached result."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 's'\nversion = '0'\n")
    (tmp_path / "inner.py").write_text(
        "import torch\n\n\nclass Inner(torch.nn.Module):\n    def forward(self, x, seq_offsets):\n"
        "        return x[: seq_offsets[-1]]\n\n\nrunner = torch._inductor.aoti_load_package('other.pt2')\n")
    incomplete = "from inner import Inner\n\ny = Inner()(x, seq_offsets=l.cumsum(0))\n"
    complete = "import torch\nfrom inner import Inner\n\ny = Inner()(x, seq_offsets=torch.cat([l.new_zeros(1), l.cumsum(0)]))\n"
    (tmp_path / "caller.py").write_text(incomplete)
    _age(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert ("inner.py", 6, "AOTI201") in findings(run(capsys, ".")[1])
    for text, found in ((complete, False), (incomplete, True), (complete, False)):
        (tmp_path / "caller.py").write_text(text)
        warm = findings(run(capsys, ".")[1])
        assert warm == findings(run(capsys, "--no-cache", ".")[1])
        assert (("inner.py", 6, "AOTI201") in warm) == found, (text, warm)
    from aoti_lsp.analysis.source import Source
    from aoti_lsp.project.project import summarize

    assert summarize(Source.from_text(complete, "caller.py"), lazy=True) == {"AOTI201": {"lazy_kw": True}}


def test_a_change_of_an_exporter_read_only_when_asked_invalidates_the_result(tmp_path, monkeypatch, capsys):
    """exporter.py only exports: pass 1 summarises it unparsed ("lazy_exports"), the same summary
    whether it exports models.py's Pool or a class of its own. models.py spells no export: only
    the exporter's text puts its forward in scope, so that read must invalidate the cached result."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 's'\nversion = '0'\n")
    (tmp_path / "models.py").write_text("import torch\n\n\nclass Pool(torch.nn.Module):\n"
                                        "    def forward(self, values, lengths):\n"
                                        "        return values.sum(0) / torch.cumsum(lengths, 0)[-1]\n")
    ours = "import torch\nfrom models import Pool\n\nep = torch.export.export(Pool(), (v, l))\n"
    other = ("import torch\n\n\nclass Other(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
             "ep = torch.export.export(Other(), (x,))\n")
    (tmp_path / "exporter.py").write_text(other)
    _age(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert findings(run(capsys, ".")[1]) == []
    for text, found in ((ours, True), (other, False), (ours, True)):
        (tmp_path / "exporter.py").write_text(text)
        warm = findings(run(capsys, ".")[1])
        assert warm == findings(run(capsys, "--no-cache", ".")[1])
        assert (("models.py", 6, "AOTI201") in warm) == found, (text, warm)
        assert findings(run(capsys, "models.py")[1]) == findings(run(capsys, "--no-cache", "models.py")[1])
    from aoti_lsp.analysis.source import Source
    from aoti_lsp.project.project import summarize

    assert summarize(Source.from_text(ours, "exporter.py"), lazy=True) == \
        summarize(Source.from_text(other, "exporter.py"), lazy=True) == {"AOTI201": {"lazy_exports": True}}


def test_a_mention_of_torch_export_no_rule_reads_leaves_the_jagged_only_files_unparsed(tmp_path, monkeypatch,
                                                                                      capsys, parses):
    """generative-recommenders: one docstring says "so that torch.export / Dynamo can trace" (and
    "export as" is a summary token). No rule reads that file, so it puts nothing in AOTI201/202's
    scope and the files only they look at stay unparsed (before: all were, 38 -> 78 ms)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (tmp_path / "pool.py").write_text("import torch\n\n\nclass Pool(torch.nn.Module):\n"
                                      "    def forward(self, values, lengths):\n        return values.sum(0) / lengths.cumsum(0)[-1]\n"
                                      "\n\ndef offsets(lengths):  # a summary token: parsed whenever scanned\n"
                                      "    return torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)\n")
    (tmp_path / "ops.py").write_text('def unwrap(t):\n    """So that torch.export can trace it; export as a plain tensor."""\n'
                                     "    return t\n")
    _age(tmp_path)
    monkeypatch.chdir(tmp_path)
    for args in (("--no-cache",), (), ()):
        assert run(capsys, *args, ".") == (0, "[]\n") and parses[0] == 0
    (tmp_path / "build.py").write_text("import torch\nfrom pool import Pool\n\n"
                                       "torch._inductor.aoti_compile_and_package(torch.export.export(Pool(), (v, l)))\n")
    assert ("pool.py", 6, "AOTI201") in findings(run(capsys, ".")[1]) and parses[0] > 0  # within reach now


def test_a_config_or_rule_change_invalidates(project, capsys, monkeypatch):
    assert findings(run(capsys, ".")[1]) == CROSS
    (project / "pyproject.toml").write_text('[tool.aoti-lsp]\nignore = ["AOTI102"]\n')
    assert findings(run(capsys, ".")[1]) == []
    assert len(cache_files(project)) == 2  # one per configuration
    (project / "pyproject.toml").unlink()
    monkeypatch.setattr(cachemod, "_TOOL", "another build")  # e.g. an edited rule
    assert findings(run(capsys, ".")[1]) == CROSS
    assert len(cache_files(project)) == 3


def _poison(folder: Path) -> None:
    """Make the (valid) cache claim app.py's finding for make_package.py: proves the cache is read."""
    c = cachemod.Cache(str(folder), _cfg(folder))
    app, make = c.rel("app.py"), c.rel("scripts/make_package.py")
    _, digest, fake, deps = c.results[app]
    entry = c.entries[make]
    c.entries[make] = replace(entry, checks=True)
    c.results[make] = (entry.hash, digest, fake, deps)
    c.seen, c.dirty = set(c.entries), True
    c.save(digest)


def _cfg(folder: Path) -> Config:
    from aoti_lsp.analysis.records import replace

    from aoti_lsp.project import config as configmod

    return replace(configmod.load(str(folder)), root=str(folder))


def test_no_cache_neither_reads_nor_writes(project, capsys):
    assert run(capsys, "--no-cache", ".")[0] == 1
    assert not (project / cachemod.DIR).exists()
    run(capsys, ".")
    _age(project)
    run(capsys, ".")
    _poison(project)
    assert [f[::2] for f in findings(run(capsys, "scripts/make_package.py")[1])] == [("scripts/make_package.py", "AOTI102")]
    assert findings(run(capsys, "--no-cache", "scripts/make_package.py")[1]) == []
    # --fix / --diff never use cached results
    code = cli.main(["--check", "-j", "1", "--diff", "--unsafe-fixes", "scripts/make_package.py"])
    assert code == 0 and capsys.readouterr().out == ""


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign", "wrong types", "wrong findings", "code",
                                    "other class", "deep"])
def test_a_bad_cache_is_ignored_and_rebuilt(project, capsys, damage):
    run(capsys, ".")
    path = cache_files(project)[0]
    blob = path.read_bytes()
    marker = project / "pwned"
    if damage == "garbage":
        path.write_bytes(os.urandom(len(blob)))
    elif damage == "truncated":
        path.write_bytes(blob[: len(blob) // 2])
    else:
        if damage == "foreign":  # another build's cache under this name: checksum fine, key wrong
            data = _unpickle(blob)
            data["key"] = "0" * 24
        elif damage == "wrong types":
            data = _unpickle(blob)
            data["entries"] = {k: ("not", "an", "entry") for k in data["entries"]}
        elif damage == "wrong findings":
            data = _unpickle(blob)
            data["results"] = {k: (h, d, ["not a finding"], deps) for k, (h, d, _, deps) in data["results"].items()}
        elif damage == "other class":  # a class outside the allow-list, by name
            data = _unpickle(blob)
            data["entries"] = {k: "EVIL" for k in data["entries"]}
        if damage == "code":  # a pickle that would run code when loaded (the format before JSON)
            payload = pickle.dumps(_Evil(str(marker)))
        elif damage == "deep":  # nesting past the recursion limit
            payload = b"[" * 100_000 + b"]" * 100_000
        elif damage == "other class":
            payload = cachemod.plaindata.dumps(data).replace(
                b'"EVIL"', b'{"c":"Popen","v":[["touch","%s"]]}' % str(marker).encode())
        else:
            payload = cachemod.plaindata.dumps(data)
        path.write_bytes(cachemod.MAGIC + hashlib.blake2b(payload, digest_size=16).hexdigest().encode() + payload)
    assert findings(run(capsys, ".")[1]) == CROSS
    assert findings(run(capsys, "app.py")[1]) == CROSS
    assert not marker.exists()
    assert path.read_bytes().startswith(cachemod.MAGIC)
    assert isinstance(_unpickle(path.read_bytes()), dict)  # rebuilt


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def _unpickle(blob: bytes):
    return cachemod.plaindata.loads(blob[len(cachemod.MAGIC) + 32:])


def test_a_root_that_cannot_be_written_runs_without_cache(project, capsys):
    (project / cachemod.DIR).write_text("a file where the cache folder would be")
    assert findings(run(capsys, ".")[1]) == CROSS
    assert findings(run(capsys, "app.py")[1]) == CROSS


def _serving(folder: Path, monkeypatch) -> Path:
    """A git project whose serve.py loads m.pt2 (not written) and calls it with a CPU tensor."""
    folder.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    monkeypatch.chdir(folder)
    (folder / "serve.py").write_text(
        "import torch\n\nrunner = torch._inductor.aoti_load_package('m.pt2')\nrunner(torch.randn(4, 8))\n")
    return folder


def _package(folder: Path, device: str) -> None:
    with zipfile.ZipFile(folder / "m.pt2", "w") as z:
        z.writestr("m/data/aotinductor/model/abc.wrapper_metadata.json", json.dumps({"AOTI_DEVICE_KEY": device}))


def test_a_result_read_from_a_pt2_on_disk_follows_the_package(tmp_path, monkeypatch, capsys):
    """A finding that comes from a `.pt2` package on disk is re-checked when the package changes."""
    folder = _serving(tmp_path / "disk", monkeypatch)
    _package(folder, "cuda")
    assert findings(run(capsys, "serve.py")[1]) == [("serve.py", 4, "AOTI102")]
    _package(folder, "cpu")
    st = (folder / "m.pt2").stat()
    os.utime(folder / "m.pt2", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert findings(run(capsys, "serve.py")[1]) == []


def test_a_result_follows_a_pt2_that_appears_on_disk(tmp_path, monkeypatch, capsys):
    """A load of a package that is not there yet (the reader of packages is not even imported
    then) is checked again once the package is written."""
    folder = _serving(tmp_path / "later", monkeypatch)
    assert findings(run(capsys, "serve.py")[1]) == []
    _package(folder, "cuda")
    assert findings(run(capsys, "serve.py")[1]) == [("serve.py", 4, "AOTI102")]


def test_cached_findings_are_the_same_as_fresh_ones(project, capsys):
    fresh = cli.main(["--check", "-j", "1", "--output-format", "json", "--no-cache", "."]), capsys.readouterr().out
    run(capsys, ".")
    _age(project)
    run(capsys, ".")
    assert (cli.main(["--check", "-j", "1", "--output-format", "json", "."]), capsys.readouterr().out) == fresh
    os.chdir("scripts")
    fresh = cli.main(["--check", "-j", "1", "--output-format", "sarif", "--no-cache", ".."]), capsys.readouterr().out
    assert (cli.main(["--check", "-j", "1", "--output-format", "sarif", ".."]), capsys.readouterr().out) == fresh


def test_old_cache_files_are_pruned(project, capsys, monkeypatch):
    for k in range(cachemod.KEEP + 3):
        monkeypatch.setattr(cachemod, "_TOOL", f"build {k}")
        run(capsys, ".")
    assert len(cache_files(project)) == cachemod.KEEP


def _mutate(rng, path: Path) -> None:
    """One random edit of the kind that moves cross-file facts: a device swapped, an artifact
    path renamed, a line dropped, or a comment added."""
    text = path.read_text()
    swaps = [(a, b) for a, b in (("cuda", "cpu"), ("cpu", "cuda"), (".so", "_x.so"), (".pt2", "_y.pt2"),
                                 ("model", "modl")) if a in text]
    lines = text.splitlines(True)
    pick = rng.random()
    if swaps and pick < 0.6:
        a, b = rng.choice(swaps)
        at = rng.choice([i for i in range(len(text)) if text.startswith(a, i)])
        text = text[:at] + b + text[at + len(a):]
    elif pick < 0.8 and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
        text = "".join(lines)
    else:
        text += "# edited\n"
    path.write_text(text)


@pytest.mark.parametrize("seed", range(4))
def test_a_warm_run_says_what_a_cold_one_says_after_random_edits(tmp_path, monkeypatch, capsys, seed):
    """Every multi-file project of tests/projects, edited at random a dozen times: after each
    edit the cached run (the whole tree, or one file named) gives exactly the findings of a
    run without cache. (It found the cached AOTI102 that outlived a change of pkg/paths.py.)"""
    import random

    rng = random.Random(seed)
    for proj in sorted(PROJECTS.iterdir()):
        folder = tmp_path / proj.name
        shutil.copytree(proj, folder, ignore=shutil.ignore_patterns("expected"))
        if not (folder / "pyproject.toml").exists():
            (folder / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
        monkeypatch.chdir(folder)
        files = sorted(folder.rglob("*.py"))
        _age(folder)
        run(capsys, ".")
        for step in range(12):
            edited = rng.choice(files)
            _mutate(rng, edited)
            _age(folder)  # older than the cache's racy window, as a file saved a while ago
            which = rng.choice([".", str(rng.choice(files).relative_to(folder))])
            warm, cold = run(capsys, which), run(capsys, "--no-cache", which)
            assert warm == cold, (proj.name, step, edited.relative_to(folder), which)
