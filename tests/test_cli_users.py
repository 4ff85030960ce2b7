"""What a new user hits on the command line (issue 23): files named but not checked, near-miss
config tables, diff headers, --fix's scope, other linters' noqa codes."""

import os

import pytest
from clirun import run

BAD = 'import torch\nso = torch._export.aot_compile(m, (x,))\n'


@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    return tmp_path


def test_a_named_file_that_is_not_python_is_a_warning_never_a_pass(proj, capsys):
    (proj / "notes.txt").write_text("torch._export.aot_load is deprecated\n")
    (proj / "ok.py").write_text("import torch\n")
    for named in (["notes.txt"], ["notes.txt", "ok.py"]):
        code, _, err = run(capsys, "--check", *named)
        assert code == 2, (named, err)
        assert "All checks passed!" not in err
        assert f"{named[0]}: not checked: not a Python file" in err
    (proj / "nb.ipynb").write_text('{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}\n')
    code, _, err = run(capsys, "--check", "nb.ipynb")  # a notebook is checked (its code cells)
    assert code == 0 and "All checks passed!" in err, err
    (proj / "tool").write_text("#!/usr/bin/env python3\nimport torch\n")  # pre-commit's `python` type
    code, _, err = run(capsys, "--check", "tool")
    assert code == 0 and "All checks passed!" in err
    code, _, err = run(capsys, "--check", ".")  # a folder: only its Python files, no warning
    assert code == 0 and "not checked" not in err


MIGRATION = {
    "pkg/__init__.py": "",
    "pkg/paths.py": 'import os\nTOWER = os.path.join(os.environ.get("D", "/srv"), "tower.so")\n',
    "pkg/build.py": ("import torch\nfrom pkg.paths import TOWER\ndef build(model, x):\n"
                     '    torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": TOWER})\n'),
    "pkg/serve.py": 'import torch\nfrom pkg.paths import TOWER\nrunner = torch._export.aot_load(TOWER, "cpu")\n',
}


def _write(root, files):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.parametrize("spelling", ["absolute", "relative", "from_outside"])
def test_diff_headers_are_relative_to_one_root_and_git_apply_takes_them(proj, capsys, spelling, monkeypatch,
                                                                        tmp_path_factory):
    import shutil
    import subprocess

    _write(proj, MIGRATION)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    named = {"absolute": str(proj / "pkg" / "serve.py"), "relative": "pkg/serve.py",
             "from_outside": str(proj / "pkg" / "serve.py")}[spelling]
    if spelling == "from_outside":  # run from a folder beside it: the headers are the project root's
        monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    code, out, err = run(capsys, "--check", "--diff", "--unsafe-fixes", named)
    assert code == 1, err
    headers = [line.split(None, 1)[1] for line in out.splitlines() if line.startswith(("--- ", "+++ "))]
    prefix = os.path.relpath(proj, os.getcwd()) + "/" if spelling != "from_outside" else ""
    prefix = "" if prefix == "./" else prefix
    assert spelling != "from_outside" or f"relative to {proj}" in err
    assert sorted(headers) == sorted(f"{side}/{prefix}pkg/{name}.py" for side in "ab"
                                     for name in ("build", "paths", "serve")), headers
    patch = tmp_path_factory.mktemp("patch") / "fix.patch"
    patch.write_text(out)
    subprocess.run(["git", "-C", str(proj), "apply", "--check", str(patch)], check=True)
    if shutil.which("patch"):
        subprocess.run(["patch", "-p1", "--dry-run", "-d", str(proj), "-i", str(patch)], check=True,
                       capture_output=True)


def test_diff_of_files_without_a_final_newline_applies_as_fix_writes_them(proj, capsys, tmp_path_factory):
    """Real scripts often end without a newline: the diff marks it (`\\ No newline at end of file`)
    as diff and git do, else the next file's `--- a/` header joined that last line and neither
    `git apply` nor `patch` took the diff (HBTGen-artifact's reproductions, stop 35)."""
    import shutil
    import subprocess

    files = {name: text.rstrip("\n") for name, text in MIGRATION.items()}  # every file ends mid-line
    _write(proj, files)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    code, out, err = run(capsys, "--check", "--diff", "--unsafe-fixes", ".")
    assert code == 1, err
    assert out.count("\\ No newline at end of file\n") >= 3 and "\n--- a/" in out
    patch = tmp_path_factory.mktemp("patch") / "fix.patch"
    patch.write_text(out)
    applied = tmp_path_factory.mktemp("applied")
    shutil.copytree(proj, applied, dirs_exist_ok=True)
    subprocess.run(["git", "-C", str(applied), "apply", str(patch)], check=True)
    run(capsys, "--check", "--fix", "--unsafe-fixes", ".")
    for rel in files:
        assert (applied / rel).read_text() == (proj / rel).read_text(), rel


