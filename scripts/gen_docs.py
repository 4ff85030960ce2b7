"""Writes docs/rules/<CODE>.md and docs/rules/README.md from the rule classes.
tests/test_rules_meta.py fails when they are out of date: run `python scripts/gen_docs.py`."""

import sys
from pathlib import Path

from aoti_lsp.cli.docs import index, render
from aoti_lsp.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "rules"
START, END = "<!-- editors:start -->", "<!-- editors:end -->"


def readme_with_editors() -> str:
    """README's Editors section is docs/editors.md (whose snippets tests/editors runs), minus its title."""
    readme = (ROOT / "README.md").read_text("utf-8")
    body = (ROOT / "docs" / "editors.md").read_text("utf-8").split("\n", 1)[1].strip()
    body = body.replace("](../", "](").replace("\n## ", "\n### ")
    head, rest = readme.split(START, 1)
    return f"{head}{START}\n{body}\n{END}{rest.split(END, 1)[1]}"


def expected() -> dict[Path, str]:
    files = {OUT / f"{r.code}.md": render(r) for r in all_rules()}
    files[OUT / "README.md"] = index()
    files[ROOT / "README.md"] = readme_with_editors()
    return files


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for path, text in expected().items():
        path.write_text(text, "utf-8")
    print(f"wrote {len(expected())} files to {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
