"""The command line: exit codes, formats, fixes, configuration, suppression, bad input."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from clirun import run


BAD = 'import torch\n\ns = "é😀"; so = torch._export.aot_compile(m, (x,))\n'
CLEAN = "import torch\n\nep = torch.export.export(m, (x,))\n"




@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    return tmp_path


def test_exit_codes_and_text_format(proj, capsys):
    (proj / "bad.py").write_text(BAD)
    (proj / "ok.py").write_text(CLEAN)
    code, out, err = run(capsys, "--check", "ok.py")
    assert code == 0 and "All checks passed!" in err
    code, out, err = run(capsys, "--check", ".")
    assert code == 1
    # ruff-like: path:row:col: CODE message, then the source line with a caret under the name
    assert 'bad.py:3:16: AOTI001 warning: `torch._export.aot_compile` is deprecated' in out
    assert '3 | s = "é😀"; so = torch._export.aot_compile(m, (x,))' in out
    assert "Found 1 finding." in err and "--unsafe-fixes" in err
    assert run(capsys, "--check", "missing.py")[0] == 2
    assert run(capsys, "--check", "--output-format", "xml", ".")[0] == 2
    assert run(capsys)[0] == 2  # nothing asked: usage
    assert run(capsys, "--check", "--exit-zero", ".")[0] == 0


def test_json_format(proj, capsys):
    (proj / "bad.py").write_text(BAD)
    code, out, _ = run(capsys, "--check", "--output-format", "json", "bad.py")
    (item,) = json.loads(out)
    assert code == 1
    assert item["code"] == "AOTI001" and item["filename"] == str(proj / "bad.py")
    # 1-based, code points: `s = "é😀"; so = ` is 15 code points
    assert item["location"] == {"row": 3, "column": 16}
    assert item["end_location"] == {"row": 3, "column": 16 + len("torch._export.aot_compile")}
    assert item["url"].endswith("docs/rules/AOTI001.md")
    assert item["fix"]["applicability"] == "unsafe" and item["fix"]["edits"]


def test_sarif_and_github_formats(proj, capsys):
    (proj / "bad.py").write_text(BAD)
    _, out, _ = run(capsys, "--check", "--output-format", "sarif", "bad.py")
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0"
    run0 = sarif["runs"][0]
    assert {r["id"] for r in run0["tool"]["driver"]["rules"]} >= {"AOTI001", "AOTI002"}
    assert all(r["helpUri"].startswith("https://") for r in run0["tool"]["driver"]["rules"])
    (res,) = run0["results"]
    assert res["ruleId"] == "AOTI001"
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    _, out, _ = run(capsys, "--check", "--output-format", "github", "bad.py")
    assert out.startswith("::warning title=aoti-lsp (AOTI001),file=bad.py,line=3,col=16,")


def test_fix_needs_unsafe_flag_for_migration_and_diff_changes_nothing(proj, capsys):
    (proj / "bad.py").write_text(BAD)
    code, _, err = run(capsys, "--check", "--fix", "bad.py")
    assert code == 1 and (proj / "bad.py").read_text() == BAD  # unsafe: not applied
    code, out, _ = run(capsys, "--check", "--diff", "--unsafe-fixes", "bad.py")
    assert code == 1 and "+++ b/bad.py" in out and "+s = \"é😀\"; ep = torch.export.export" in out
    assert (proj / "bad.py").read_text() == BAD
    code, _, err = run(capsys, "--check", "--fix", "--unsafe-fixes", "bad.py")
    assert code == 0 and "Fixed 1 file." in err
    text = (proj / "bad.py").read_text()
    assert "aoti_compile_and_package(ep)" in text
    assert run(capsys, "--check", "--diff", "--unsafe-fixes", "bad.py")[0] == 0


def test_select_ignore_and_pyproject_config(proj, capsys):
    (proj / "bad.py").write_text(BAD + "r = torch._export.aot_load(so, 'cpu')\n")
    _, out, _ = run(capsys, "--check", "--output-format", "json", "--select", "AOTI002", ".")
    assert [i["code"] for i in json.loads(out)] == ["AOTI002"]
    _, out, _ = run(capsys, "--check", "--output-format", "json", "--ignore", "AOTI0", ".")
    assert json.loads(out) == []
    (proj / "pyproject.toml").write_text('[tool.aoti-lsp]\nignore = ["AOTI002"]\n[tool.aoti-lsp.per-file-ignores]\n"legacy/*" = ["AOTI001"]\n')
    (proj / "legacy").mkdir()
    (proj / "legacy" / "old.py").write_text(BAD)
    _, out, _ = run(capsys, "--check", "--output-format", "json", ".")
    assert sorted((i["filename"], i["code"]) for i in json.loads(out)) == [(str(proj / "bad.py"), "AOTI001")]
    (proj / "pyproject.toml").write_text('[tool.aoti-lsp]\nselct = ["AOTI002"]\n')
    code, _, err = run(capsys, "--check", ".")
    assert code == 2 and "unknown key(s) in [tool.aoti-lsp]: selct" in err


def test_exclude_and_gitignore(proj, capsys):
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    (proj / ".gitignore").write_text("generated/\n")
    for d in ("generated", "vendored", "src"):
        (proj / d).mkdir()
        (proj / d / "m.py").write_text(BAD)
    _, out, _ = run(capsys, "--check", "--output-format", "json", "--exclude", "vendored", ".")
    assert [i["filename"] for i in json.loads(out)] == [str(proj / "src" / "m.py")]


def test_bare_name_excludes_match_names_as_fnmatch_does(proj, capsys):
    """A git listing's files are excluded by name (files._name_pattern: a set for plain names, a
    regex per glob), as the one regex of every pattern did: a folder or a file, exactly or by glob."""
    import fnmatch
    import re

    from aoti_lsp.project.config import Config
    from aoti_lsp.project.files import _name_pattern

    patterns = ("vendored", "gen_*", "skip?.py", "[ab]x", "", "a.b", "dir/")
    named = _name_pattern(Config(exclude=patterns))
    regex = re.compile("|".join(fnmatch.translate(p.rstrip("/")) for p in patterns))
    for name in ("vendored", "vendored2", "gen_", "gen_x", "xgen_", "skip1.py", "skip.py", "ax", "bx", "cx", "",
                 "a.b", "aXb", "dir", "dir2", "Vendored", "m.py"):
        assert named(name) == (regex.match(name) is not None), name
    assert _name_pattern(Config(exclude=("a/b",))) is None  # a path pattern: matched from the root
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    for d in ("gen_1", "vendored", "src"):
        (proj / d).mkdir()
        (proj / d / "m.py").write_text(BAD)
        (proj / d / "skip1.py").write_text(BAD)
    _, out, _ = run(capsys, "--check", "--output-format", "json", "--exclude", "vendored", "--exclude", "gen_*",
                    "--exclude", "skip?.py", ".")
    assert [i["filename"] for i in json.loads(out)] == [str(proj / "src" / "m.py")]


def test_noqa(proj, capsys):
    (proj / "n.py").write_text(
        "import torch\n"
        "a = torch._export.aot_compile(m, (x,))  # noqa: AOTI001\n"
        "b = torch._export.aot_compile(m, (x,))  # noqa\n"
        "c = torch._export.aot_compile(m, (x,))  # noqa: AOTI002\n"
        "d = '# noqa'; e = torch._export.aot_compile(m, (x,))\n")
    _, out, _ = run(capsys, "--check", "--output-format", "json", "n.py")
    assert [i["location"]["row"] for i in json.loads(out)] == [4, 5]


def test_bad_files_are_reported_and_never_touched(proj, capsys):
    (proj / "binary.py").write_bytes(b"\x00\x01\x02aot_compile")
    latin = "# caf\xe9\nimport torch\nso = torch._export.aot_compile(m, (x,))\n".encode("latin-1")
    (proj / "latin.py").write_bytes(latin)
    broken = "import torch\nso = torch._export.aot_compile(m, (x,))\ndef oops(:\n"
    (proj / "broken.py").write_text(broken)
    code, out, err = run(capsys, "--check", "--fix", "--unsafe-fixes", ".")
    assert "binary.py: binary file" in err
    assert "latin.py: not valid UTF-8 at byte 5" in err
    assert f"broken.py: not fixed: Python {sys.version_info[0]}.{sys.version_info[1]} cannot compile it" in err
    assert (proj / "latin.py").read_bytes() == latin and (proj / "broken.py").read_text() == broken
    assert "broken.py:2:6: AOTI001" in out  # still analysed, just not rewritten
    assert code == 1


def test_rule_docs(capsys):
    code, out, _ = run(capsys, "rule", "aoti001")
    assert code == 0 and out.startswith("# AOTI001: deprecated-aot-compile")
    assert "aoti_compile_and_package" in out
    code, out, _ = run(capsys, "rule")
    assert "AOTI001" in out and "AOTI002" in out
    assert run(capsys, "rule", "AOTI999")[0] == 2


def test_console_script_and_serve_arguments():
    exe = Path(sys.executable).with_name("aoti-lsp")
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("aoti-lsp ")
    bad = subprocess.run([str(exe), "serve", "--tcp"], capture_output=True, text=True)
    assert bad.returncode == 2 and "only --stdio" in bad.stderr


def test_check_does_not_import_pygls_or_torch(proj):
    """pygls and torch never; libcst (~150 ms) only once a fix's edits are needed: not for the
    text output, which shows a fix's title only (findings.LazyFix), but for JSON, which holds them."""
    code = ("import sys; from aoti_lsp.cli.main import main; rc = main(['--check', '-q', '.', *sys.argv[1:]]);"
            "print(sorted(m for m in ('pygls', 'torch', 'libcst') if m in sys.modules)); sys.exit(rc)")
    (proj / "ok.py").write_text(CLEAN + "# aot_compile is mentioned, but never called\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=proj)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr
    (proj / "bad.py").write_text(BAD)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=proj)
    assert out.returncode == 1 and "= fix (unsafe): Migrate" in out.stdout, out.stdout + out.stderr
    assert out.stdout.strip().endswith("[]"), out.stdout + out.stderr
    out = subprocess.run([sys.executable, "-c", code, "--output-format", "json"], capture_output=True, text=True, cwd=proj)
    assert out.returncode == 1 and out.stdout.strip().endswith("['libcst']"), out.stdout + out.stderr


