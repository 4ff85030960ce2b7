"""Precision and recall of aoti-lsp's rules on real public code, against hand labels:
tests/realcode/jagged.toml (AOTI201/AOTI202, the default) and tests/realcode/devices.toml
(AOTI101-AOTI103). A labels file may name its rules (`codes = [...]`).

The labels file names repositories by commit and labels findings by (path, line, code); the
code itself stays out of this repository. Given a folder of fetched checkouts (bare git
directories `<owner>+<name>/repo`, or `<owner>+<name>` itself being one), each commit's
Python files are extracted with `git archive` into a temporary folder, aoti-lsp checks it as
one project, and its findings are matched against the labels.

  python scripts/realcode_labels.py --mirrors /work/.mirror              # this tree's aoti-lsp
  python scripts/realcode_labels.py --mirrors /work/.mirror --labels tests/realcode/devices.toml
  python scripts/realcode_labels.py --mirrors /work/.mirror --aoti-lsp /other/.venv/bin/aoti-lsp
  python scripts/realcode_labels.py --mirrors /work/.mirror --json out.json

A repository whose checkout is missing is reported and left out of the figures (exit 2 when
none is there). Exit 0 otherwise; the figures are what matters, not the exit code.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "tests" / "realcode" / "jagged.toml"
CODES = ("AOTI201", "AOTI202")


@dataclass(frozen=True)
class Hit:
    repo: str
    path: str
    line: int
    code: str


def git_dir(mirrors: Path, repo: str) -> Path | None:
    base = mirrors / repo.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def extract(git: Path, commit: str, paths: list[str], into: Path) -> None:
    """The commit's Python files (and pyproject.toml files: they set the project root),
    under `paths` when given. Large blobs a fetch left out are never asked for."""
    listing = subprocess.run(["git", "--git-dir", str(git), "ls-tree", "-r", "--name-only", commit],
                             capture_output=True, text=True, check=True).stdout.splitlines()
    wanted = [f for f in listing if f.endswith((".py", "/pyproject.toml")) or f == "pyproject.toml"]
    if paths:
        wanted = [f for f in wanted if any(f == p or f.startswith(p.rstrip("/") + "/") for p in paths)]
    for i in range(0, len(wanted), 400):
        archive = subprocess.run(["git", "--git-dir", str(git), "archive", commit, "--", *wanted[i:i + 400]],
                                 capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)


def findings(aoti_lsp: str, folder: Path, repo: str, codes: tuple[str, ...] = CODES) -> list[Hit]:
    res = subprocess.run([aoti_lsp, "--check", "--no-cache", "--select", ",".join(codes), "--output-format", "json", "."],
                         cwd=folder, capture_output=True, text=True)
    if res.returncode not in (0, 1):
        raise SystemExit(f"{repo}: aoti-lsp failed ({res.returncode}): {res.stderr[-2000:]}")
    out = []
    for f in json.loads(res.stdout or "[]"):
        if f.get("code") in codes:
            rel = Path(f["filename"]).resolve().relative_to(folder.resolve()).as_posix()
            out.append(Hit(repo, rel, f["location"]["row"], f["code"]))
    return out


def score(labels: dict[Hit, bool], found: list[Hit], checked: set[str]) -> dict:
    tp = [h for h in found if labels.get(h) is True]
    fp = [h for h in found if labels.get(h) is False]
    unlabelled = [h for h in found if h not in labels]
    fn = [h for h, truth in labels.items() if truth and h.repo in checked and h not in found]
    flagged = len(tp) + len(fp) + len(unlabelled)
    positives = len(tp) + len(fn)
    return {
        "findings": flagged, "true_positives": len(tp), "false_positives": len(fp) + len(unlabelled),
        "unlabelled": [h.__dict__ for h in unlabelled], "missed": [h.__dict__ for h in fn],
        "precision": None if flagged == 0 else len(tp) / flagged,
        "recall": None if positives == 0 else len(tp) / positives,
        "labelled_positives": positives,
        "labelled_false_positives_silenced": sum(1 for h, t in labels.items() if not t and h.repo in checked and h not in found),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, required=True, help="folder of fetched checkouts")
    ap.add_argument("--aoti-lsp", default=str(Path(sys.executable).with_name("aoti-lsp")))
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--json", type=Path, help="write the figures and the findings here")
    args = ap.parse_args()
    data = tomllib.loads(args.labels.read_text())
    codes = tuple(data.get("codes", CODES))
    labels = {Hit(l["repo"], l["path"], l["line"], l["code"]): bool(l["truth"]) for l in data.get("label", ())}
    found: list[Hit] = []
    checked: set[str] = set()
    for entry in data["repo"]:
        git = git_dir(args.mirrors, entry["name"])
        if git is None:
            print(f"{entry['name']}: no checkout under {args.mirrors}, left out", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory(prefix="realcode-") as tmp:
            extract(git, entry["commit"], entry.get("paths", []), Path(tmp))
            hits = findings(args.aoti_lsp, Path(tmp), entry["name"], codes)
        checked.add(entry["name"])
        found += hits
        print(f"{entry['name']}: {len(hits)} finding(s)")
        for h in hits:
            verdict = {True: "true positive", False: "false positive"}.get(labels.get(h), "UNLABELLED")
            print(f"  {h.path}:{h.line} {h.code}  {verdict}")
    if not checked:
        return 2
    figures = score(labels, found, checked)
    p, r = figures["precision"], figures["recall"]
    print(f"\nfindings {figures['findings']}, true positives {figures['true_positives']}, false positives "
          f"{figures['false_positives']} ({len(figures['unlabelled'])} unlabelled), missed {len(figures['missed'])}")
    print(f"precision {'n/a (no finding)' if p is None else f'{p:.2f}'}, "
          f"recall {'n/a (no labelled positive)' if r is None else f'{r:.2f}'}, "
          f"labelled false positives now silent: {figures['labelled_false_positives_silenced']}")
    if args.json:
        args.json.write_text(json.dumps({"figures": figures, "findings": [h.__dict__ for h in found]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
