"""Fixture projects, each checked three ways with the same expected findings.

A project is a folder `tests/projects/<name>/` holding its files and an `expected` file: one
`relative/path.py:ROW:COL: CODE` line per finding (no messages; `#` comments and blank lines
allowed; an empty file for a project without findings). Each is copied to a scratch folder,
made a git repository, and checked:

1. `aoti-lsp --check .` from the root: every expected line (cold, then warm from the cache,
   then with --no-cache: the same);
2. `aoti-lsp --check <file>` from the root, for every Python file: exactly that file's lines
   (the rest of the project is still summarised: cross-file findings are kept);
3. a real `git commit` with only that file staged, through pre-commit and this repository's
   hook: blocked exactly when the file has expected lines, showing exactly those.

New folders under tests/projects/ are picked up by themselves.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROJECTS = HERE / "projects"
AOTI = str(Path(sys.executable).with_name("aoti-lsp"))
FINDING = re.compile(r"^(\S+?\.pyi?):(\d+):(\d+): (AOTI\d+)\b", re.M)
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1"}


def names() -> list[str]:
    return sorted(p.name for p in PROJECTS.iterdir() if p.is_dir() and (p / "expected").is_file())


def expected(name: str) -> set[str]:
    lines = (PROJECTS / name / "expected").read_text("utf-8").splitlines()
    out = {line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")}
    bad = [line for line in out if not FINDING.fullmatch(line)]
    assert not bad, f"{name}/expected: not `path.py:ROW:COL: CODE`: {bad}"
    return out


def found(output: str) -> set[str]:
    return {f"{Path(p).as_posix()}:{r}:{c}: {code}" for p, r, c, code in FINDING.findall(output)}


def python_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.py*")
                  if p.suffix in (".py", ".pyi") and ".git" not in p.parts)


def git(cwd, *args, check=True):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check,
                          env={**os.environ, **GIT_ENV})


def copy(name: str, dest: Path) -> Path:
    """The project in a scratch git repository (no commit yet)."""
    folder = dest / name
    shutil.copytree(PROJECTS / name, folder, ignore=shutil.ignore_patterns("expected", "__pycache__"))
    git(folder, "init", "-q")
    return folder


def aoti(cwd, *args):
    return subprocess.run([AOTI, "--check", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=300)


def test_projects_exist():
    assert len(names()) >= 3


@pytest.mark.parametrize("name", names())
def test_check_all(name, tmp_path):
    folder = copy(name, tmp_path)
    want = expected(name)
    runs = {"cold": aoti(folder, "."), "warm": aoti(folder, "."), "no cache": aoti(folder, ".", "--no-cache")}
    for how, run in runs.items():
        assert run.returncode == (1 if want else 0), f"{how}: {run.stdout}{run.stderr}"
        assert found(run.stdout) == want, how
    assert runs["cold"].stdout == runs["warm"].stdout == runs["no cache"].stdout


@pytest.mark.parametrize("name", names())
def test_check_each_file(name, tmp_path):
    folder = copy(name, tmp_path)
    want = expected(name)
    files = python_files(folder)
    assert {line.split(":")[0] for line in want} <= set(files), "expected names a file the project lacks"
    for rel in files:
        mine = {line for line in want if line.split(":")[0] == rel}
        run = aoti(folder, rel)
        assert run.returncode == (1 if mine else 0), f"{rel}: {run.stdout}{run.stderr}"
        assert found(run.stdout) == mine, rel


# -- pre-commit ------------------------------------------------------------------------------------
LOCAL_HOOK = """repos:
- repo: local
  hooks:
  - id: aoti-lsp
    name: aoti-lsp
    entry: {aoti} --check
    language: system
    types_or: [python, pyi]
    require_serial: true
"""


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory):
    """One pre-commit store for the session: the local hook's environment is made once."""
    return tmp_path_factory.mktemp("pre-commit-home")


def commit_each_file(folder: Path, config: str, home: Path, want: set[str], only: list[str] | None = None) -> None:
    """Commit the hook config first (hooks skipped), then each Python file alone: the commit is
    blocked exactly when that file has expected lines, and the hook shows exactly those."""
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    (folder / ".pre-commit-config.yaml").write_text(config)
    git(folder, "add", ".pre-commit-config.yaml")
    git(folder, "commit", "-qm", "hook config", "--no-verify")
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=folder, env=env, check=True,
                   capture_output=True)
    for rel in only or python_files(folder):
        mine = {line for line in want if line.split(":")[0] == rel}
        git(folder, "reset", "-q")  # nothing staged but this file
        git(folder, "add", rel)
        staged = git(folder, "diff", "--cached", "--name-only").stdout.split()
        assert staged == [rel]
        commit = subprocess.run(["git", "commit", "-qm", f"add {rel}"], cwd=folder, capture_output=True, text=True,
                                env=env, timeout=900)
        out = commit.stdout + commit.stderr
        assert (commit.returncode != 0) == bool(mine), f"{rel}: {out}"
        assert found(out) == mine, f"{rel}: {out}"
        if not mine:
            assert rel not in git(folder, "status", "--porcelain").stdout, "the commit went through"


@pytest.mark.parametrize("name", names())
def test_commit_each_file(name, tmp_path, pre_commit_home):
    folder = copy(name, tmp_path)
    commit_each_file(folder, LOCAL_HOOK.format(aoti=AOTI), pre_commit_home, expected(name))


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """A committed snapshot of this working tree: pre-commit installs hooks from a git rev."""
    repo = tmp_path_factory.mktemp("hookrepo") / "aoti-lsp"
    ignore = shutil.ignore_patterns(".git", ".venv", ".cache", ".editors", "node_modules", "__pycache__", "*.egg-info",
                                    "tests", "vscode-extension", "examples", ".aoti_lsp_cache")
    shutil.copytree(ROOT, repo, ignore=ignore)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "snapshot")
    return repo


def test_published_hook_gives_the_same(hook_repo, tmp_path):
    """The real .pre-commit-hooks.yaml (pip-installed hook environment), on the cross-file project:
    the file whose finding comes from another file is blocked, the others pass."""
    name = "aoti102_cross_file"
    folder = copy(name, tmp_path)
    rev = git(hook_repo, "rev-parse", "HEAD").stdout.strip()
    config = f"repos:\n- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n  - id: aoti-lsp\n"
    commit_each_file(folder, config, tmp_path / "pc-home", expected(name))


def test_published_hooks_run_serially():
    """pre-commit would split a long file list into runs side by side: each would summarise the
    project again. Both hooks ask for one run."""
    import yaml

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"]: h.get("require_serial") for h in hooks} == {"aoti-lsp": True, "aoti-lsp-fix": True}
