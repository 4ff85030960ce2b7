"""text -> tree -> resolved names -> rule findings. No I/O, no LSP, no torch."""

from __future__ import annotations

from aoti_lsp.analysis import budget
from aoti_lsp.analysis.context import Context, Result
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.findings import Finding
from aoti_lsp.analysis.noqa import is_suppressed
from aoti_lsp.rules import Rule, all_rules
from aoti_lsp.analysis.source import Source
from aoti_lsp.logs import logger


def analyze(source: Source, config: Config | None = None, rules: tuple[Rule, ...] | None = None, project=None) -> Result:
    """The findings of one file, within the time budget (budget.py)."""
    try:
        with budget.deadline():
            return _analyze(source, config, rules, project)
    except budget.OverBudget as exc:
        source.context = None  # cut anywhere: the next pass starts afresh, not from half-filled caches
        if budget.armed():
            raise  # an enclosing deadline (a whole fix run) owns it
        return Result(errors=[f"{source.path}: {exc}"], skipped=str(exc))


def _analyze(source: Source, config: Config | None, rules, project) -> Result:
    config = config or Config()
    result = Result()
    active = [
        r for r in (rules if rules is not None else all_rules())
        if config.enabled(r.code, source.path) and r.relevant(source, project) and r.wants(source, config)
    ]
    if not active:
        return result
    ctx = reuse_context(source, config, project)
    for rule in active:
        try:
            for f in rule.check(ctx):
                f.path = source.path
                f.severity = rule.severity  # one severity per rule, in every output format
                result.findings.append(f)
        except Exception as exc:  # a broken rule must not take the file (or the server) down
            if _unparsable(exc):  # code nested too deep, or libcst rejects it: the file's limit, not a bug
                result.errors.append(f"{source.path}: note: {rule.code} skipped this file: {_short(exc)}")
                continue
            logger(__name__).exception("rule %s failed on %s", rule.code, source.path)
            result.errors.append(f"{source.path}: internal error in rule {rule.code}: {exc!r}")
    result.findings = [f for f in result.findings if not _suppressed(source, f)]
    result.findings.sort(key=Finding.sort_key)
    return result


def reuse_context(source: Source, config: Config, project=None) -> Context:
    """The Context of `source`'s last pass (a summary's or a check's: names and facts, what the
    file's own code says) when made under `config`, else a new one; kept on `source` for the
    next pass. `project`: what this pass may read of other files (None: a summary)."""
    ctx = getattr(source, "context", None)
    if ctx is None or ctx.config != config:
        ctx = source.context = Context(source, config, project)
        return ctx
    ctx.project = project
    ctx.lookups = {}
    devices = ctx.shared.get("devices")
    if devices is not None:
        devices.new_analysis()  # its artifact look-ups depend on the project
    return ctx


def _unparsable(exc: BaseException) -> bool:
    # by name: libcst is imported only when a fix is built
    return isinstance(exc, RecursionError) or type(exc).__name__ == "ParserSyntaxError"


def _short(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply to analyse"
    return "libcst cannot parse it: " + str(exc).strip().splitlines()[0][:120]


def _suppressed(source: Source, finding: Finding) -> bool:
    line = source.lines.line_of(finding.start)
    text = source.lines.line_bytes(line)
    if b"noqa" not in text.lower():
        return False
    # the marker must be a real comment, not text inside a string
    at = source.lines.starts[line] + text.lower().index(b"noqa")
    node = source.tree.root_node.descendant_for_byte_range(at, at + 1)
    return node is not None and node.type == "comment" and is_suppressed(text, finding.code)
