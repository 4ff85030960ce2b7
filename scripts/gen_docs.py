"""Writes docs/rules/<CODE>.md and docs/rules/README.md from the rule classes, and
server/aoti_lsp/data/*.json from the *.toml beside them (the tables as a run reads them: json is
loaded already and parses them in ~0.1 ms; importing tomllib and parsing cost ~15 ms of every run).
tests/test_rules_meta.py fails when they are out of date: run `python scripts/gen_docs.py`."""

import json
import sys
import tomllib
from pathlib import Path


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
    from aoti_lsp.cli.docs import index, render  # after the tables: the rules read them
    from aoti_lsp.rules import all_rules

    files = {OUT / f"{r.code}.md": render(r) for r in all_rules()}
    files[OUT / "README.md"] = index()
    files[ROOT / "README.md"] = readme_with_editors()
    files.update(tables())
    return files


def tables() -> dict[Path, str]:
    out = {}
    for table in sorted((ROOT / "server" / "aoti_lsp" / "data").glob("*.toml")):
        data = tomllib.loads(table.read_text("utf-8"))
        out[table.with_suffix(".json")] = json.dumps(data, indent=1, sort_keys=True) + "\n"
    return out


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for path, text in tables().items():  # first: the rules read them when imported
        path.write_text(text, "utf-8")
    files = expected()
    for path, text in files.items():
        path.write_text(text, "utf-8")
    print(f"wrote {len(files)} files (docs/rules, README.md, server/aoti_lsp/data/*.json)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
