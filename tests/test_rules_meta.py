"""Rules carry their own examples (Fixit): they are tests here and the docs pages."""

import importlib.util
from pathlib import Path

import pytest

from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.rules import all_rules
from aoti_lsp.analysis.source import Source

RULES = all_rules()
ROOT = Path(__file__).resolve().parents[1]


def _findings(code, text):
    return [f for f in analyze(Source.from_text(text, "example.py"), Config(select=(code,))).findings if f.code == code]


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_examples(rule):
    assert rule.invalid and rule.valid, f"{rule.code} needs flagged and not-flagged examples"
    for text in rule.invalid:
        assert _findings(rule.code, text), f"{rule.code} should flag:\n{text}"
    for text in rule.valid:
        assert not _findings(rule.code, text), f"{rule.code} should not flag:\n{text}"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_metadata(rule):
    assert rule.code.startswith("AOTI") and len(rule.code) == 7
    assert rule.name == rule.name.lower() and " " not in rule.name
    assert rule.summary and rule.explanation.strip() and rule.triggers
    assert rule.url.endswith(f"/docs/rules/{rule.code}.md")


def test_codes_and_names_are_unique():
    assert len({r.code for r in RULES}) == len(RULES)
    assert len({r.name for r in RULES}) == len(RULES)


def test_docs_are_up_to_date():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    for path, text in gen.expected().items():
        assert path.exists() and path.read_text("utf-8") == text, f"{path.name} is stale: run python scripts/gen_docs.py"
