"""Writes docs/rules/<CODE>.md and docs/rules/README.md from the rule classes.
tests/test_rules_meta.py fails when they are out of date: run `python scripts/gen_docs.py`."""

import sys
from pathlib import Path

from aoti_lsp.docs import index, render
from aoti_lsp.rules import all_rules

OUT = Path(__file__).resolve().parents[1] / "docs" / "rules"


def expected() -> dict[Path, str]:
    files = {OUT / f"{r.code}.md": render(r) for r in all_rules()}
    files[OUT / "README.md"] = index()
    return files


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for path, text in expected().items():
        path.write_text(text, "utf-8")
    print(f"wrote {len(expected())} files to {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