def test_parallel_run_matches_serial(proj, capsys):
    """Many files take the multi-process path (runner.py): same findings as one process,
    cross-file facts included, read errors included, and --fix rewrites the same files."""
    for i in range(80):
        (proj / f"plain_{i}.py").write_text(f"import torch\nx{i} = torch.randn({i + 1})\n")
    (proj / "bad.py").write_text(BAD)
    (proj / "latin.py").write_bytes("# caf\xe9\n".encode("latin-1"))
    (proj / "make_package.py").write_text(
        'import torch\nexample = torch.randn(4, 8, device="cuda")\nep = torch.export.export(M(), (example,))\n'
        'torch._inductor.aoti_compile_and_package(ep, package_path="out/model.pt2")\n')
    (proj / "app.py").write_text(
        'import torch\nrunner = torch._inductor.aoti_load_package("out/model.pt2")\nprint(runner(torch.randn(4, 8)))\n')
    outs = []
    for jobs in ("1", "2"):
        code, out, err = run(capsys, "--check", "--output-format", "json", "-j", jobs, ".")
        outs.append((code, json.loads(out), "latin.py: not valid UTF-8" in err))
    assert outs[0] == outs[1]
    code, items, saw_error = outs[1]
    assert code == 1 and saw_error
    assert sorted({(os.path.basename(i["filename"]), i["code"]) for i in items}) == [("app.py", "AOTI102"), ("bad.py", "AOTI001")]
    assert run(capsys, "--check", "--fix", "--unsafe-fixes", "-j", "2", ".")[0] == 0
    assert "aoti_compile_and_package" in (proj / "bad.py").read_text()
    assert 'runner(torch.randn(4, 8, device="cuda"))' in (proj / "app.py").read_text()


