"""Rule documentation, rendered from the rule classes (Fixit style): `aoti-lsp rule CODE`
prints it and scripts/gen_docs.py writes docs/rules/CODE.md from the same text."""

from __future__ import annotations

from aoti_lsp.rules import Rule, all_rules


def render(rule: Rule) -> str:
    out = [f"# {rule.code}: {rule.name}", "", rule.summary, ""]
    if rule.deprecated:
        out += ["Severity: warning, tagged *deprecated*.", ""]
    else:
        out += [f"Severity: {rule.severity.value}.", ""]
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
