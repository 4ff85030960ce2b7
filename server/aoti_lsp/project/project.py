"""Cross-file facts. Each rule that needs other files defines `summarize(ctx)`, returning a
small picklable value for one file (no tree nodes); the project keeps those per file and
rules read them back through `ctx.project`. Kept cheap: tree-sitter only, no libcst, no torch.

The CLI summarises every candidate file before checking any; the server summarises files of
the workspace when it starts and again whenever one is opened, changed or saved.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from aoti_lsp.analysis import budget, reads
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import Context, reuse_context
from aoti_lsp.analysis.records import record
from aoti_lsp.rules import all_rules
from aoti_lsp.analysis.source import Source, SourceError, decode_check
from aoti_lsp.logs import logger

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (~3 ms of a hook run)
if TYPE_CHECKING:
    from typing import Any


def summarizers(config: Config | None = None, rules=None):
    """`rules`: the candidates (default: every rule)."""
    return [r for r in (all_rules() if rules is None else rules) if hasattr(r, "summarize") and (config is None or config.enabled(r.code))]


FACTS = "@facts"  # the summary entry of the facts layer (constants, artifact sites), beside the rules'
SKIPPED = "@skipped"  # a summary cut by the time budget: why (the CLI reports it; it is never cached)


def summarize(source: Source, config: Config | None = None, rules=None, lazy: bool = False) -> dict[str, Any]:
    """{rule code: summary} for one file, plus the facts layer's own entry; rules whose
    triggers are absent are skipped. `rules`: the candidates (default: every rule). `lazy`: a
    rule may answer from the text alone, leaving the rest to be read when asked
    (Rule.summary_from_text): a run's pass 1 over files nobody edits; an editor's buffer is
    summarised whole."""
    out: dict[str, Any] = {}
    rules = [r for r in summarizers(config, rules) if r.wants_summary(source, config or Config())]
    if not rules:
        return out
    if lazy:
        texts = [(r.code, r.summary_from_text(source, config or Config())) for r in rules]
        if all(t is not None for _, t in texts):  # every rule answers from the text: no parse, and
            return {code: t for code, t in texts if t}  # the file's constants are read when asked (facts_of)
    ctx = reuse_context(source, config or Config())  # the check of this source reuses it, or it the check's
    try:
        with budget.deadline():  # a summary that never ends must not hang the run (issue 11)
            try:
                facts = ctx.facts.summary()
                if facts:
                    out[FACTS] = facts
            except Exception:
                logger(__name__).exception("facts summary failed for %s", source.path)
            for rule in rules:
                try:
                    value = rule.summarize(ctx)
                except Exception:
                    logger(__name__).exception("summary of %s failed for %s", rule.code, source.path)
                    continue
                if value:
                    out[rule.code] = value
    except budget.OverBudget as cut:
        source.context = None  # cut anywhere: the check starts afresh, not from half-filled caches
        if budget.armed():
            raise
        logger(__name__).warning("summary of %s: over the time budget, skipped", source.path)
        return {SKIPPED: str(cut)}
    return out


@record("summaries", "version", "root")
class Project:
    """`summaries`: path -> code -> summary; `version` bumps on every change (a cheap staleness
    check for callers); `root`: the project's root folder (its files' module names are relative to it)."""

    def __init__(self, summaries: dict[str, dict[str, Any]] | None = None, version: int = 0, root: str | None = None):
        self.summaries = {} if summaries is None else summaries
        self.version = version
        self.root = root

    def update(self, path: str, summary: dict[str, Any]) -> bool:
        """Store a file's summary; True when it changed (dependents need a re-check)."""
        if self.summaries.get(path) == summary:
            return False
        if summary:
            self.summaries[path] = summary
        else:
            self.summaries.pop(path, None)
        self.version += 1
        self.__dict__.setdefault("stamps", {})[path] = self.version
        return True

    def remove(self, path: str) -> bool:
        if self.summaries.pop(path, None) is not None:
            self.version += 1
            self.__dict__.setdefault("stamps", {})[path] = self.version
            return True
        return False

    def others(self, path: str) -> tuple:
        """When each file but `path` last changed its summary (slice.py: a slice of `path` holds
        while none did), and the root."""
        here = os.path.abspath(path)

        def build():
            stamps = self.__dict__.get("stamps", {})
            return tuple(sorted((p, v) for p, v in stamps.items() if os.path.abspath(p) != here)) + (self.root,)
        return self.memo(f"others {here} {self.root}", build)  # per keystroke: rebuilt only when a summary changed

    def of(self, code: str) -> dict[str, Any]:
        """path -> summary of one rule, across the project."""
        return {p: s[code] for p, s in self.summaries.items() if code in s}

    def __getstate__(self):
        """Pickled for worker processes: summaries and the file list (caches and the reader stay here)."""
        return {k: v for k, v in self.__dict__.items() if k in ("summaries", "version", "root", "files")}

    def memo(self, name: str, build: Callable[[], Any]) -> Any:
        """A value derived from the summaries, rebuilt only when they change."""
        memos = self.__dict__.setdefault("_memos", {})
        found = memos.get(name)
        if found is None or found[0] != self.version:
            found = memos[name] = (self.version, build())
        return found[1]

    # -- other files' trees (a migration edits every file that names an artifact) ---------------
    def context(self, path: str):
        """An engine Context of another file of the project (its editor buffer when the server
        has one: `reader`), parsed once per project version."""
        path = os.path.abspath(path)
        contexts = self.memo("contexts", dict)
        if path not in contexts:
            contexts[path] = _context(path, self.__dict__.get("reader"), self)
        reads.record(path)  # what it says of this file's findings may change with that file's text
        return contexts[path]

    # -- constants across modules --------------------------------------------------------------
    def resolve(self, value: str, depth: int = 0) -> str | None:
        """A path value with its references to other modules' constants replaced by their
        values (None when one cannot be followed: not a project module, not a constant)."""
        from aoti_lsp.analysis.facts import REF, normalize

        if REF not in value:
            return normalize(value) if depth == 0 else value
        if depth > 8:
            return None
        before, _, rest = value.partition(REF)
        reference, _, after = rest.partition(REF)
        folder, _, target = reference.partition("|")
        found = self.constant(folder, target)
        if found is None:
            return None
        inner = self.resolve(found, depth + 1)
        if inner is None:
            return None
        if before and inner.startswith("/"):
            return None  # joined onto something: an absolute value would replace it
        out = self.resolve(before + inner + after, depth + 1)
        return normalize(out) if out is not None and depth == 0 else out

    def constant(self, folder: str, target: str) -> str | None:
        """The value of `target` (`pkg.paths.TOWER`, `.paths.TOWER`) imported from `folder`."""
        found = self.module_file(folder, target)
        return None if found is None else self.constants_of(found[0]).get(found[1])

    def _candidates(self, folder: str, dots: int, module: list[str]) -> list[str]:
        if dots:
            base = folder
            for _ in range(dots - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:
            # the project root, `src/` below it, then the importing file's folder and its parents
            # (where `python -m` or a script's own folder puts the package on sys.path)
            root = os.path.abspath(self.root) if self.root else None
            bases = [root, root and os.path.join(root, "src"), folder]
            for _ in range(6):
                parent = os.path.dirname(bases[-1])
                if parent == bases[-1]:
                    break
                bases.append(parent)
            bases = [b for b in dict.fromkeys(bases) if b]
        return [c for base in bases for c in (os.path.join(base, *module) + ".py", os.path.join(base, *module, "__init__.py"))]

    def module_file(self, folder: str, target: str) -> tuple[str, str] | None:
        """(file, name) of the module constant `target` imported from `folder`."""
        dots = len(target) - len(target.lstrip("."))
        parts = target[dots:].split(".")
        if len(parts) < 2:
            return None
        for candidate in self._candidates(folder, dots, parts[:-1]):
            if self.constants_of(candidate) is not None:
                return candidate, parts[-1]
        return None

    def tail(self, reference: str, depth: int = 0) -> tuple[str, int, int] | None:
        """(file, start, end) of the string text a referenced constant's value ends with."""
        from aoti_lsp.analysis.facts import REF

        folder, _, target = reference.strip(REF).partition("|")
        found = self.module_file(folder, target)
        if found is None or depth > 8:
            return None
        path, name = found
        t = self.facts_of(path).get("tails", {}).get(name)
        if isinstance(t, str):
            return self.tail(t, depth + 1)
        return (path, t[0], t[1]) if t else None

    def constants_of(self, path: str) -> dict[str, str] | None:
        facts = self.facts_of(path)
        return None if facts is None else facts.get("constants", {})

    def facts_of(self, path: str) -> dict | None:
        """The facts summary of a file (constants, tails, sites): from its summary, else read
        from disk once (a module holding only paths has no trigger token, so no summary)."""
        path = os.path.abspath(path)
        index = self.memo("paths", lambda: {os.path.abspath(p): p for p in self.summaries})
        known = index.get(path)
        if known is not None and FACTS in self.summaries[known]:
            return self.summaries[known][FACTS]
        reader = self.__dict__.get("reader")
        data = reader(path) if reader is not None else None
        if data is not None:  # an editor buffer, or a file a fix is rewriting: never the disk's
            return _facts_of_data(path, data)
        reads.record(path)  # its constants are in no summary: a cached result must see them change
        return self._on_disk(path, "facts", _read_facts)

    def from_file(self, path: str, name: str, compute: Callable[[Any], Any]) -> Any:
        """compute(a Context of `path`) for what a summary left to be read when asked (jagged's
        "lazy_kw"): from the file's editor buffer, else from disk, as facts_of reads (_on_disk).
        A cached result depends on the file."""
        path = os.path.abspath(path)
        reads.record(path)
        reader = self.__dict__.get("reader")
        data = reader(path) if reader is not None else None
        if data is not None:
            memo = self.memo("from buffers", dict)
            if (path, name) not in memo:
                memo[(path, name)] = compute(Context(Source(data, path), Config(), self))
            return memo[(path, name)]

        def read(p):
            ctx = _context(p, None, self)
            return compute(ctx) if ctx is not None else None
        return self._on_disk(path, name, read)

    def depends_on(self, path: str) -> None:
        """What from_file records, for a value read through it once and kept by the caller: the
        check asking now depends on the (absolute) `path` too."""
        reads.record(path)

    def _on_disk(self, path: str, name: str, read: Callable[[str], Any]) -> Any:
        """read(path) of a file no summary holds, kept by the file's stamp: a change on disk
        moves the version (disk_changed)."""
        cache = self.__dict__.setdefault("_disk_reads", {})
        stamp = file_stamp(path)
        hit = cache.get((path, name))
        if hit is not None and hit[0] == stamp:
            return hit[1]
        value = None if stamp is None else read(path)
        cache[(path, name)] = (stamp, value)  # a missing file too: creating it is a change
        return value

    def disk_changed(self) -> bool:
        """True, and the version bumped, when a file read from disk (_on_disk: no summary, no
        buffer) changed there since: results are keyed by the version, and an editor that
        watches no files (Neovim on Linux) tells the server only of the buffers it saves."""
        reads = self.__dict__.get("_disk_reads") or {}
        changed = [key for key, (stamp, _) in list(reads.items()) if file_stamp(key[0]) != stamp]
        for key in changed:
            del reads[key]
            self.version += 1
            self.__dict__.setdefault("stamps", {})[key[0]] = self.version  # others(): slices of dependents
        return bool(changed)

    def artifact_sites(self) -> dict[str, list[tuple[str, str, tuple]]]:
        """The project's artifact graph: resolved key -> (path, "compile" | "load", site) for
        every compile and load of a known artifact path, across files."""
        def build():
            out: dict[str, list] = {}
            for path, summary in self.summaries.items():
                facts = summary.get(FACTS) or {}
                for kind in ("compile", "load"):
                    for site in facts.get(kind + "s", ()):
                        key = self.resolve(site[0])
                        if key is not None:
                            out.setdefault(key, []).append((path, kind, site))
            return out
        return self.memo("artifacts", build)


def _context(path: str, reader, project):

    data = reader(path) if reader is not None else None
    if data is None:
        from aoti_lsp.project import notebook  # difflib, its regexes: only where another file is read

        data = notebook.read_program(path)
        if data is None:
            return None
    return Context(Source(data, path), Config(), project)


def _facts_of_data(path: str, data: bytes) -> dict:
    try:
        facts = Context(Source(data, path), Config()).facts
        return {"constants": facts.constants, "tails": facts.tails}
    except Exception:
        logger(__name__).exception("reading the facts of %s failed", path)
        return {}


def file_stamp(path: str) -> tuple | None:
    """(mtime, size) of a file, None when it is gone: what says it changed on disk."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _read_facts(path: str) -> dict | None:
    from aoti_lsp.project import notebook

    try:
        with open(path, "rb") as fh:
            data = fh.read(4 * 1024 * 1024 + 1)
        if len(data) > 4 * 1024 * 1024:
            return {}
        data = notebook.python_of(path, data)
        decode_check(data)
    except (OSError, SourceError):
        return None
    return _facts_of_data(path, data)