def test_the_process_ends_without_teardown_and_loses_nothing(tmp_path: Path):
    """`aoti-lsp` ends with os._exit after main (cli.main.run): the atexit handlers run first,
    no worker outlives the run (the pool reaps its own), the output is whole through a pipe,
    and the exit code is main's."""
    bad = "import torch\nfrom torch._export import aot_compile\n\ndef build(m, x):\n    return aot_compile(m, (x,))\n"
    for i in range(80):  # >= runner.PARALLEL_MIN files to check, -j 2 without auto: the pool runs
        (tmp_path / f"m{i}.py").write_text(bad if i % 8 == 0 else f"import torch\nX{i} = torch.zeros({i})\n")
    (tmp_path / "clean.py").write_text("Y = 1\n")
    script = ("import atexit, sys; atexit.register(lambda: print('atexit ran', 'aoti_lsp.project.forkpool' in sys.modules, "
              "file=sys.stderr)); "
              f"from aoti_lsp.cli.main import run; sys.argv[0] = 'aoti-lsp'; run()  # {tmp_path.name}-marker")
    for args, code in ((["--check", "--no-cache", "-j", "2", "--output-format", "json", "."], 1),
                       (["--check", "--no-cache", "clean.py"], 0), (["--check", "missing.py"], 2)):
        proc = subprocess.run([sys.executable, "-c", script, *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == code, (args, proc.stderr)
        assert proc.stderr.rstrip().endswith(f"atexit ran {'-j' in args}"), proc.stderr
        if "json" in args:
            assert len(json.loads(proc.stdout)) == 10  # the whole report, parsed
    # a forked worker has its parent's command line, marker included
    gone = subprocess.run(["pgrep", "-f", f"{tmp_path.name}-marker"], capture_output=True, text=True)
    assert gone.returncode == 1 and gone.stdout == "", gone.stdout
