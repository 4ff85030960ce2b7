"""The user-facing contract (issue 10): a typo never makes the lint pass, one severity in
every format, fixes counted as they are shown, notes for what is not a finding."""

import json

import pytest
from clirun import run

from aoti_lsp.project.config import Config, ConfigError, parse

DEPRECATED = "import torch\nso = torch._export.aot_compile(m, (x,))\n"
# AOTI101 (an error) and AOTI102, with evidence on the same line
SEED = ('import torch\nmodel = MyModel().cuda(); inp = torch.randn(2, 10, device="cuda"); '
        'so = torch._export.aot_compile(model, (inp,)); loaded = torch._export.aot_load(so, "cpu"); '
        'out = loaded(inp.to("cpu"))\n')
# AOTI201 whose fix is an editor snippet (the empty value cannot be inferred): display-only
# a forward that a package may run (the file loads one) but no export of it is visible: AOTI201's
# fixes there are display-only (issue 20's fix tiers)
SNIPPET = ("import torch\n\n\nclass LastItem(torch.nn.Module):\n    def forward(self, values, lengths):\n"
           "        offsets = torch.cumsum(lengths, 0)\n        return torch.index_select(values, 0, offsets - 1).relu()\n\n\n"
           "runner = torch._inductor.aoti_load_package(\"last_item.pt2\")\n")




@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "bad.py").write_text(DEPRECATED)
    return tmp_path


# -- a typo must never make the lint pass ------------------------------------------------------
@pytest.mark.parametrize("flag", ["--select", "--ignore", "--extend-select"])
def test_unknown_code_in_a_flag_is_a_usage_error(proj, capsys, flag):
    code, out, err = run(capsys, "--check", flag, "NOPE", ".")
    assert code == 2 and out == ""
    assert "invalid value 'NOPE' for '" + flag + "'" in err and "AOTI001" in err and "AOTI202" in err
    assert "All checks passed" not in err


def test_prefixes_and_all_are_known(proj, capsys):
    assert run(capsys, "--check", "--select", "AOTI0,all", ".")[0] == 1
    assert run(capsys, "--check", "--select", "aoti1", ".")[0] == 0  # a prefix of AOTI101..103


@pytest.mark.parametrize("toml,needle", [
    ('select = ["NOPE"]', "invalid value 'NOPE' for tool.aoti-lsp.select"),
    ('extend-select = ["AOTI9"]', "invalid value 'AOTI9' for tool.aoti-lsp.extend-select"),
    ('ignore = "AOTI001"', "tool.aoti-lsp.ignore must be a list of strings, got a string 'AOTI001'"),
    ('exclude = "legacy"', "tool.aoti-lsp.exclude must be a list of strings"),
    ('[tool.aoti-lsp.per-file-ignores]\n"serve.py" = "AOTI002"',
     "tool.aoti-lsp.per-file-ignores.\"serve.py\" must be a list of strings, got a string 'AOTI002'"),
    ('[tool.aoti-lsp.per-file-ignores]\n"serve.py" = ["NOPE"]',
     "invalid value 'NOPE' for tool.aoti-lsp.per-file-ignores.\"serve.py\""),
    ("options = 3", "tool.aoti-lsp.options must be a table, got an integer 3"),
    ('[tool.aoti-lsp.options]\njaged-names = ["lengths"]', "unknown key(s) in [tool.aoti-lsp.options]: jaged-names"),
    ('[tool.aoti-lsp.options]\njagged-names = "lengths"',
     "tool.aoti-lsp.options.jagged-names must be a list of strings, got a string 'lengths'"),
    ("[tool.aoti-lsp.options]\njagged-names = []", "tool.aoti-lsp.options.jagged-names must not be empty"),
])
def test_bad_config_is_an_error_naming_the_key(proj, capsys, toml, needle):
    if not toml.startswith("["):
        toml = "[tool.aoti-lsp]\n" + toml
    (proj / "pyproject.toml").write_text(toml + "\n")
    code, out, err = run(capsys, "--check", ".")
    assert code == 2 and needle in err, err
    assert "pyproject.toml" in err and "All checks passed" not in err


