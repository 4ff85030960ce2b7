"""The wheel: built without setuptools deprecation banners, and carrying its data files."""

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_wheel_builds_quietly_with_its_data(tmp_path):
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), str(REPO)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    out = res.stdout + res.stderr
    for banner in ("BuildBackendWarning", "SetuptoolsDeprecationWarning", "is deprecated", "!!"):
        assert banner not in out, out
    (wheel,) = tmp_path.glob("aoti_lsp-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "aoti_lsp/data/deprecated.toml" in names and "aoti_lsp/queries/python/calls.scm" in names
    assert "aoti_lsp/lsp/server.py" in names


def test_no_tracked_file_is_ignored():
    """A committed file listed in .gitignore (docs/editors.md once was) vanishes from a user's `git add -A`."""
    res = subprocess.run(["git", "-C", str(REPO), "ls-files", "-ci", "--exclude-standard"], capture_output=True, text=True)
    if res.returncode != 0:
        import pytest

        pytest.skip("not a git work tree")
    assert res.stdout == ""


def test_demo_installs_the_tool_alone():
    """`make demo` needs no torch: it depends on the venv with the tool only, the test extras come with `make test`."""
    make = (REPO / "Makefile").read_text()
    demo = next(line for line in make.splitlines() if line.startswith("demo:"))
    assert demo.split(":", 1)[1].split() == ["$(VENV)/.tool"]
    tool = make.split("$(VENV)/.tool: pyproject.toml", 1)[1].split("\n\n", 1)[0]
    assert "pip install -q -e .\n" in tool + "\n" and "[test]" not in tool


def test_setup_refuses_to_start_on_a_full_disk():
    """Each install step of `make test` first asks for the space it takes (CI once died mid-install
    with pip's `OSError: [Errno 28] No space left on device`): short of it, a clear error, exit 2."""
    script = REPO / "scripts" / "need-disk.sh"
    res = subprocess.run(["bash", str(script), "100000000", "the test extras"], capture_output=True, text=True)
    assert res.returncode == 2
    assert res.stderr.startswith("error: not enough free disk for the test extras: about 100000000 GB needed,"), res.stderr
    assert subprocess.run(["bash", str(script), "0", "x"], capture_output=True).returncode == 0
    make = (REPO / "Makefile").read_text()
    for target in ("$(VENV)/.tool:", "$(VENV)/.installed:", "$(VENV_NEXT)/.installed:", "setup-editors:"):
        recipe = make.split("\n" + target, 1)[1].split("\n\n", 1)[0]
        assert "scripts/need-disk.sh" in recipe.split("\n")[1], target  # the recipe's first step


def test_the_demo_shows_the_migration_from_inside_this_repository():
    """`make demo` runs `--diff --unsafe-fixes examples/deprecated_api.py` in this repository, whose
    test data name `scale.so` too (goldens): data files are not readers of the artifact."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "aoti_lsp", "--check", "--diff", "--unsafe-fixes",
                          "examples/deprecated_api.py"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr
    assert '"artifacts", "scale.pt2")' in out.stdout and "aoti_compile_and_package(" in out.stdout, out.stderr
