"""Checking many files: two passes, spread over worker processes (tree-sitter holds the GIL).

Pass 1 summarises every file of the project for the cross-file rules (the files to check and
the rest of the project alike): each is read, dropped when it holds no trigger token (most
files: never parsed), and summarised. The parent merges the summaries into one Project. Pass 2
checks only the files asked for; a file parsed in pass 1 goes back to the worker that holds
its tree, so no file is parsed twice. With a cache (cache.py), pass 1 skips files whose
(mtime, size) or content is unchanged, and pass 2 skips files whose content and project
digest are unchanged: a warm run parses nothing.

A migration's fix edits are built lazily (findings.LazyFix). Findings leave a check (a worker
process or this one) and enter the cache as `findings.portable` makes them: with their edits
built when the output needs them (`edits`: JSON), else as stubs that keep title, applicability
and files (and no tree alive). A cached result holding stubs is not used by a run that needs
edits (it checks the file again and stores the result with its edits).
"""

from __future__ import annotations

import os
from functools import lru_cache

from aoti_lsp import lazyre
from aoti_lsp.project import cache as cachemod
from aoti_lsp.project import files
from aoti_lsp.analysis import budget

# The analysis (tree-sitter, rules, facts), the fixer and notebooks are imported where they are
# first used: a warm run that the cache answers, the common pre-commit case, never needs them.
MAX_BYTES = budget.MAX_BYTES  # the server's cap too
PARALLEL_MIN = 64  # below this many files, starting processes costs more than it saves
# ...nor below this many bytes to read, unless processes were asked for (-j). Measured (issue 25,
# 2 shared cores, best of 5, --no-cache): helion 1.4 MB 79-93 ms in one process vs 146-189 ms with
# two; e3nn 0.6 MB 121-186 vs 153-212 ms; ao 7 MB 486 vs 394 ms; torchrec 6.6 MB 599 vs 534 ms.
PARALLEL_BYTES = 4 << 20
CHUNK = 48  # files per pass-1 task: small enough to balance, large enough to be cheap to send
# What puts code within an AOTI package's reach (in_reach): every spelling of an export, an AOT
# compile or a package load holds `export` or one of REACH (torch.export.export,
# torch._export.aot_load, aoti_compile_and_package, load_package, and the imports of each). A
# project where no file a rule looks at is within reach has no artifact and nothing in
# AOTI201/202's scope (jagged.Model.scope): their work is skipped there.
# `export` (_EXPORT) does not count as an attribute of torch.jit or torch.onnx (TorchScript's
# decorator, the ONNX exporter) nor in the profiler's export_chrome_trace: none of them is AOTI.
REACH = (b"aot", b"load_package")
# the literal first, the look-behinds after it: a pattern that starts with a literal is searched
# for it (fast); one that starts with a look-behind is tried at every byte (~20x slower)
_EXPORT = lazyre.compile(rb"export(?<!jit\.export)(?<!onnx\.export)(?!_chrome_trace)")
JAGGED = frozenset({"AOTI201", "AOTI202"})


def read(path: str) -> tuple[bytes, str | None]:
    data, err, _ = _read(path)
    return data, err