def test_good_config_still_loads(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.aoti-lsp]\nselect = ["AOTI0"]\n[tool.aoti-lsp.per-file-ignores]\n"a/*" = ["AOTI001"]\n'
                    '[tool.aoti-lsp.options]\njagged-names = ["lens"]\n')
    cfg = parse(path)
    assert cfg.select == ("AOTI0",) and cfg.options == {"jagged-names": ["lens"]}
    assert not cfg.enabled("AOTI001", str(tmp_path / "a" / "m.py")) and cfg.enabled("AOTI002")
    assert Config().enabled("AOTI101")
    with pytest.raises(ConfigError):
        parse(tmp_path / "missing.toml")


def test_no_success_line_after_an_error_and_no_files_warns(proj, capsys):
    code, _, err = run(capsys, "--check", "/nonexistent/aoti")
    assert code == 2 and "no such file or directory" in err and "All checks passed" not in err
    (proj / "empty").mkdir()
    (proj / "empty" / "notes.txt").write_text("aot_compile\n")
    code, _, err = run(capsys, "--check", "empty")
    assert code == 0 and "No Python files found under the given path(s)" in err
    assert "All checks passed" not in err
    code, _, err = run(capsys, "--check", "--exclude", "bad.py", "bad.py")
    assert "No Python files found" in err
    # a machine-readable report is still a document (before: nothing at all on stdout)
    code, out, err = run(capsys, "--check", "--output-format", "json", "empty")
    assert code == 0 and json.loads(out) == [] and "No Python files found" in err
    code, out, _ = run(capsys, "--check", "--output-format", "sarif", "empty")
    assert code == 0 and json.loads(out)["runs"][0]["results"] == []
    code, out, _ = run(capsys, "--check", "--output-format", "json", "empty/notes.txt")
    assert code == 2 and json.loads(out) == []


@pytest.mark.parametrize("jobs", ["0", "-3", "two"])
def test_jobs_must_be_positive(proj, capsys, jobs):
    code, _, err = run(capsys, "--check", "-j", jobs, ".")
    assert code == 2 and "--jobs" in err


def test_syntax_errors_are_said(proj, capsys):
    (proj / "broken.py").write_text(DEPRECATED + "def oops(:\n    pass\n\n\ndef later(:\n    pass\n")
    code, out, err = run(capsys, "--check", "broken.py")
    assert code == 1 and "broken.py: has syntax errors: analysed as far as it parses" in err
    code, out, _ = run(capsys, "--check", "--output-format", "json", "broken.py")
    note = [i for i in json.loads(out) if i["code"] is None]
    assert len(note) == 1 and note[0]["message"].startswith("syntax error at 3:") and note[0]["location"]["row"] == 3
    _, out, _ = run(capsys, "--check", "--output-format", "sarif", "broken.py")
    (inv,) = json.loads(out)["runs"][0]["invocations"]
    (n,) = inv["toolExecutionNotifications"]
    assert n["level"] == "warning" and n["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    _, out, _ = run(capsys, "--check", "--output-format", "github", "broken.py")
    assert "::warning title=aoti-lsp,file=broken.py,line=3," in out


def test_noqa_with_an_unknown_code_warns_and_suppresses_nothing(proj, capsys):
    (proj / "n.py").write_text(
        "import torch\n"
        "a = torch._export.aot_compile(m, (x,))  # noqa: AOIT001\n"
        "b = torch._export.aot_compile(m, (x,))  # noqa: AOTI1O1, E501\n"
        "c = torch._export.aot_compile(m, (x,))  # noqa: E501, AOTI001\n"
        "d = '# noqa: NOPE'\n")
    code, out, err = run(capsys, "--check", "--output-format", "json", "n.py")
    assert [i["location"]["row"] for i in json.loads(out)] == [2, 3]
    assert "n.py:2: unknown code 'AOIT001' in a noqa comment" in err
    assert "n.py:3: unknown code 'AOTI1O1'" in err
    assert "E501" not in err and "n.py:5" not in err  # other linters' codes; text in a string


# -- one truth in every output --------------------------------------------------------------------
def test_one_severity_in_every_format(proj, capsys):
    (proj / "seed.py").write_text(SEED)
    _, out, _ = run(capsys, "--check", "--select", "AOTI101", "seed.py")
    assert "seed.py:2:151: AOTI101 error: " in out
    _, out, _ = run(capsys, "--check", "--select", "AOTI101", "--output-format", "json", "seed.py")
    (item,) = json.loads(out)
    assert item["severity"] == "error"
    _, out, _ = run(capsys, "--check", "--select", "AOTI101", "--output-format", "sarif", "seed.py")
    run0 = json.loads(out)["runs"][0]
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in run0["tool"]["driver"]["rules"]}
    assert levels["AOTI101"] == "error" and levels["AOTI001"] == "warning"
    assert run0["results"][0]["level"] == "error"
    _, out, _ = run(capsys, "--check", "--output-format", "github", "seed.py", "bad.py")
    assert out.count("::error title=aoti-lsp (AOTI10") == 2 and "::warning title=aoti-lsp (AOTI001)" in out


