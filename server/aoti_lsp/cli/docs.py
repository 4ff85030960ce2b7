"""Rule documentation, rendered from the rule classes (Fixit style): `aoti-lsp rule CODE`
prints it and scripts/gen_docs.py writes docs/rules/CODE.md from the same text."""

from __future__ import annotations

from aoti_lsp.rules import Rule, all_rules

# The torch versions each page's facts were measured on: tests/torch runs on TORCH (pyproject's
# test extra); `make test-torch-next` reruns the deprecation and migration tests on TORCH_NEXT.
# tests/test_rules_meta.py checks both against pyproject.toml and the Makefile.
TORCH = "2.13.0"
TORCH_NEXT = "2.14.1"


def measured_on(rule: Rule) -> str:
    if rule.deprecated:
        return (f"Measured on: torch {TORCH} and {TORCH_NEXT} (CPU; `tests/torch/test_deprecation.py`, "
                "`tests/torch/test_migration.py`).")
    return f"Measured on: torch {TORCH} (CPU; `tests/torch/`)."


def render(rule: Rule) -> str:
    out = [f"# {rule.code}: {rule.name}", "", rule.summary, ""]
    if rule.deprecated:
        out += ["Severity: warning, tagged *deprecated*.", ""]
    else:
        out += [f"Severity: {rule.severity.value}.", ""]
    out += [measured_on(rule), ""]
    out += ["## What goes wrong", "", rule.explanation.strip(), ""]
    if rule.fix_explanation:
        out += ["## Fix", "", rule.fix_explanation.strip(), ""]
    if rule.invalid:
        out += ["## Flagged", ""]
        for ex in rule.invalid:
            out += ["```python", ex.rstrip(), "```", ""]
    if rule.valid:
        out += ["## Not flagged", ""]
        for ex in rule.valid:
            out += ["```python", ex.rstrip(), "```", ""]
    out += ["## Suppress", "", f"`# noqa: {rule.code}` on the line, or `ignore = [\"{rule.code}\"]` under "
            "`[tool.aoti-lsp]` in pyproject.toml.", ""]
    return "\n".join(out)


def index() -> str:
    rows = ["# Rules", "", "| code | name | summary |", "| --- | --- | --- |"]
    rows += [f"| [{r.code}]({r.code}.md) | {r.name} | {r.summary} |" for r in all_rules()]
    return "\n".join(rows) + "\n"
