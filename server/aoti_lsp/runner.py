"""Checking many files: two passes, spread over worker processes (tree-sitter holds the GIL).

Pass 1 hands out chunks of files as workers free up: each is read, dropped when it holds no
trigger token (most files: never parsed), and summarised for the cross-file rules. The parent
merges the summaries into one Project. Pass 2 checks the kept files; a file parsed in pass 1
goes back to the worker that holds its tree, so no file is parsed twice.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import threading

from aoti_lsp import budget
from aoti_lsp.engine import analyze
from aoti_lsp.fixer import fix_source
from aoti_lsp.project import Project, summarize, summarizers
from aoti_lsp.rules import all_rules
from aoti_lsp.source import Source, SourceError, decode_check

MAX_BYTES = budget.MAX_BYTES  # the server's cap too
PARALLEL_MIN = 64  # below this many files, starting processes costs more than it saves
CHUNK = 48  # files per pass-1 task: small enough to balance, large enough to be cheap to send


def read(path: str) -> tuple[bytes, str | None]:
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            return b"", f"{path}: skipped: {size // 1024 // 1024} MB is over the {MAX_BYTES // 1024 // 1024} MB limit"
        with open(path, "rb") as fh:
            data = fh.read()
        decode_check(data)
        return data, None
    except SourceError as exc:
        return b"", f"{path}: {exc}"
    except OSError as exc:
        return b"", f"{path}: cannot read: {exc.strerror}"


def wanted(source: Source, rules, cfg, project=None) -> bool:
    """Before the summaries (project None): would any rule check or summarise this file?
    After: would any rule check it? Token look-ups only, no parse."""
    if project is None:
        return any(r.wants(source, cfg) or (hasattr(r, "summarize") and r.wants_summary(source, cfg)) for r in rules)
    return any(r.wants(source, cfg) and r.relevant(source, project) for r in rules)


def _scan(paths, cfg):
    """Pass 1 over some files: (kept sources by path, rows (path, error, summary, parsed))."""
    rules = [r for r in all_rules() if cfg.enabled(r.code)]
    summarise = bool(summarizers(cfg))
    kept, rows = {}, []
    for path in paths:
        data, err = read(path)
        if err:
            rows.append((path, err, None, False))
            continue
        source = Source(data, path)
        if wanted(source, rules, cfg):
            kept[path] = source
            rows.append((path, None, summarize(source, cfg) if summarise else {}, source.parsed))
    return kept, rows


def _check(sources, cfg, mode, project):
    """Pass 2: (path, old bytes, new bytes or None, findings, errors) per source."""
    rules = [r for r in all_rules() if cfg.enabled(r.code)]
    kind, unsafe = mode
    out = []
    for source in sources:
        path, data = source.path, source.data
        if not wanted(source, rules, cfg, project):
            continue
        if kind == "check":
            result = analyze(source, cfg, project=project)
            out.append((path, data, None, result.findings, result.errors))
        elif source.tree.root_node.has_error:
            result = analyze(source, cfg, project=project)
            out.append((path, data, None, result.findings, [*result.errors, f"{path}: has syntax errors: fixes not applied"]))
        else:
            fixed = fix_source(source, cfg, unsafe=unsafe, project=project)
            out.append((path, data, fixed.data, fixed.remaining, fixed.errors))
    return out


def _worker(wid, cfg, mode, tasks, inbox, outbox):
    try:
        kept = {}
        while (chunk := tasks.get()) is not None:  # pass 1: chunks handed out as workers free up
            found, rows = _scan(chunk, cfg)
            kept.update(found)
            outbox.put(("scan", wid, rows))
        outbox.put(("scanned", wid, None))
        paths, project = inbox.get()
        sources = [kept.get(p) or Source(read(p)[0], p) for p in paths]  # trees from pass 1 reused
        outbox.put(("results", wid, _check(sources, cfg, mode, project)))
    except BaseException as exc:  # reported by the parent as an internal error
        outbox.put(("failed", wid, repr(exc)))


def run(paths: list[str], cfg, mode: tuple[str, bool], jobs: int):
    """Results per file: (path, old bytes or None, new bytes or None, findings, messages)."""
    if len(paths) < PARALLEL_MIN or jobs < 2:
        kept, rows = _scan(paths, cfg)
        project = Project()
        for path, _, summary, _ in rows:
            if summary is not None:
                project.update(path, summary)
        return _errors(rows) + _check(list(kept.values()), cfg, mode, project)

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    tasks, outbox = ctx.Queue(), ctx.Queue()
    n = min(jobs, len(paths))
    workers = []
    restore = _exit_on_sigterm()
    try:
        return _run_pool(ctx, paths, cfg, mode, tasks, outbox, n, workers)
    except BaseException:  # SIGTERM, Ctrl-C, a failed worker: the workers end with us
        for proc, _ in workers:
            proc.kill()
        raise
    finally:
        restore()


def _exit_on_sigterm():
    """SIGTERM becomes SystemExit(143) in this process, so the pool's clean-up runs (by default
    the process dies on the spot and leaves its workers running). Returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    return lambda: signal.signal(signal.SIGTERM, previous)


def _run_pool(ctx, paths, cfg, mode, tasks, outbox, n, workers):
    for wid in range(n):
        inbox = ctx.Queue()
        proc = ctx.Process(target=_worker, args=(wid, cfg, mode, tasks, inbox, outbox), daemon=True)
        proc.start()
        workers.append((proc, inbox))
    try:
        for i in range(0, len(paths), CHUNK):
            tasks.put(paths[i : i + CHUNK])
        for _ in workers:
            tasks.put(None)
        project, rows, owner = Project(), [], {}
        for kind, wid, payload in _collect(outbox, workers, until="scanned"):
            for row in payload:
                rows.append(row)
                owner[row[0]] = (wid, row[3])
                if row[2] is not None:
                    project.update(row[0], row[2])
        # pass 2: a file parsed in pass 1 stays with its worker; the rest go where the load is least
        plan, load = [[] for _ in workers], [0.0] * n
        wanted_paths = [r[0] for r in rows if r[1] is None]
        for path in sorted(wanted_paths, key=lambda p: (not owner[p][1], -_size(p))):
            wid, parsed = owner[path]
            if not parsed:
                wid = load.index(min(load))
            plan[wid].append(path)
            load[wid] += _size(path) * (0.3 if parsed else 1.0)
        for (_, inbox), part in zip(workers, plan):
            inbox.put((part, project))
        results = _errors(rows)
        for _, _, payload in _collect(outbox, workers, until="results"):
            results.extend(payload)
        return results
    finally:
        for proc, _ in workers:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()


def _errors(rows):
    return [(path, None, None, [], [err]) for path, err, _, _ in rows if err]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _collect(outbox, workers, until: str):
    """Messages until every worker has sent `until`; a worker that dies or fails is an internal error."""
    done = 0
    while done < len(workers):
        try:
            msg = outbox.get(timeout=1)
        except queue.Empty:
            dead = [p for p, _ in workers if not p.is_alive() and p.exitcode not in (0, None)]
            if dead:
                raise RuntimeError(f"a worker process died (exit code {dead[0].exitcode})")
            continue
        if msg[0] == "failed":
            raise RuntimeError(f"a worker failed: {msg[2]}")
        if msg[0] == until:
            done += 1
            if until == "scanned":
                continue
        yield msg
