"""Applying fixes: all-or-nothing per fix, never two overlapping edits, re-lint until stable.
Python's compiler decides: a file it rejects is not rewritten, and a fix whose result it rejects
is dropped (the file on disk is never corrupted). Edits keep the file's layout (layout.py)."""

from __future__ import annotations

from aoti_lsp.analysis import budget
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.findings import Edit, Finding, Fix, applicable
from aoti_lsp.fixes.layout import adapt, compile_error, not_compiled
from aoti_lsp.analysis.records import record
from aoti_lsp.analysis.source import Source

MAX_PASSES = 10


def apply_edits(data: bytes, edits: list[Edit] | tuple[Edit, ...]) -> bytes:
    out, last = [], 0
    for e in sorted(adapt(data, edits), key=lambda e: (e.start, e.end)):
        out.append(data[last : e.start])
        out.append(e.text.encode("utf-8"))
        last = e.end
    out.append(data[last:])
    return b"".join(out)


def choose(findings: list[Finding], unsafe: bool) -> list[Fix]:
    """Fixes that can go in together: each fix whole, none overlapping another."""
    chosen: list[Fix] = []
    taken: list[Edit] = []
    for f in findings:
        if not applicable(f.fix, unsafe) or f.fix.other_files:
            continue  # a fix that edits other files too is applied by project_fix, whole
        if f.fix.resolve() is None:
            continue  # a lazy fix whose edits could not be built (logged): no fix
        if any(e.overlaps(t) for e in f.fix.edits for t in taken):
            continue
        chosen.append(f.fix)
        taken.extend(f.fix.edits)
    return chosen


def compiling_subset(candidates: list, compiles_with) -> tuple[list, list]:
    """(accepted, rejected): the candidates whose edits go in, in order, each on top of those
    accepted before it, as one by one would choose; `compiles_with(accepted + group)` says
    whether the files they edit still compile. Groups are tried whole, then halved: one compile
    when all go in (a dense file's 1,100 migrations: one compile, not 1,100), ~2 log n per
    candidate that breaks its file."""
    accepted: list = []
    rejected: list = []

    def take(group: list) -> None:
        if not group:
            return
        if compiles_with(accepted + group):
            accepted.extend(group)
        elif len(group) == 1:
            rejected.append(group[0])
        else:
            take(group[: len(group) // 2])
            take(group[len(group) // 2 :])

    take(list(candidates))
    return accepted, rejected


@record("data", "applied", "remaining", "errors")
class FixResult:
    def __init__(self, data: bytes, applied: int = 0, remaining: list[Finding] | None = None, errors: list[str] | None = None):
        self.data = data
        self.applied = applied
        self.remaining = [] if remaining is None else remaining
        self.errors = [] if errors is None else errors


def fix_source(source: Source, config: Config | None = None, unsafe: bool = False, project=None) -> FixResult:
    """Fixes applied until none is left, within the time budget (budget.py)."""
    try:
        with budget.deadline():
            return _fix_source(source, config, unsafe, project)
    except budget.OverBudget as exc:
        if budget.armed():
            raise
        return FixResult(source.data, 0, [], [f"{source.path}: {exc}; not fixed"])


def _fix_source(source: Source, config: Config | None, unsafe: bool, project) -> FixResult:
    data, applied, rejected = source.data, 0, set()
    why = compile_error(data, source.path)
    if why is not None:
        result = analyze(source, config, project=project)
        return FixResult(data, 0, result.findings, [*result.errors, not_compiled(source.path, why)])
    for _ in range(MAX_PASSES):
        current = Source(data, source.path)
        result = analyze(current, config, project=project)
        findings = [f for f in result.findings if (f.code, f.start, f.fix and f.fix.title) not in rejected]
        fixes = choose(findings, unsafe)
        if not fixes:
            return FixResult(data, applied, result.findings, result.errors)
        accepted, broke = compiling_subset(fixes, lambda group: compile_error(
            apply_edits(data, [e for f in group for e in f.edits]), source.path) is None)
        for fix in broke:
            rejected.add(next(((f.code, f.start, f.fix.title) for f in findings if f.fix is fix), None))
        if accepted:
            data = apply_edits(data, [e for f in accepted for e in f.edits])
            applied += len(accepted)
    final = analyze(Source(data, source.path), config, project=project)
    return FixResult(data, applied, final.findings, final.errors)
