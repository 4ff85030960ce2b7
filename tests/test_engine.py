"""Engine guarantees: a broken rule is reported, never fatal; triggers gate parsing."""

from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.rules import Rule, all_rules
from aoti_lsp.analysis.source import Source

CODE = "import torch\nso = torch._export.aot_compile(m, (x,))\n"


class Broken(Rule):
    code = "AOTI999"
    name = "broken"
    summary = "raises"
    triggers = ("aot_compile",)
    explanation = "a rule with a bug"

    def check(self, ctx):
        raise ValueError("boom")


def test_a_rule_that_raises_is_reported_and_the_others_still_run():
    result = analyze(Source.from_text(CODE, "m.py"), Config(), rules=(*all_rules(), Broken()))
    assert [f.code for f in result.findings] == ["AOTI001"]
    assert result.errors == ["m.py: internal error in rule AOTI999: ValueError('boom')"]


def test_no_trigger_no_parse():
    src = Source.from_text("import torch\nx = torch.randn(3)\n" * 1000, "plain.py")
    assert analyze(src, Config()).findings == []
    assert src._tree is None


def test_broken_rule_in_the_cli_exits_2(tmp_path, monkeypatch, capsys):
    from aoti_lsp import rules
    from aoti_lsp.cli import main as cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(CODE)
    # the CLI gives each file the rules its tokens concern (rules.rules_for): the broken one too
    monkeypatch.setattr(rules, "rules_for", lambda source, config: (*all_rules(), Broken()))
    assert cli.main(["--check", "m.py"]) == 2
    err = capsys.readouterr().err
    assert "internal error in rule AOTI999" in err