def test_related_locations_in_json_and_sarif(proj, capsys):
    (proj / "seed.py").write_text(SEED)
    _, out, _ = run(capsys, "--check", "--select", "AOTI101", "--output-format", "json", "seed.py")
    (item,) = json.loads(out)
    assert item["filename"] == str(proj / "seed.py")  # absolute, as ruff's
    compiled = next(r for r in item["related"] if r["message"].startswith("compiled here"))
    assert compiled["filename"] == str(proj / "seed.py") and compiled["location"] == {"row": 2, "column": 73}
    _, out, _ = run(capsys, "--check", "--select", "AOTI101", "--output-format", "sarif", "seed.py")
    (res,) = json.loads(out)["runs"][0]["results"]
    rel = res["relatedLocations"]
    assert len(rel) == len(item["related"]) and rel[0]["message"]["text"] == item["related"][0]["message"]
    assert rel[0]["physicalLocation"]["region"]["startColumn"] == item["related"][0]["location"]["column"]
    _, out, _ = run(capsys, "--check", "--select", "AOTI101", "seed.py")
    assert "= note: seed.py:2:73: compiled here" in out


def test_github_escapes_file_names(proj, capsys):
    """A crafted file name must not end the property list nor start a command of its own."""
    name = "a%b,c:d\n::error file=x.py::pwned.py"
    (proj / name).write_text(DEPRECATED)
    code, out, _ = run(capsys, "--check", "--output-format", "github", ".")
    assert code == 1
    lines = out.splitlines()
    assert [ln.split(" ", 1)[0] for ln in lines] == ["::warning", "::warning"]  # bad.py and the crafted one
    assert "file=a%25b%2Cc%3Ad%0A%3A%3Aerror file=x.py%3A%3Apwned.py,line=2," in out
    assert not any(ln.startswith("::error") for ln in lines)


def test_display_only_fixes_are_shown_as_such_and_counted(proj, capsys):
    (proj / "snip.py").write_text(SNIPPET)
    code, out, err = run(capsys, "--check", "snip.py")
    assert code == 1
    assert "= fix (unsafe, editor only): Return early when `values` is empty" in out and "(safe)" not in out
    assert "[*]" not in out and "1 editor-only fix shown" in err and "fixable with --fix" not in err
    _, out, _ = run(capsys, "--check", "--output-format", "json", "snip.py")
    (item,) = json.loads(out)
    assert item["fix"]["applicability"] == "display-only"
    assert all("${" not in e["content"] for e in item["fix"]["edits"])
    assert "return values.new_zeros((lengths.shape[0], *values.shape[1:]))" in item["fix"]["edits"][0]["content"]
    assert run(capsys, "--check", "--fix", "snip.py")[0] == 1 and (proj / "snip.py").read_text() == SNIPPET


def test_summary_counts_match_what_is_shown(proj, capsys):
    (proj / "seed.py").write_text(SEED)
    (proj / "snip.py").write_text(SNIPPET)
    _, out, err = run(capsys, "--check", ".")
    shown = {k: out.count(f"= fix ({k})") for k in ("safe", "unsafe", "unsafe, editor only", "editor only")}
    assert f"{shown['unsafe']} more fixable with --fix --unsafe-fixes" in err
    assert f"{shown['unsafe, editor only'] + shown['editor only']} editor-only fix" in err
    assert out.count("[*]") == shown["safe"]