def _read(path: str) -> tuple[bytes, str | None, tuple[int, int] | None]:
    """(data, error, (mtime_ns, size, inode) before the read: the cache's stamp): one open, one fstat."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
            if st.st_size > MAX_BYTES:
                mb = st.st_size // 1024 // 1024
                return b"", f"{path}: skipped: {mb} MB is over the {MAX_BYTES // 1024 // 1024} MB limit", stamp
            data = fh.read()
    except OSError as exc:
        return b"", f"{path}: cannot read: {exc.strerror}", None
    try:
        if path.endswith(".ipynb"):  # a notebook: its cells' program (notebook.py)
            from aoti_lsp.project import notebook

            data = notebook.python_of(path, data)
        if b"\x00" in data[:8192] or not _utf8(data):
            from aoti_lsp.analysis.source import decode_check

            decode_check(data)  # raises, with the message
    except Exception as exc:
        from aoti_lsp.analysis.source import SourceError

        if isinstance(exc, SourceError):
            return b"", f"{path}: {exc}", stamp
        raise
    return data, None, stamp


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def wanted(source, rules, cfg, project=None) -> bool:
    """Before the summaries (project None): would any rule check or summarise this file?
    After: would any rule check it? Token look-ups only, no parse."""
    if project is None:
        return any(r.wants(source, cfg) or (hasattr(r, "summarize") and r.wants_summary(source, cfg)) for r in rules)
    # relevant first: token look-ups that mostly say no, where wants may run a regex (AOTI201)
    return any(r.relevant(source, project) and r.wants(source, cfg) for r in rules)


def gate(cfg) -> tuple:
    """The trigger tokens of every enabled rule as clauses ((any of A) and (any of B, if B)): a
    file that passes none is neither checked nor summarised by any rule (`wanted` is False),
    so pass 1 drops it after one byte scan, before a Source or the rules exist. The cache keeps
    it (its key is the tool build and configuration): a run that reads one changed file
    imports no rule to drop it."""
    from aoti_lsp.project.project import summarizers
    from aoti_lsp.rules import all_rules, minimal

    clauses = []
    for r in all_rules():
        if cfg.enabled(r.code):
            t = minimal(tuple(r.triggers_for(cfg)))
            clauses.append((minimal(tuple(r.requires_any)), t) if r.requires_any else (t, ()))
    for r in summarizers(cfg):
        clauses.append((minimal(tuple(r.summary_triggers if r.summary_triggers is not None else r.triggers_for(cfg))), ()))
    return tuple(dict.fromkeys(clauses))


def _cached_gate(cfg, cache) -> tuple:
    """`gate`, from the cache when it holds it, else from the rules' table (triggers.py), else
    computed (the rules imported) and kept there."""
    if cache is not None and cache.gate is not None:
        return cache.gate
    from aoti_lsp.project import triggers

    clauses = triggers.clauses(cfg) or gate(cfg)
    if cache is not None:
        cache.set_gate(clauses)
    return clauses


def passes(clauses, data: bytes, seen: dict[bytes, bool] | None = None) -> bool:
    """Whether a file's bytes hold a clause of `gate` (bytes.find: no decode, no parse). Most
    files hold none: one scan per entry token settles them; the clauses are read only for the rest.
    `seen`: gets the clauses' tokens looked up, with the answers (the Source's rules ask again)."""
    entry, encoded = _encoded(clauses)
    seen = {} if seen is None else seen
    for t in entry:  # the answers kept: the clauses below ask for most of these tokens again
        found = seen[t] = t in data
        if found:
            break
    else:
        return False

    def has(t: bytes) -> bool:
        found = seen.get(t)
        if found is None:
            found = seen[t] = t in data
        return found

    return any(any(map(has, a)) and (not b or any(map(has, b))) for a, b in encoded)


@lru_cache(maxsize=8)
def _encoded(clauses) -> tuple:
    """(entry tokens: every clause needs one of its first group; the clauses as bytes)."""
    first = dict.fromkeys(t.encode() for a, _ in clauses for t in a)
    entry = tuple(t for t in first if not any(o != t and o in t for o in first))  # "aot_compile(" adds nothing
    return entry, tuple((tuple(t.encode() for t in a), tuple(t.encode() for t in b)) for a, b in clauses)


def _scan(paths, cfg, checked=None, prior=None, clauses=None, hashed=True, defer=None):
    """Pass 1 over some files: (kept sources by path, rows (path, error, summary, parsed, facts)).
    facts = (stamp, content hash, would a rule check it, reach), for the cache. Only files in
    `checked` (all when None) are kept for pass 2. `prior`: cache entries by path; a file whose
    content hash is the cached one (touched, not changed) is not summarised again. `clauses`: the
    `gate` (computed here when not given); a file without them is never parsed. `hashed`: the
    content hash is taken (for the cache; without one, ""). `defer`: a list that gets, unread
    by any rule and without a row, the files only AOTI201/202 look at that are not within
    reach (in_reach): they matter only if some file does (`_run` scans them then)."""
    clauses = gate(cfg) if clauses is None else clauses
    rules = None
    kept, rows = {}, []
    for path in paths:
        data, err, stamp = _read(path)
        if err:
            rows.append((path, err, None, False, None))
            continue
        digest = cachemod.content_hash(data) if hashed else ""
        old = (prior or {}).get(path)
        if old is not None and old.hash == digest and not (old.checks and (checked is None or path in checked)):
            rows.append((path, None, old.summary, False, (stamp, digest, old.checks, old.reach)))  # touched, not changed
            continue
        seen: dict[bytes, bool] = {}
        if (old is None or old.hash != digest) and not passes(clauses, data, seen):
            rows.append((path, None, {}, False, (stamp, digest, False, False)))
            continue
        reach = in_reach(data)
        if defer is not None and not reach and _jagged_only(data, cfg):
            defer.append(path)
            continue
        if rules is None:  # the first file that needs them
            from aoti_lsp.analysis.source import Source
            from aoti_lsp.project.project import SKIPPED, summarize, summarizers
            from aoti_lsp.rules import rules_for

            rules = True
        source = Source(data, path)
        source.knows(seen)
        if old is not None and old.hash == digest:
            checks, summary = old.checks, old.summary
        else:
            # only the rules this file's tokens could concern are imported (a rule's module costs ms)
            candidates = rules_for(source, cfg)
            enabled = [r for r in candidates if cfg.enabled(r.code)]
            checks = any(r.wants(source, cfg) for r in enabled)
            summary = summarize(source, cfg, candidates, lazy=True) if summarizers(cfg, enabled) and (
                checks or wanted(source, enabled, cfg)) else {}
            if SKIPPED in summary:  # what other files read of it is unknown: the run is no pass
                rows.append((path, f"{path}: {summary[SKIPPED]} (its summary for the other files)", None, False, None))
                continue
        if checks and (checked is None or path in checked):
            kept[path] = source
        # within reach only where a rule reads it: `torch.export` in a docstring puts nothing in scope
        reach = reach and (checks or bool(summary))
        rows.append((path, None, summary, source.parsed, (stamp, digest, checks, reach)))
    return kept, rows


def in_reach(data: bytes) -> bool:
    """Whether a file's text spells REACH or `export` (not as jit's, onnx's or export_chrome_trace)."""
    if any(t in data for t in REACH):
        return True
    return b"export" in data and _EXPORT.search(data) is not None