EXPORTED_POOL = '''import torch


class Pool(torch.nn.Module):
    def forward(self, values, lengths):
        offsets = torch.cumsum(lengths, 0)
        return values[offsets - 1]


def build(values, lengths):
    dims = {"values": {0: torch.export.Dim("N")}, "lengths": {0: torch.export.Dim("B")}}
    ep = torch.export.export(Pool(), (values, lengths), dynamic_shapes=dims)
    return torch._inductor.aoti_compile_and_package(ep, package_path="pool.pt2")


runner = torch._inductor.aoti_load_package("pool.pt2")


def serve(batch):
    return runner(*batch)
'''


def test_refusal_notes_say_what_is_true(proj, capsys):
    # forward has no check, and the file does call the package (with arguments not matched)
    (proj / "pool.py").write_text(EXPORTED_POOL)
    code, out, _ = run(capsys, "--check", "pool.py")
    assert code == 1 and "AOTI201" in out
    assert "no call of the loaded package in this file" not in out
    assert "a check inside `forward` is dropped" not in out
    assert "no automatic fix: the package's calls here (`runner(*batch)`) pass arguments" in out
    assert "torch.export drops an empty-input check inside `forward`" in out
    # with no call at all, it says so
    (proj / "pool.py").write_text(EXPORTED_POOL.replace("    return runner(*batch)", "    return runner"))
    _, out, _ = run(capsys, "--check", "pool.py")
    assert "no automatic fix: no call of the loaded package in this file" in out


def test_noqa_warns_only_about_aoti_looking_codes(proj, capsys):
    (proj / "n.py").write_text(
        "import torch\n"
        "a = torch._export.aot_compile(m, (x,))  # noqa: RUF\n"
        "b = torch._export.aot_compile(m, (x,))  # noqa: PLR2004, NOPE\n"
        "c = torch._export.aot_compile(m, (x,))  # noqa: AOT001\n")
    code, _, err = run(capsys, "--check", "n.py")
    assert code == 1  # none of them suppresses AOTI001
    assert "'RUF'" not in err and "'PLR2004'" not in err and "'NOPE'" not in err, err
    assert "n.py:4: unknown code 'AOT001' in a noqa comment" in err


@pytest.mark.parametrize("table", ["aoti_lsp", "aoti-LSP", "aotilsp", "aoti.lsp"])
def test_a_near_miss_config_table_is_an_error_naming_the_right_one(proj, capsys, table):
    (proj / "pyproject.toml").write_text(f"[project]\nname = 'x'\n[tool.{table}]\nignore = ['AOTI001']\n"
                                         if "." not in table else
                                         f"[project]\nname = 'x'\n[tool.\"{table}\"]\nignore = ['AOTI001']\n")
    (proj / "bad.py").write_text(BAD)
    code, _, err = run(capsys, "--check", "bad.py")
    assert code == 2, err
    assert "is not read: the table is [tool.aoti-lsp]" in err and "All checks passed" not in err


def test_fix_says_which_files_a_migration_wrote_beyond_the_named_one(proj, capsys):
    _write(proj, MIGRATION)
    code, _, err = run(capsys, "--check", "--fix", "--unsafe-fixes", "pkg/serve.py")
    assert "aoti_load_package" in (proj / "pkg" / "serve.py").read_text()
    assert "tower.pt2" in (proj / "pkg" / "paths.py").read_text()  # not named, written
    note = next(line for line in err.splitlines() if "one migration wrote" in line)
    for rel in ("pkg/build.py", "pkg/paths.py", "pkg/serve.py"):
        assert rel in note, err
    assert "all or none" in note


def test_version_probe_imports_nothing_heavy():
    """Editors probe `python -m aoti_lsp --version` before (or while) starting the server: it
    answers without importing the CLI, the rules or tree-sitter (~1 s on a loaded machine)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "aoti_lsp", "--version"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith("aoti-lsp ")
    imported = [line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if "|" in line]
    assert not [m for m in imported if m.startswith(("aoti_lsp.", "tree_sitter", "pygls"))], imported