def test_fix_markers_match_the_count_with_unsafe_fixes(proj, capsys):
    (proj / "seed.py").write_text(SEED)
    _, out, err = run(capsys, "--check", "--unsafe-fixes", "seed.py", "bad.py")
    marked = out.count("[*]")
    # AOTI102's move and bad.py's migration; the seed's load on "cpu" of a CUDA model is a decision
    # (AOTI101 display-only) and holds back that artifact's migration (AOTI001/002 display-only)
    assert marked == 2 and f"[*] {marked} fixable with --fix --unsafe-fixes." in err
    assert out.count("= fix (unsafe, editor only)") == 3


def test_diff_says_when_only_unsafe_fixes_exist(proj, capsys):
    code, out, err = run(capsys, "--check", "--diff", "bad.py")
    assert code == 1 and out == ""  # nothing to change, but a finding is left: never a pass
    assert "No fixes available (1 hidden fix can be enabled with --unsafe-fixes)" in err
    assert "AOTI001 not fixed: unsafe fix, not applied without --unsafe-fixes" in err
    code, out, err = run(capsys, "--check", "--diff", "--unsafe-fixes", "bad.py")
    assert code == 1 and "+++ b/bad.py" in out and "No fixes available" not in err


def test_rule_pages_say_which_torch_they_were_measured_on():
    import re
    from pathlib import Path

    from aoti_lsp.cli import docs
    from aoti_lsp.rules import all_rules

    root = Path(__file__).resolve().parents[1]
    assert f'"torch=={docs.TORCH}"' in (root / "pyproject.toml").read_text()
    assert re.search(rf"^TORCH_NEXT \?= {re.escape(docs.TORCH_NEXT)}$", (root / "Makefile").read_text(), re.M)
    for rule in all_rules():
        page = (root / "docs" / "rules" / f"{rule.code}.md").read_text("utf-8")
        want = f"torch {docs.TORCH} and {docs.TORCH_NEXT}" if rule.deprecated else f"torch {docs.TORCH} (CPU"
        assert f"Measured on: {want}" in page, rule.code


def test_messages_are_short():
    """The first line an editor shows (Problems panel, hover): ~100 characters, ruff-like; the
    evidence is related information, the why is the rule page. Every golden finding."""
    from goldens import FIXTURES

    lines = [line.split(" ", 2)[2] for f in FIXTURES.rglob("*.expected") for line in f.read_text("utf-8").splitlines()]
    assert len(lines) > 100
    too_long = [m for m in lines if len(m) > 112]
    assert not too_long, too_long


def test_aoti102_message_agrees_with_its_fix():
    from aoti_lsp.analysis.engine import analyze
    from aoti_lsp.analysis.source import Source

    text = ('import torch\nep = torch.export.export(M(), (torch.randn(4, 16, device="cuda"),))\n'
            'runner = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))\n'
            'runner(torch.zeros(4, 16))\nx = torch.ones(4, 16)\nrunner(x)\n')
    created, moved = [f for f in analyze(Source.from_text(text, "app.py"), Config()).findings if f.code == "AOTI102"]
    assert created.fix.title == 'Create it with device="cuda"' and moved.fix.title == 'Move it to "cuda"'
    for f in (created, moved):  # the remedy is the fix's title alone: the message never names another one
        assert f.message == "CPU input to a model compiled for `cuda` (line 3): Expected all tensors to be on the same device"


def test_no_self_in_a_placeholder_outside_a_method():
    """examples/jagged_serving.py: the package is called from a module-level `serve()`, where no
    `self` exists; the empty-value placeholders name what to supply instead."""
    from pathlib import Path

    from aoti_lsp.analysis.engine import analyze
    from aoti_lsp.analysis.source import Source

    path = Path(__file__).resolve().parents[1] / "examples" / "jagged_serving.py"
    found = analyze(Source(path.read_bytes(), str(path)), Config()).findings
    snippets = [f.fix for f in found if f.fix is not None and f.fix.snippet]
    assert len(snippets) == 2
    for fix in snippets:
        text = "".join(e.text for e in fix.edits)
        assert "${1:" in text and "self" not in text, text
    assert "proj_out_features" in "".join(e.text for e in snippets[0].edits)