def _jagged_only(data: bytes, cfg) -> bool:
    """Whether only AOTI201/202 would check or summarise a file that passed the gate: no other
    rule's clause holds (triggers.py; not known under rule options)."""
    if cfg.options:
        return False
    return not any(any(t in data for t in a) and (not b or any(t in data for t in b)) for a, b in _others())


@lru_cache(maxsize=1)
def _others() -> tuple:
    """The clauses of every rule but AOTI201/202, as bytes (triggers.py)."""
    from aoti_lsp.project import triggers

    return tuple(dict.fromkeys((tuple(t.encode() for t in a), tuple(t.encode() for t in b))
                               for table in (triggers.CHECKS, triggers.SUMMARIES)
                               for code, (a, b) in table if code not in JAGGED))


def _check(sources, cfg, mode, project, edits=True):
    """Pass 2: (path, old bytes, new bytes or None, findings, errors) per source, and the
    `.pt2` packages each check read (a cached result depends on them). Findings are portable:
    lazy fixes built when `edits`, else stubs."""
    from aoti_lsp.analysis.engine import analyze
    from aoti_lsp.analysis.findings import portable
    from aoti_lsp.rules import rules_for

    out = []
    for source in sources:
        path, data = source.path, source.data
        candidates = rules_for(source, cfg)  # a rule whose tokens are absent would do nothing here
        with cachemod.recording() as deps:
            if not wanted(source, [r for r in candidates if cfg.enabled(r.code)], cfg, project):
                if deps:  # turned down after reading another file (jagged.lazy_may_export): valid while it is
                    out.append(((path, data, None, [], []), frozenset(deps)))
                continue
            result = analyze(source, cfg, candidates, project=project)
            broken = [f"{path}: has syntax errors: analysed as far as it parses"] if source.tree.root_node.has_error else []
        found = [portable(f, edits) for f in result.findings]
        out.append(((path, data, None, found, [*result.errors, *broken]), frozenset(deps)))
    return out


