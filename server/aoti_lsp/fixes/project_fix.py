"""Fixes across files. A migration edits every file that names its artifact, so fixes are
chosen for the whole project at once: each fix goes in whole, in every file it touches, or not
at all (no overlap with a fix taken before it, and every file it edits still compiles); then
the edited files are summarised and checked again, until nothing more applies.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.findings import Edit, Finding, Fix
from aoti_lsp.fixes.fixer import applicable, apply_edits, compiling_subset
from aoti_lsp.project import notebook
from aoti_lsp.fixes.layout import compile_error
from aoti_lsp.project.project import summarize
from aoti_lsp.analysis.source import Source

MAX_PASSES = 10


@dataclass
class FileFix:
    path: str  # as the caller named it (or absolute, for a file only a fix reached)
    old: bytes
    new: bytes
    applied: int = 0
    together: set[str] = field(default_factory=set)  # files a fix edited with this one: written together or not at all
    remaining: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def compiles(data: bytes, path: str) -> bool:
    """Python's own verdict (layout.compile_error): what it rejects is never written."""
    return compile_error(data, path) is None


def fix_project(sources: list[Source], config, unsafe: bool, project) -> dict[str, FileFix]:
    """Apply the applicable fixes of `sources` (and of the files their fixes reach)."""
    files: dict[str, FileFix] = {}
    names: dict[str, str] = {}  # absolute path -> the caller's name for it
    for s in sources:
        key = os.path.abspath(s.path)
        names[key] = s.path
        files[key] = FileFix(s.path, s.data, s.data)
    valid = {k: compiles(f.old, f.path) for k, f in files.items()}
    summary_keys = {os.path.abspath(p): p for p in project.summaries}
    previous_reader = project.__dict__.get("reader")
    # other files' facts are read from what the fixes made of them, not from the disk
    project.reader = lambda path: files[path].new if path in files else (previous_reader(path) if previous_reader else None)
    try:
        return _fix(files, names, valid, summary_keys, config, unsafe, project)
    finally:
        if previous_reader is None:
            project.__dict__.pop("reader", None)
        else:
            project.reader = previous_reader


def _fix(files, names, valid, summary_keys, config, unsafe, project) -> dict[str, FileFix]:
    rejected: set[tuple] = set()
    findings: dict[str, list[Finding]] = {}
    dirty = set(files)
    for _ in range(MAX_PASSES):
        for key in sorted(dirty):
            if key in files:
                findings[key] = _analyze(files[key], config, project)
        dirty = set()
        chosen: dict[str, list[Edit]] = {}  # every candidate's edits: none overlaps another
        candidates: list[tuple[tuple, Fix, dict[str, list[Edit]]]] = []
        for key in sorted(findings):
            for f in findings[key]:
                if not applicable(f.fix, unsafe) or (f.code, key, f.start, f.fix.title) in rejected:
                    continue
                if f.fix.resolve() is None:
                    continue  # a lazy fix whose edits could not be built (logged): no fix
                by_file = _by_file(f.fix, key)
                if any(e.overlaps(t) for p, es in by_file.items() for e in es for t in chosen.get(p, [])):
                    continue
                if not _loaded(by_file, files, names, valid, key):
                    rejected.add((f.code, key, f.start, f.fix.title))
                    files[key].errors.append(f"{files[key].path}: fix '{f.fix.title}' not applied: a file it edits cannot be read")
                    continue
                for p, es in by_file.items():
                    chosen.setdefault(p, []).extend(es)
                candidates.append(((f.code, key, f.start, f.fix.title), f.fix, by_file))
        # a file Python rejects is never rewritten, and a fix that breaks one is dropped whole
        accepted, broke = compiling_subset(candidates, lambda group: _compiles_with(group, files, valid))
        rejected.update(c[0] for c in broke)
        if not accepted:
            if broke:
                continue  # a fix that overlapped a dropped one is tried next pass (findings kept)
            break
        for p, es in _edits_by_file(accepted).items():
            files[p].new = apply_edits(files[p].new, es)
            dirty.add(p)
        for _, fix, by_file in accepted:
            first = next(iter(by_file))
            files[first].applied += 1
            group = set(by_file).union(*(files[p].together for p in by_file))
            for p in group:
                files[p].together = group
        for p in dirty:  # other files' findings may depend on what these now say
            source = Source(files[p].new, files[p].path)
            project.update(summary_keys.get(p, files[p].path), summarize(source, config))
    for key in dirty:
        findings[key] = _analyze(files[key], config, project)
    for key, f in files.items():
        f.remaining = findings.get(key, [])
        f.together = {files[p].path for p in f.together}
    return {f.path: f for f in files.values()}


def _compiles_with(group, files, valid) -> bool:
    """Every file the fixes of `group` edit still compiles with all of their edits."""
    return all(valid[p] and compiles(apply_edits(files[p].new, es), files[p].path) for p, es in _edits_by_file(group).items())


def _edits_by_file(group) -> dict[str, list[Edit]]:
    """The edits of the candidate fixes in `group`, by file."""
    out: dict[str, list[Edit]] = {}
    for _, _, by_file in group:
        for p, es in by_file.items():
            out.setdefault(p, []).extend(es)
    return out


def _analyze(f: FileFix, config, project) -> list[Finding]:
    result = analyze(Source(f.new, f.path), config, project=project)
    f.errors = [e for e in f.errors if "fix '" in e] + result.errors
    return result.findings


def _by_file(fix: Fix, here: str) -> dict[str, list[Edit]]:
    out: dict[str, list[Edit]] = {}
    for e in fix.edits:
        path = os.path.abspath(e.path) if e.path is not None else here
        out.setdefault(path, []).append(Edit(e.start, e.end, e.text))
    return out


def _loaded(by_file, files, names, valid, here) -> bool:
    """Every file a fix edits is known (read from disk when only the fix reached it)."""
    for path in by_file:
        if path in files:
            continue
        data = notebook.read_program(path)
        if data is None:
            return False
        rel = os.path.relpath(path)
        files[path] = FileFix(rel if not rel.startswith("..") else path, data, data)
        valid[path] = compiles(data, path)
    return True
