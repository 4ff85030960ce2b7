"""The real pre-commit: it builds the hook's environment from this repository (pip, PyPI)
and runs it on a scratch git repository, as a user's commit would."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BAD = "import torch\n\nso = torch._export.aot_compile(model, (x,))\nrunner = torch._export.aot_load(so, 'cpu')\n"
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """A committed snapshot of this working tree: pre-commit installs hooks from a git rev."""
    repo = tmp_path_factory.mktemp("hookrepo") / "aoti-lsp"
    ignore = shutil.ignore_patterns(".git", ".venv", ".cache", ".editors", "node_modules", "__pycache__", "*.egg-info",
                                    "tests", "vscode-extension", "examples")
    shutil.copytree(ROOT, repo, ignore=ignore)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "snapshot")
    return repo


def _run(args, cwd, home):
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run(PRE_COMMIT + args, cwd=cwd, capture_output=True, text=True, env=env, timeout=900)


def test_hook_fails_on_deprecated_call_then_passes_after_fix(hook_repo, tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    _git(user, "init", "-q")
    (user / "train.py").write_text(BAD)
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_repo, capture_output=True, text=True).stdout.strip()
    (user / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n"
        "  - id: aoti-lsp\n  - id: aoti-lsp-fix\n    args: [--unsafe-fixes]\n    stages: [manual]\n")
    _git(user, "add", "-A")
    home = tmp_path / "pc-home"

    # try-repo, as a user trying the hook out would
    tried = _run(["try-repo", str(hook_repo), "aoti-lsp", "--all-files"], user, home)
    assert tried.returncode == 1, tried.stdout + tried.stderr
    assert "AOTI001" in tried.stdout and "AOTI002" in tried.stdout

    # a real commit is blocked
    _run(["install"], user, home)
    commit = subprocess.run(["git", "commit", "-qm", "add train"], cwd=user, capture_output=True, text=True,
                            env={**os.environ, "PRE_COMMIT_HOME": str(home), "GIT_AUTHOR_NAME": "t",
                                 "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})
    assert commit.returncode != 0 and "AOTI001" in commit.stdout + commit.stderr

    # the fix hook rewrites the file (pre-commit reports "files were modified")
    fixed = _run(["run", "aoti-lsp-fix", "--hook-stage", "manual", "--all-files"], user, home)
    assert fixed.returncode == 1 and "files were modified by this hook" in fixed.stdout, fixed.stdout
    text = (user / "train.py").read_text()
    assert "aoti_compile_and_package" in text and "aot_load" not in text
    compile(text, "train.py", "exec")

    # and now the check passes
    _git(user, "add", "-A")
    again = _run(["run", "aoti-lsp", "--all-files"], user, home)
    assert again.returncode == 0, again.stdout


def _readme_block(tag: str) -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    after = text.split(f"<!-- tested: {tag} -->", 1)[1]
    return after.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_readme_snippets_work_as_written(hook_repo, tmp_path):
    """README's two pre-commit configurations, with only the remote URL pointed at a local
    snapshot and `<commit sha>` replaced by its sha: the commit is blocked on findings."""
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_repo, capture_output=True, text=True).stdout.strip()
    remote = _readme_block("pre-commit-remote")
    assert "rev: <commit sha>" in remote and "v0.1.0" not in remote
    local = _readme_block("pre-commit-local")
    venv_bin = str(Path(sys.executable).parent)  # where `pip install -e` put aoti-lsp
    for name, config in (("remote", remote.replace("https://github.com/aoti-lsp/aoti-lsp", str(hook_repo))
                          .replace("<commit sha>", rev)), ("local", local)):
        user = tmp_path / name
        user.mkdir()
        _git(user, "init", "-q")
        (user / "train.py").write_text(BAD)
        (user / ".pre-commit-config.yaml").write_text(config)
        _git(user, "add", "-A")
        env_path = {"PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
        res = subprocess.run(PRE_COMMIT + ["run", "aoti-lsp", "--all-files"], cwd=user, capture_output=True, text=True,
                             timeout=900, env={**os.environ, **env_path, "PRE_COMMIT_HOME": str(tmp_path / "pc-home")})
        assert res.returncode == 1 and "AOTI001" in res.stdout, (name, res.stdout + res.stderr)
