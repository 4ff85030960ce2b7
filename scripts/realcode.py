#!/usr/bin/env python3
"""Score the deprecated-API migration on real public code (tests/realcode/migration.toml).

Each labelled repository is materialised at its commit from a bare mirror (git archive, into a
temp dir outside any work tree), aoti-lsp is run on it twice (--check --output-format json, then
--diff --unsafe-fixes) and every labelled site is scored:

  migrated  the diff rewrites the site's line
  refused   a finding at the site, not rewritten (the tool's reason text is shown)
  missed    no AOTI001/002/003 finding at the site

and compared with its label (see README.md, "Real code"); a site labelled `fallback` (old-API
code kept for older torch beside the new path) must get no finding: silent-correctly, else
false-positive. Exit 0 when the run completes
(whatever the score), 2 on a usage error (no labels, no mirror, repositories not fetched).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "tests" / "realcode" / "migration.toml"
CODES = {"AOTI001", "AOTI002", "AOTI003"}
VERDICTS = ("migrated-correctly", "refused-correctly", "refused-wrongly", "wrong", "missed", "silent-correctly",
            "false-positive", "tool-error")
# A migration that re-exports the module of an ExportedProgram (issue 18, item 3).
REEXPORT = re.compile(r"export\(\s*[\w.\[\]]+\.module\(\)")
# Rough kinds of the tool's refusal text, only to show where its reason differs from the label.
REASON_KINDS = (
    ("plain-function", re.compile(r"plain function|not an nn\.Module", re.I)),
    ("cross-process", re.compile(r"c\+\+|another program|other program|outside the project|outside python|cross-process"
                                 r"|command line|argv|consumer", re.I)),
    ("computed-path", re.compile(r"computed at run time|cannot all be found|cannot follow", re.I)),
    ("graph-module", re.compile(r"graph module|module of something", re.I)),
    ("files-read", re.compile(r"package's files|no such siblings", re.I)),
    ("graph-edited", re.compile(r"is changed after|has a part bound to a name", re.I)),
    ("broken-fallback", re.compile(r"names a function, not a module|import above always fails", re.I)),
    ("vendor-reader", re.compile(r"which this analysis does not read", re.I)),
)


class UsageError(Exception):
    pass


@dataclass
class Hunk:
    old_start: int
    removed: dict = field(default_factory=dict)  # old line number -> text
    added: list = field(default_factory=list)
    new: list = field(default_factory=list)  # the hunk's lines after the fix (context and added)


def load_sites(path: Path) -> list[dict]:
    try:
        sites = tomllib.loads(path.read_text())["site"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read labels {path}: {exc}") from exc
    for s in sites:
        missing = {"id", "repo", "commit", "path", "line", "api", "label"} - s.keys()
        if missing or s["label"] not in ("migrate", "refuse", "fallback") or not re.fullmatch(r"[0-9a-f]{40}", s["commit"]):
            raise UsageError(f"bad site {s.get('id')!r} in {path}: missing {sorted(missing)} or bad label/commit")
    return sites


def git_dir(mirror: Path, repo: str) -> Path | None:
    base = mirror / repo.replace("/", "+")
    for cand in (base / "repo", base):
        if (cand / "objects").is_dir() or (cand / "HEAD").is_file():
            return cand
    return None


def materialise(gitdir: Path, commit: str) -> Path:
    """The tree at `commit` in a fresh temp dir outside any work tree; files the snapshot lacks
    (the store keeps no blob of 4 MiB or more) are left out."""
    tmp = Path(tempfile.mkdtemp(prefix="aoti-realcode-")).resolve()
    inside = subprocess.run(["git", "-C", str(tmp), "rev-parse", "--is-inside-work-tree"],
                            capture_output=True, text=True)
    if inside.returncode == 0:
        shutil.rmtree(tmp)
        raise UsageError(f"{tmp} is inside a git work tree: set TMPDIR elsewhere")
    git = ["git", f"--git-dir={gitdir}"]
    tree = subprocess.run(git + ["ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout
    entries = [e.split(b"\t", 1) for e in tree.split(b"\0") if e]
    blobs = [(meta.split()[2], p) for meta, p in entries if meta.split()[1] == b"blob"]
    check = subprocess.run(git + ["cat-file", "--batch-check"], input=b"\n".join(s for s, _ in blobs) + b"\n",
                           capture_output=True, check=True).stdout.splitlines()
    absent = [p.decode() for (_, p), line in zip(blobs, check) if line.endswith(b"missing")]
    spec = ["."] + [f":(exclude,literal){p}" for p in absent]
    tar = subprocess.run(git + ["archive", "--format=tar", commit, "--"] + spec, capture_output=True)
    if tar.returncode:
        raise RuntimeError(f"git archive {commit} failed: {tar.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as tf:
        tf.extractall(tmp, filter="data")
    return tmp


def run_tool(tool: str, root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([tool, "--check", "--no-cache", *args, "."], cwd=root, capture_output=True, text=True)


def rel(root: Path, name: str) -> str:
    p = Path(name)
    return os.path.relpath(os.path.realpath(p if p.is_absolute() else root / p), root)


def parse_diff(root: Path, text: str) -> dict[str, list[Hunk]]:
    hunks: dict[str, list[Hunk]] = defaultdict(list)
    current, old = None, 0
    for line in text.splitlines():
        if line.startswith("--- "):
            current = rel(root, line[4:].split("\t")[0].removeprefix("a/"))
        elif line.startswith("+++ "):
            continue
        elif line.startswith("@@") and current is not None:
            old = int(re.match(r"@@ -(\d+)", line).group(1))
            hunks[current].append(Hunk(old))
        elif current is not None and hunks[current]:
            h = hunks[current][-1]
            if line.startswith("-"):
                h.removed[old] = line[1:]
                old += 1
            elif line.startswith("+"):
                h.added.append(line[1:])
                h.new.append(line[1:])
            elif not line.startswith("\\"):
                h.new.append(line[1:])
                old += 1
    return hunks


def findings_at(root: Path, items: list) -> dict:
    at = defaultdict(list)
    for f in items:
        if f.get("code") in CODES:
            at[(rel(root, f["filename"]), f["location"]["row"])].append(f)
    return at


def refusal_text(found: list) -> str:
    notes = [r["message"] for f in found for r in f.get("related") or [] if "no automatic fix" in r["message"]]
    if notes:
        return " | ".join(dict.fromkeys(notes))
    fixes = [f["fix"] for f in found if f.get("fix")]
    if fixes:
        return f"offered ({fixes[0].get('applicability')}) but not applied by --diff --unsafe-fixes: {fixes[0].get('message')}"
    return "no fix and no reason given"


def reason_kind(text: str) -> str:
    return next((kind for kind, rx in REASON_KINDS if rx.search(text)), "other")


def _compiles_the_program(removed: str, added: str) -> bool:
    """The old call compiled `ep.module()` and the new one compiles `ep` itself: the program keeps
    the dims it was exported with (a dynamic_shapes= beside `.module()` re-stated them)."""
    return any(re.search(rf"aoti_compile_and_package\(\s*{re.escape(m)}\s*[,)]", added)
               for m in re.findall(r"([\w.]+)\.module\(\)", removed))


def migration_problems(site: dict, hunk: Hunk) -> list[str]:
    """What is wrong with a migration, read from the diff: the site's own require/forbid, and, for
    a compile, the two general faults (dynamic_shapes dropped, an ExportedProgram's .module()
    re-exported)."""
    added, new = "\n".join(hunk.added), "\n".join(hunk.new)
    removed = "\n".join(hunk.removed.values())
    out = [f"nothing after the fix matches {rx!r}" for rx in site.get("require", []) if not re.search(rx, new)]
    out += [f"adds {rx!r}" for rx in site.get("forbid", []) if re.search(rx, added)]
    if "aot_compile" not in site["api"]:  # a loader's hunk may hold its compile's edits too
        return out
    if "dynamic_shapes" in removed and "dynamic_shapes" not in added and not _compiles_the_program(removed, added):
        out.append("drops dynamic_shapes")
    if REEXPORT.search(new):
        out.append("re-exports an ExportedProgram's .module()")
    return list(dict.fromkeys(out))


def score_site(site: dict, root: Path, at: dict, hunks: dict) -> dict:
    found = at.get((site["path"], site["line"]), [])
    hunk = next((h for h in hunks.get(site["path"], []) if site["line"] in h.removed), None)
    tail = site["api"].rsplit(".", 1)[-1]
    if site["label"] == "fallback":  # kept for older torch beside the new path: no finding, no fix
        outcome = "migrated" if hunk is not None and tail in hunk.removed[site["line"]] else "refused" if found else "missed"
        verdict = "silent-correctly" if outcome == "missed" else "false-positive"
        detail = refusal_text(found) if found else ""
        return {"id": site["id"], "repo": site["repo"], "path": site["path"], "line": site["line"],
                "label": site["label"], "reason": "", "outcome": "silent" if outcome == "missed" else outcome,
                "verdict": verdict, "tool_reason_kind": "", "detail": detail}
    if hunk is not None and tail in hunk.removed[site["line"]]:
        outcome, detail = "migrated", ""
        problems = migration_problems(site, hunk)
        if site["label"] == "refuse":
            verdict, detail = "wrong", f"migrated, but the label is refuse ({site.get('reason')})"
        elif problems:
            verdict, detail = "wrong", "; ".join(problems)
        else:
            verdict = "migrated-correctly"
        if problems and site["label"] == "refuse":
            detail += "; " + "; ".join(problems)
    elif found:
        outcome, detail = "refused", refusal_text(found)
        verdict = "refused-correctly" if site["label"] == "refuse" else "refused-wrongly"
    else:
        outcome, verdict, detail = "missed", "missed", ""
    kind = reason_kind(detail) if outcome == "refused" else ""
    return {"id": site["id"], "repo": site["repo"], "path": site["path"], "line": site["line"],
            "label": site["label"], "reason": site.get("reason", ""), "outcome": outcome,
            "verdict": verdict, "tool_reason_kind": kind, "detail": detail}


def run_repo(tool: str, gitdir: Path, commit: str, sites: list[dict], keep: bool) -> list[dict]:
    root = materialise(gitdir, commit)
    try:
        check = run_tool(tool, root, "--output-format", "json")
        diff = run_tool(tool, root, "--diff", "--unsafe-fixes")
        if check.returncode not in (0, 1) or diff.returncode not in (0, 1):
            err = (check.stderr or diff.stderr).strip().splitlines()
            return [{"id": s["id"], "repo": s["repo"], "path": s["path"], "line": s["line"], "label": s["label"],
                     "reason": s.get("reason", ""), "outcome": "error", "verdict": "tool-error",
                     "tool_reason_kind": "", "detail": err[-1] if err else f"exit {check.returncode}/{diff.returncode}"}
                    for s in sites]
        items = json.loads(check.stdout or "[]")
        at, hunks = findings_at(root, items), parse_diff(root, diff.stdout)
        return [score_site(s, root, at, hunks) for s in sites]
    finally:
        if keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


def find_tool(given: str | None) -> str:
    cand = given or str(Path(sys.executable).with_name("aoti-lsp"))
    found = shutil.which(cand) or shutil.which("aoti-lsp")
    if not found:
        raise UsageError(f"aoti-lsp not found ({cand}); pass --tool")
    return found


def report(results: list[dict]) -> None:
    for r in results:
        tag = f"{r['label']}{'/' + r['reason'] if r['reason'] else ''}"
        print(f"{r['verdict']:<19} {r['outcome']:<8} {tag:<22} {r['id']}  ({r['repo']} {r['path']}:{r['line']})")
        if r["detail"]:
            kind = f"[{r['tool_reason_kind']}] " if r["tool_reason_kind"] else ""
            print(f"{'':<19} {kind}{r['detail']}")
    counts = Counter(r["verdict"] for r in results)
    differ = [r for r in results if r["verdict"] == "refused-correctly" and r["tool_reason_kind"] != r["reason"]]
    print()
    print(f"{len(results)} sites in {len({r['repo'] for r in results})} repositories: "
          + ", ".join(f"{v} {counts[v]}" for v in VERDICTS if counts[v] or v != "tool-error"))
    if differ:
        print(f"refused-correctly with another reason than the label's: {len(differ)} "
              f"({', '.join(r['id'] for r in differ)})")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--labels", type=Path, default=LABELS)
    p.add_argument("--mirror", type=Path, help="folder of bare mirrors, owner+name/repo (as `fetch` makes them)")
    p.add_argument("--fetch-list", action="store_true", help="print the repositories to fetch and stop")
    p.add_argument("--tool", help="the aoti-lsp executable (default: the one next to this Python)")
    p.add_argument("--only", nargs="+", metavar="ID", help="score only these sites")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the per-site results as JSON")
    p.add_argument("--skip-missing", action="store_true", help="score the fetched repositories only")
    p.add_argument("--keep", action="store_true", help="keep the materialised trees (paths on stderr)")
    args = p.parse_args(argv)
    try:
        sites = load_sites(args.labels)
        if args.only:
            unknown = set(args.only) - {s["id"] for s in sites}
            if unknown:
                raise UsageError(f"unknown site ids: {', '.join(sorted(unknown))}")
            sites = [s for s in sites if s["id"] in args.only]
        by_hand = [s for s in sites if s.get("unfetchable")]  # listed, never materialised
        sites = [s for s in sites if not s.get("unfetchable")]
        repos = list(dict.fromkeys(s["repo"] for s in sites))
        if args.fetch_list:
            for repo in repos:
                have = args.mirror and git_dir(args.mirror, repo)
                print(f"github:{repo}" + ("" if not args.mirror else "  (fetched)" if have else "  (missing)"))
            return 0
        if not args.mirror or not args.mirror.is_dir():
            raise UsageError("--mirror DIR (the folder of fetched bare repositories) is required")
        missing = [r for r in repos if not git_dir(args.mirror, r)]
        if missing and not args.skip_missing:
            raise UsageError(f"not in {args.mirror}: {', '.join(missing)} (fetch them, or --skip-missing)")
        tool = find_tool(args.tool)
        groups = defaultdict(list)
        for s in sites:
            if s["repo"] not in missing:
                groups[(s["repo"], s["commit"])].append(s)
        results = []
        for (repo, commit), group in groups.items():
            print(f"... {repo} @ {commit[:12]} ({len(group)} sites)", file=sys.stderr)
            results += run_repo(tool, git_dir(args.mirror, repo), commit, group, args.keep)
    except UsageError as exc:
        print(f"realcode: error: {exc}", file=sys.stderr)
        return 2
    report(results)
    for s in by_hand:
        print(f"not scored (cannot be fetched here: {s['unfetchable']}): {s['id']} ({s['repo']} {s['path']}:{s['line']}), "
              f"label {s['label']}, judged by hand")
    if missing:
        print(f"not scored (not fetched): {', '.join(missing)}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
