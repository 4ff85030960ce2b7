"""`aoti-lsp`: check / fix from the command line, print rule docs, or serve the LSP.

Exit codes: 0 clean, 1 findings (with --diff: changes, or findings it does not fix), 2 usage or internal error.
Imports neither pygls nor torch unless `serve` is asked for.
"""

from __future__ import annotations

import os
import sys

from aoti_lsp import tune_gc
from aoti_lsp.cli import args as argsmod
from aoti_lsp.project import config as configmod
from aoti_lsp.project import files, runner

# Imported where first needed (a run pays for what it does: a warm, clean run prints one line):
# reporters, the fixer and writes, notebooks, the analysis (Source, noqa), the rules.



def run() -> None:
    """The `aoti-lsp` command (and `python -m aoti_lsp`): `main`, then the process ends."""
    code = main()
    if sys.argv[1:2] != ["serve"]:  # the server's end is pygls' (its threads, the code cache)
        _exit_now(code)
    sys.exit(code)


def _exit_now(code) -> None:
    """Exit without freeing what the run made one object at a time: a dense file's trees and
    facts (~130 MB) take 70-100 ms of a 1 s `--check` to tear down, and nothing needs it. What
    exit would still do is done first: the atexit handlers (logging's flush), then the streams
    (a reader that left, as in `| head`, is not an error)."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # ValueError: a stream the run closed
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # any text a file holds (a lone surrogate) is printable
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        return _main(argv)
    except BrokenPipeError:  # `aoti-lsp rule X | head`: the reader left, that is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:  # Ctrl-C: the workers are already gone (runner.run)
        print("aoti-lsp: interrupted", file=sys.stderr)
        return 130


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "serve":
        from aoti_lsp.lsp.server import serve  # pygls only here

        rest = [a for a in argv[1:] if a != "--stdio"]
        if rest:
            print(f"aoti-lsp serve: unknown arguments {rest} (only --stdio is accepted)", file=sys.stderr)
            return 2
        return serve()
    if argv and argv[0] == "rule":
        return _rule(argv[1:])
    if argv and argv[0] in ("explain", "inspect"):
        from aoti_lsp.cli.triage import main as triage  # explain / inspect: their own arguments

        return triage(argv)
    if argv and argv[0] == "check":
        argv = ["--check", *argv[1:]]
    args = argsmod.parse(argv) or argsmod.build_parser().parse_args(argv)
    if not args.check and not args.paths:
        argsmod.build_parser().print_help(sys.stderr)
        return 2
    try:
        return check(args)
    except configmod.ConfigError as exc:
        print(f"aoti-lsp: error: {exc}", file=sys.stderr)
        return 2


def _rule(argv: list[str]) -> int:
    from aoti_lsp.cli.docs import render
    from aoti_lsp.rules import all_rules, rule_by_code

    if not argv:
        for r in all_rules():
            print(f"{r.code}  {r.name:28}  {r.summary}")
        return 0
    rule = rule_by_code(argv[0])
    if rule is None:
        print(f"aoti-lsp: unknown rule {argv[0]!r}; known: {', '.join(r.code for r in all_rules())}", file=sys.stderr)
        return 2
    print(render(rule))
    return 0


def _batch_gc() -> None:
    """A check is a batch: what its analyses make (trees' wrappers, facts, findings) lives until
    the report, and almost none of it is cyclic garbage (~100 objects of a dense 20k-line
    file's ~700k), so each young collection only traverses survivors: ~45 ms of that file's
    check at the server's threshold (tune_gc). Here one comes every 1,000,000 net allocations
    (memory stays bounded over a project of any size); what the imports made is frozen (it
    never becomes garbage: no older collection traverses it again)."""
    import gc

    tune_gc()
    gc.freeze()
    gc.set_threshold(1_000_000, *gc.get_threshold()[1:])


def check(args) -> int:
    _batch_gc()
    paths = args.paths or ["."]
    for flag in ("select", "extend_select", "ignore"):
        configmod.check_codes(getattr(args, flag), f"'--{flag.replace('_', '-')}'")

    def config_for(start: str):
        cfg = configmod.parse(args.config) if args.config else configmod.load(start)
        return cfg.with_overrides(select=args.select, ignore=args.ignore, extend_select=args.extend_select, exclude=args.exclude)

    mode = ("diff" if args.diff else "fix" if args.fix else "check", args.unsafe_fixes)
    try:  # per project (root found as ruff does): all its files summarised, only `paths` reported
        stats: dict = {}
        results, errors = runner.run_projects(paths, config_for, mode, args.jobs, use_cache=not args.no_cache,
                                              stats=stats, edits=_prints_edits(args))
    except RuntimeError as exc:
        print(f"aoti-lsp: error: internal error: {exc}", file=sys.stderr)
        return 2
    for e in errors:
        print(f"aoti-lsp: error: {e}", file=sys.stderr)
    unchecked = files.not_checked(paths)
    for path in unchecked:  # asked for by name, so never a silent pass
        print(f"aoti-lsp: warning: {path}: not checked: not a Python file (.py, .pyi)", file=sys.stderr)
    if not stats["files"] and not errors:  # nothing checked: no success line
        if not unchecked:
            print("aoti-lsp: warning: No Python files found under the given path(s)", file=sys.stderr)
        if args.output_format != "text" and not args.diff:  # still a document its reader can parse (`[]`)
            from aoti_lsp.cli import reporters

            out = reporters.render(args.output_format, [], notes=[], unsafe=args.unsafe_fixes, color=False)
            if out:
                print(out)
        return 2 if unchecked else 0

    items, notes, changed = [], [], 0
    counts = {"none": 0, "fixable": 0, "hidden": 0, "display": 0}
    internal = bool(errors)
    results, failed = _write_all(results, config_for, args, stats.get("together", []))
    internal |= failed
    if results:
        from aoti_lsp.analysis.noqa import unknown_noqa
        from aoti_lsp.analysis.source import Source
        from aoti_lsp.cli import reporters
    for path, old, new, findings, errs in sorted(results, key=lambda r: r[0]):
        for e in errs:
            # a file not analysed (time budget, size) may hide findings: never a pass (exit 2)
            cut = "analysis skipped" in e
            print(f"aoti-lsp: {'error' if 'internal error' in e or cut else 'warning'}: {e}", file=sys.stderr)
            internal |= "internal error" in e or cut
            if "has syntax errors" in e and old is not None:
                notes.append(_syntax_note(path, old, e))
            elif cut:
                notes.append(reporters.Note(path, None, None, e.split(f"{path}: ", 1)[-1]))
        if old is None:
            continue
        if new is not None and new != old:
            changed += 1
            if args.diff:
                sys.stdout.write(_diff(_diff_name(path), old, new))
        source = Source(new if new is not None and not args.diff else old, path)
        if args.diff and new is not None and new != old:
            source.fixed = new  # the findings left are the fixed text's: _unfixed places them in this one (_before_fix)
        for f in findings:
            items.append((f, source))
            counts[_fix_kind(f.fix, args.unsafe_fixes)] += 1
        for code, row in unknown_noqa(source):
            from aoti_lsp.project import notebook  # here: only a warning names a notebook's cell

            print(f"aoti-lsp: warning: {_rel(path)}:{notebook.where(path, source.data, row)}: unknown code {code!r} in a noqa comment (known: "
                  f"{', '.join(configmod.known_codes())})", file=sys.stderr)
    if not args.diff and (items or notes or args.output_format != "text"):
        from aoti_lsp.cli import reporters

        out = reporters.render(args.output_format, items, notes=notes, unsafe=args.unsafe_fixes,
                               color=sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
        if out:
            print(out)
    if args.diff:
        _unfixed(items, args.unsafe_fixes)
    if args.diff and not changed and counts["hidden"]:
        print(f"No fixes available ({counts['hidden']} hidden fix{'es' if counts['hidden'] != 1 else ''} "
              "can be enabled with --unsafe-fixes)", file=sys.stderr)
    if args.output_format == "text" and not args.quiet and not args.diff:
        _summary(len(items), counts, changed, args, failed=internal or bool(unchecked), fixed=stats.get("fixed", 0))
    if internal or unchecked:
        return 2
    if args.exit_zero:
        return 0
    if args.diff:  # 0 only when there is nothing to change and nothing left unfixed
        from aoti_lsp.analysis.findings import applicable

        return 1 if changed or any(not applicable(f.fix, args.unsafe_fixes) for f, _ in items) else 0
    return 1 if items else 0


def _unfixed(items, unsafe: bool) -> None:
    """--diff: each finding the diff does not fix, on stderr with why (the diff keeps stdout)."""
    from aoti_lsp.cli import reporters
    from aoti_lsp.analysis.findings import applicable

    for f, source in items:
        if applicable(f.fix, unsafe):
            continue
        fixed = getattr(source, "fixed", None)
        if fixed is not None and getattr(source, "before_fix", None) is None:
            source.before_fix = _before_fix(source.data, fixed)  # one diff of the file, for all its findings
        where = reporters.where(source, f.start if fixed is None else source.before_fix(f.start))
        if f.fix is None:
            why = next((r.message for r in f.related if r.message.startswith("no automatic fix")), "no automatic fix")
        elif applicable(f.fix, True):
            why = f"unsafe fix, not applied without --unsafe-fixes: {f.fix.title}"
        else:
            why = f"display-only fix, for the editor: {f.fix.title}"
        print(f"{_rel(source.path)}:{where}: {f.code} not fixed: {why}", file=sys.stderr)


def _before_fix(old: bytes, new: bytes):
    """offset -> where an offset of the fixed text lies in the file as it is (--diff shows the
    fix, it does not write it): the same column of the line it came from, for a line the fix left
    as it was; the start of the lines the fix rewrote, for one of those."""
    import difflib
    from bisect import bisect_left, bisect_right

    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    starts, fixed_starts = [0], [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    for line in b:
        fixed_starts.append(fixed_starts[-1] + len(line))
    blocks = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    firsts = [j1 for _, _, _, j1, _ in blocks]  # in order: the fixed text's lines, block by block

    def back(offset: int) -> int:
        row = bisect_right(fixed_starts, offset) - 1
        column = offset - fixed_starts[row]
        k = bisect_left(firsts, row)  # the first block holding the row: one starting there, else the one before
        if k < len(blocks) and firsts[k] == row:
            tag, i1, _, j1, _ = blocks[k]
        elif k > 0 and blocks[k - 1][4] > row:
            tag, i1, _, j1, _ = blocks[k - 1]
        else:
            return min(offset, len(old))
        if tag == "equal":
            return starts[i1 + row - j1] + column
        return starts[min(i1, len(a))]
    return back


def _prints_edits(args) -> bool:
    """Whether the output shows fix edits (JSON; --diff prints the fixed files, made here): else
    the migration's edits are never built, nor libcst imported (findings.LazyFix)."""
    return args.output_format == "json" and not args.diff


def _fix_kind(fix, unsafe: bool) -> str:
    """How a finding's fix is counted in the summary: exactly as the reporters label it."""
    from aoti_lsp.analysis.findings import applicable

    if fix is None:
        return "none"
    if applicable(fix, unsafe):
        return "fixable"
    if applicable(fix, True):
        return "hidden"  # unsafe, and --unsafe-fixes not given
    return "display"


def _syntax_note(path: str, data: bytes, message: str):
    from aoti_lsp.analysis.positions import UTF32
    from aoti_lsp.analysis.source import Source, descendants
    from aoti_lsp.cli import reporters
    from aoti_lsp.project import notebook

    source = Source(data, path)
    bad = min((n for n in descendants(source.tree.root_node) if n.is_error or n.is_missing),
              key=lambda n: n.start_byte, default=None)  # the first in the file
    row = col = None
    if bad is not None:
        line, c = source.lines.position(bad.start_byte, UTF32)
        row, col = line + 1, c + 1
        where = notebook.where(path, data, row)
        row = int(where.rsplit(":", 1)[-1])  # a notebook's: the row in its cell, named in the message
    return reporters.Note(path, row, col, f"syntax error{f' at {where}:{col}' if row else ''}: "
                          + message.split("has syntax errors: ", 1)[-1])


def _rel(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _summary(count, counts, changed, args, failed=False, fixed=0):
    if args.fix and changed:
        print(f"Fixed {changed} file{'s' if changed != 1 else ''}.", file=sys.stderr)
    if count == 0 and not fixed:
        if not failed:  # never a success line after an error
            print("All checks passed!", file=sys.stderr)
        return
    total = count + fixed
    msg = f"Found {total} finding{'s' if total != 1 else ''}"
    msg += f" ({fixed} fixed, {count} remaining)." if args.fix else "."
    if args.fix and counts["none"]:
        msg += f"\n{counts['none']} with no automatic fix (the message says why)."
    if counts["fixable"] and not args.fix:
        msg += f"\n[*] {counts['fixable']} fixable with --fix{' --unsafe-fixes' if args.unsafe_fixes else ''}."
    if counts["hidden"]:
        msg += (f"\n{counts['hidden']} more fixable with --fix --unsafe-fixes (unsafe: they change behaviour or "
                "the artifact; read the diff with --diff first).")
    if counts["display"]:
        msg += (f"\n{counts['display']} editor-only fix{'es' if counts['display'] != 1 else ''} shown: --fix never "
                "applies them; the editor does, as a quick fix (it fills in placeholders or makes a decision its "
                "title names).")
    print(msg, file=sys.stderr)


def _write_all(results, config_for, args, together):
    """With --fix, writes each changed file (writes.py); files that one fix edited together (a
    migration) are written all or none. A file left unwritten is checked again as it is on disk,
    so that its findings are reported where they are. (results, any failure)"""
    if not args.fix or args.diff:
        return results, False
    rows = {r[0]: r for r in results}
    changed = {p for p, r in rows.items() if r[1] is not None and r[2] is not None and r[1] != r[2]}
    groups = [sorted(g & changed) for g in together if g & changed]
    grouped = set().union(*groups) if groups else set()
    groups += [[p] for p in sorted(changed - grouped)]
    from aoti_lsp.fixes import writes

    writer, unwritten, failed = writes.Writer(), [], False
    for group in groups:
        try:
            writer.write_together([(p, *_on_disk(p, rows[p][1], rows[p][2])) for p in group])
            if len(group) > 1:  # more than the named files may change: say which, and why
                print(f"aoti-lsp: note: one migration wrote {', '.join(_rel(p) for p in group)}: every file of "
                      "its artifact changes together (all or none)", file=sys.stderr)
        except (writes.Skipped, writes.Failed) as exc:
            bad = isinstance(exc, writes.Failed)
            print(f"aoti-lsp: {'error' if bad else 'warning'}: {exc}{_nor(group, str(exc))}", file=sys.stderr)
            unwritten += group
            failed |= bad
    out = [r for p, r in rows.items() if p not in unwritten]
    if unwritten:
        again, _ = runner.run_projects(unwritten, config_for, ("check", False), 1, use_cache=False,
                                       edits=_prints_edits(args))
        out += [(p, old, None, found, errs) for p, old, _, found, errs in again]
    return out, failed


def _on_disk(path: str, old: bytes, new: bytes) -> tuple[bytes, bytes]:
    """What is read and written: a notebook's JSON, for its program's fix (notebook.py)."""
    from aoti_lsp.project import notebook

    return notebook.on_disk(path, old, new) if notebook.is_notebook(path) else (old, new)


def _diff_name(path: str) -> str:
    """A diff header's path: relative to the working folder, however the file was named (a
    migration pulls in files the user did not name), so that `git apply` / `patch -p1` run
    there take every file; a file outside it: relative to its project's root, said once."""
    rel = os.path.relpath(os.path.abspath(path))
    if not rel.startswith(".."):
        return rel.replace(os.sep, "/")
    from aoti_lsp.project.files import find_root

    root = find_root([path])
    if root not in _DIFF_ROOTS:
        _DIFF_ROOTS.add(root)
        print(f"aoti-lsp: note: the diff's paths for files outside {os.getcwd()} are relative to {root}: "
              "apply it there", file=sys.stderr)
    return os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")


_DIFF_ROOTS: set[str] = set()


def _nor(group: list[str], message: str) -> str:
    """The other files of a group left unwritten with the one the message names (it starts with its path)."""
    others = [p for p in group if not message.startswith(f"{p}: ")]
    return f" (nor {', '.join(others)}: they change together)" if len(others) < len(group) and others else ""


def _diff(path: str, old: bytes, new: bytes) -> str:
    import difflib

    from aoti_lsp.project import notebook

    if notebook.is_notebook(path):
        return notebook.diff(path, old, new)
    out = []
    for line in difflib.unified_diff(old.decode().splitlines(keepends=True), new.decode().splitlines(keepends=True),
                                     fromfile=f"a/{path}", tofile=f"b/{path}"):
        out.append(line)
        if not line.endswith("\n"):  # a file's last line without one: as diff and git write it, or
            out.append("\n\\ No newline at end of file\n")  # the next header joins it and no patch applies
    return "".join(out)