def _worker(index, cfg, mode, edits):
    """What each forked worker runs (forkpool.Pool): pass 1 over the chunks of index.misses it
    takes, then pass 2 over the paths the parent sends it, with the project of pass 1."""
    def work(wid, tasks, send, receive):
        kept = {}
        for i in tasks():  # pass 1: chunks taken as workers free up
            found, rows = _scan(index.misses[i * index.chunk:(i + 1) * index.chunk], cfg, index.checked, index.prior,
                                index.gate(), index.cache is not None)
            kept.update(found)
            send(("scan", wid, rows))
        send(("scanned", wid, None))
        paths, project = receive()
        from aoti_lsp.analysis.source import Source

        sources = [kept.get(p) or Source(read(p)[0], p) for p in paths]  # trees from pass 1 reused
        send(("results", wid, _check(sources, cfg, mode, project, edits)))
    return work


def run(paths: list[str], cfg, mode: tuple[str, bool], jobs: int | None, scan: list[str] | None = None,
        root: str | None = None, cache: "cachemod.Cache | None" = None, stats: dict | None = None,
        edits: bool = True):
    """Results per file to check (`paths`): (path, old bytes or None, new bytes or None, findings,
    messages). `scan`: every file of the project, summarised first (default: `paths`); `root`:
    the project root; `cache`: summaries (and, for a plain check, results) kept between runs.
    --fix / --diff: the files are checked as usual, then their fixes are applied for the whole
    project at once in this process (a migration edits every file that names its artifact).
    `jobs`: processes; None: one per core, when the files to read are worth it (PARALLEL_BYTES).
    `edits`: the caller reads the fixes' edits of the findings returned (JSON output); without
    it, findings checked in another process or served from the cache may carry fix stubs."""
    kind, unsafe = mode
    if kind == "check":
        return _run(paths, cfg, mode, jobs, scan, root, cache, edits)[0]
    results, index = _run(paths, cfg, ("check", unsafe), jobs, scan, root, cache, edits)
    return _fix(results, cfg, unsafe, index.project, {} if stats is None else stats)


def _fix(results, cfg, unsafe: bool, project, stats: dict):
    """`project()`: the project's summaries (built when first asked for)."""
    from aoti_lsp.analysis.source import Source
    from aoti_lsp.fixes.fixer import applicable
    from aoti_lsp.fixes.layout import compile_error, not_compiled
    from aoti_lsp.fixes.project_fix import fix_project

    out, sources = [], []
    for row in results:
        path, old, _, findings, errs = row
        if old is None or not any(applicable(f.fix, unsafe) for f in findings):
            out.append(row)
        elif (why := compile_error(old, path)) is not None:  # Python rejects it: never rewritten
            out.append((path, old, None, findings, [*errs, not_compiled(path, why)]))
        else:
            sources.append(Source(old, path))
    if sources:
        fixed = fix_project(sources, cfg, unsafe, project())
        out += [(f.path, f.old, f.new, f.remaining, f.errors) for f in fixed.values()]
        before = sum(len(r[3]) for r in results if r[0] in {s.path for s in sources})
        after = sum(len(f.remaining) for f in fixed.values())
        stats["fixed"] = stats.get("fixed", 0) + max(0, before - after)  # findings resolved, as ruff counts
        groups = {frozenset(f.together) for f in fixed.values() if len(f.together) > 1}
        stats.setdefault("together", []).extend(sorted(groups, key=sorted))
    return out


def _run(paths, cfg, mode, jobs, scan, root, cache, edits=True):
    """(results, the _Index: its project()) of a check."""
    index = _Index(paths, scan, cfg, mode, cache, edits, root)
    work = len(index.misses) + (len(index.to_check()) if not index.misses else len(paths))
    if not work:  # the cache answers for every file: no analysis imported, no project built
        return index.finish([], [], []), index
    auto, jobs = jobs is None, jobs or os.cpu_count() or 1
    if work < PARALLEL_MIN or jobs < 2 or (auto and not _at_least(index.misses or index.to_check(), PARALLEL_BYTES)):
        deferred: list[str] = []
        kept, rows = (_scan(index.misses, cfg, index.checked, index.prior, index.gate(), cache is not None, deferred)
                      if index.misses else ({}, []))
        if deferred and index.reached(rows):  # some file spells an export or a load: they matter after all
            more, rows2 = _scan(deferred, cfg, index.checked, index.prior, index.gate(), cache is not None)
            kept.update(more)
            rows += rows2
        index.scanned(rows)
        todo = index.to_check()
        if not todo:  # nothing to check (a changed file without AOTI code): no project built
            return index.finish(rows, [], todo), index
        project = index.project()
        from aoti_lsp.analysis.source import Source

        sources = [kept.get(p) or Source(read(p)[0], p) for p in todo]
        return index.finish(rows, _check(sources, cfg, mode, project, edits) if sources else [], todo), index

    if not hasattr(os, "fork"):  # no fork (Windows): one process
        return _run(paths, cfg, mode, 1, scan, root, cache, edits)
    project = index.project()
    from aoti_lsp.project import forkpool  # here: a warm run from the cache starts no process
    from aoti_lsp.rules import all_rules

    all_rules()  # imported once, before the fork: every worker has them
    index.chunk = max(CHUNK, -(-len(index.misses) // forkpool.MAX_TASKS))
    n = min(jobs, max(len(index.misses), work))
    restore = _exit_on_sigterm()
    pool = None
    try:
        pool = forkpool.Pool(n, -(-len(index.misses) // index.chunk), _worker(index, cfg, mode, edits))
        result = _run_pool(pool, index, project, n)
        pool.close()
        return result
    except BaseException:  # SIGTERM, Ctrl-C, a failed worker: the workers end with us
        if pool is not None:
            pool.close(kill=True)
        raise
    finally:
        restore()


def _exit_on_sigterm():
    """SIGTERM becomes SystemExit(143) in this process, so the pool's clean-up runs (by default
    the process dies on the spot and leaves its workers running). Returns the undo."""
    import signal  # here: a run on one process needs it not

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (an embedding program's): its handlers stay
        return lambda: None
    return lambda: signal.signal(signal.SIGTERM, previous)


def _run_pool(pool, index, project, n):
    rows, owner = [], {}
    for kind, wid, payload in pool.messages(until="scanned"):
        for row in payload or ():
            rows.append(row)
            owner[row[0]] = (wid, row[3])
    index.scanned(rows)
    # pass 2: a file parsed in pass 1 stays with its worker; the rest go where the load is least
    plan, load = [[] for _ in range(n)], [0.0] * n
    todo = index.to_check()
    for path in sorted(todo, key=lambda p: (not owner.get(p, (0, False))[1], -_size(p))):
        wid, parsed = owner.get(path, (0, False))
        if not parsed:
            wid = load.index(min(load))
        plan[wid].append(path)
        load[wid] += _size(path) * (0.3 if parsed else 1.0)
    for wid, part in enumerate(plan):
        pool.send(wid, (part, project))
    checked = []
    for _, _, payload in pool.messages(until="results"):
        checked.extend(payload)
    return index.finish(rows, checked, todo), index


class _Index:
    """What the cache already knows, what pass 1 must read, what pass 2 must check."""

    def __init__(self, paths, scan, cfg, mode, cache, edits=True, root=None):
        self.paths, self.cfg, self.cache, self.edits, self.root = paths, cfg, cache, edits, root
        self._project = None
        self.reuse = cache is not None and mode[0] == "check"  # --fix / --diff: never cached results
        self.checked = set(paths)
        self.chunk = CHUNK  # files per pass-1 task (more where the tasks would be too many)
        self.scan = list(paths) if scan is None else list(scan)
        listed = set(self.scan)
        self.scan += [p for p in paths if p not in listed]
        self.known: dict[str, dict] = {}  # path -> summary, from the cache
        self.reach = False  # a cached file within reach (REACH)
        self.checks: set[str] = set()  # files a rule would check (pre-project gate)
        self.misses: list[str] = []
        self.prior = {}  # path -> cache entry whose stamp no longer matches (its content may)
        for path in self.scan:
            entry = cache.lookup(path) if cache is not None else None
            if entry is None:
                self.misses.append(path)
                old = cache.entries.get(cache.rel(path)) if cache is not None else None
                if old is not None:
                    self.prior[path] = old
                continue
            self.known[path] = entry.summary
            self.reach = self.reach or entry.reach
            if entry.checks:
                self.checks.add(path)
        self.cached: dict[str, list] = {}  # path -> findings, from the cache
        self.digest: str | None = None
        self._todo: list[str] | None = None
        self._spelling: dict[str, str] | None = None

    def gate(self) -> tuple:
        return _cached_gate(self.cfg, self.cache)

    def reached(self, rows) -> bool:
        """Whether a file of the project is within an AOTI package's reach (REACH): a cached one,
        or one of `rows` (pass 1's)."""
        return self.reach or any(err is None and facts[3] for _, err, _, _, facts in rows)

    def project(self):
        """The project as the cache knows it (built on first use: a warm run needs none)."""
        if self._project is None:
            from aoti_lsp.project.project import Project

            self._project = Project(root=self.root)
            self._project.files = frozenset(map(os.path.abspath, self.scan))  # what a plan may edit
            for path, summary in self.known.items():
                self._project.update(path, summary)
        return self._project

    def scanned(self, rows) -> None:
        if rows:
            self._todo = None  # summaries changed: decide again
        for path, err, summary, _, facts in rows:
            if err is not None:
                continue
            self.known[path] = summary
            if self._project is not None:
                self._project.update(path, summary)
            if facts[2]:
                self.checks.add(path)
            if self.cache is not None:
                self.cache.store(path, facts[0], facts[1], facts[2], summary, facts[3])

    def to_check(self) -> list[str]:
        """Files to check in pass 2; those with a valid cached result are served from it."""
        if self._todo is not None:
            return self._todo
        if self.reuse:
            self.digest = self.cache.digest(self.scan)
        todo = []
        for path in self.paths:
            if path not in self.checks:
                continue
            found = self.cache.result(path, self.digest, self.spell, self.edits) if self.reuse else None
            if found is not None:
                self.cached[path] = found
            else:
                todo.append(path)
        self._todo = todo
        return todo

    def spell(self, path: str) -> str:
        """An absolute path as this run writes it (paths in cached findings)."""
        if self._spelling is None:
            self._spelling = {cachemod.fast_abspath(p): p for p in self.scan}
        return self._spelling.get(path, path)

    def finish(self, rows, checked, todo) -> list:
        """Rows for the caller: read errors, fresh results (stored in the cache), cached ones."""
        out = _errors(rows)
        fresh = {}
        for row, deps in checked:
            out.append(row)
            fresh[row[0]] = (row, deps)
        if self.cache is None:
            return out
        if self.reuse:
            for path in todo:  # a file a rule turned down after all (not relevant) has no row
                row, deps = fresh.get(path, ((path, None, None, [], []), frozenset()))
                if not row[4]:  # a rule that raised is reported again, never cached
                    self.cache.store_result(path, self.digest, row[3], deps, self.edits)
            for path, findings in self.cached.items():
                if not findings:
                    continue
                data, err = read(path)
                entry = self.cache.entries.get(self.cache.rel(path))
                if err is None and entry is not None and cachemod.content_hash(data) == entry.hash:
                    out.append((path, data, None, findings, []))
                else:  # changed since it was looked up: check what is there now
                    from aoti_lsp.analysis.source import Source

                    out.extend(row for row, _ in _check([Source(data, path)], self.cfg, ("check", False),
                                                        self.project(), self.edits))
        self.cache.save(self.digest)
        return out


def run_projects(paths: list[str], config_for, mode: tuple[str, bool], jobs: int | None, use_cache: bool = True,
                 stats: dict | None = None, edits: bool = True):
    """`run` for the named paths, one project at a time (grouped by root): each with its own
    configuration (`config_for(first path)`), every file of it summarised, its own cache.
    (results, errors for paths that do not exist); `stats` gets "files" (named files found)
    and "fixed" (fixes applied); `edits`: as for `run`."""
    results, errors = [], []
    stats = {} if stats is None else stats
    stats.setdefault("files", 0)
    for root, group in files.by_root(paths):
        cfg = files.rooted(config_for(group[0]), root)
        cache = cachemod.Cache(root, cfg) if use_cache else None
        # files named one by one (a commit's): those no rule checks are settled without the project
        parsed: list[str] = []  # named files _settled found to be parsed
        settle = None if any(os.path.isdir(p) for p in group) else (lambda named: not _settled(named, cfg, cache, parsed))
        check, scan, errs = files.project_files(group, cfg, root, settle, lambda: parsed and _import_analysis())
        errors += errs
        stats["files"] += len(check)
        if scan is None:  # no rule checks a named file: no finding, whatever the project holds
            continue
        results += run(check, cfg, mode, jobs, scan=scan, root=root, cache=cache, stats=stats, edits=edits)
    return results, errors


def _import_analysis() -> None:
    """What `_scan` imports to parse and summarise a file: imported while git lists the project."""
    from aoti_lsp.analysis import source  # noqa: F401
    from aoti_lsp.project import project  # noqa: F401
    from aoti_lsp import rules  # noqa: F401


def _settled(paths: list[str], cfg, cache, parsed: list[str] | None = None) -> bool:
    """Whether no rule could check any of `paths` (by its cached entry, else its bytes against
    the gate): then none can have a finding, whatever the other files say, and this is their
    whole check. A commit of files without AOTI code (most commits) then neither lists the
    project (~6 ms of `git ls-files`) nor builds it. Their cache entries are stored as pass 1
    stores them; the other files' entries and results are kept. `parsed` gets a file found to
    need parsing (pass 1 will read it)."""
    clauses, read_ = None, []
    for path in paths:
        entry = cache.lookup(path) if cache is not None else None
        if entry is not None:
            if entry.checks:
                return False
            continue
        data, err, stamp = _read(path)
        if err is not None:
            return False  # the run reports it as usual
        if clauses is None:
            clauses = _cached_gate(cfg, cache)
        if passes(clauses, data):
            if parsed is not None:
                parsed.append(path)
            return False
        read_.append((path, stamp, data))
    if cache is not None:
        for path, stamp, data in read_:
            cache.store(path, stamp, cachemod.content_hash(data), False, {}, False)
        cache.keep_unseen()
        cache.save()
    return True


def index(paths: list[str], cfg, cache: "cachemod.Cache | None" = None):
    """(path, summary) for each readable file, one at a time (the server yields between them):
    from the cache when the file is unchanged, else summarised and stored. Saves at the end."""
    clauses = None
    for path in paths:
        entry = cache.lookup(path) if cache is not None else None
        if entry is None:
            prior = cache.entries.get(cache.rel(path)) if cache is not None else None
            if clauses is None:
                clauses = _cached_gate(cfg, cache)
            _, rows = _scan([path], cfg, set(), {path: prior} if prior else None, clauses)
            _, err, summary, _, facts = rows[0]
            if err is not None:
                continue
            if cache is not None:
                cache.store(path, facts[0], facts[1], facts[2], summary, facts[3])
        else:
            summary = entry.summary
        yield path, summary
    if cache is not None:
        cache.save()


def _errors(rows):
    return [(path, None, None, [], [err]) for path, err, *_ in rows if err]


def _at_least(paths, size: int) -> bool:
    """Whether the files hold `size` bytes or more (stats until they do)."""
    total = 0
    for path in paths:
        total += _size(path)
        if total >= size:
            return True
    return False


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


