"""`aoti-lsp`: check / fix from the command line, print rule docs, or serve the LSP.

Exit codes: 0 clean, 1 findings (or, with --diff, changes), 2 usage or internal error.
Imports neither pygls nor torch unless `serve` is asked for.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from aoti_lsp import __version__
from aoti_lsp import config as configmod
from aoti_lsp import reporters, runner, writes
from aoti_lsp.files import discover
from aoti_lsp.fixer import applicable
from aoti_lsp.rules import all_rules, rule_by_code
from aoti_lsp.source import Source



def _codes(value: str) -> list[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="aoti-lsp",
        description="Catch PyTorch AOTInductor misuse (deprecated API, device mismatches, empty jagged inputs).",
        epilog="Subcommands: `aoti-lsp serve` (language server on stdio), `aoti-lsp rule [CODE]` (rule docs).",
    )
    p.add_argument("--version", action="version", version=f"aoti-lsp {__version__}")
    p.add_argument("--check", action="store_true", help="check files (the default when paths are given)")
    p.add_argument("paths", nargs="*", help="files or folders (default: .)")
    p.add_argument("--output-format", choices=["text", "json", "sarif", "github"], default="text")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes (with --fix / --diff)")
    p.add_argument("--diff", action="store_true", help="print the fixes as a diff, change nothing")
    p.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to enable (e.g. AOTI0)")
    p.add_argument("--extend-select", type=_codes)
    p.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes to disable")
    p.add_argument("--exclude", action="append", help="glob of paths to skip (repeatable)")
    p.add_argument("--config", help="pyproject.toml to read instead of the nearest one")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    p.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    return p


def main(argv: list[str] | None = None) -> int:
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
    if argv and argv[0] == "check":
        argv = ["--check", *argv[1:]]
    args = build_parser().parse_args(argv)
    if not args.check and not args.paths:
        build_parser().print_help(sys.stderr)
        return 2
    try:
        return check(args)
    except configmod.ConfigError as exc:
        print(f"aoti-lsp: error: {exc}", file=sys.stderr)
        return 2


def _rule(argv: list[str]) -> int:
    from aoti_lsp.docs import render

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


def check(args) -> int:
    paths = args.paths or ["."]
    cfg = configmod.parse(Path(args.config)) if args.config else configmod.load(paths[0])
    cfg = cfg.with_overrides(select=args.select, ignore=args.ignore, extend_select=args.extend_select, exclude=args.exclude)
    files, errors = discover(paths, cfg)
    for e in errors:
        print(f"aoti-lsp: error: {e}", file=sys.stderr)
    mode = ("diff" if args.diff else "fix" if args.fix else "check", args.unsafe_fixes)
    try:
        results = runner.run(files, cfg, mode, args.jobs)
    except RuntimeError as exc:
        print(f"aoti-lsp: error: internal error: {exc}", file=sys.stderr)
        return 2

    items, hidden_unsafe, fixable, changed = [], 0, 0, 0
    internal = bool(errors)
    results, failed = _write_all(results, cfg, args)
    internal |= failed
    for path, old, new, findings, errs in sorted(results, key=lambda r: r[0]):
        for e in errs:
            print(f"aoti-lsp: {'error' if 'internal error' in e else 'warning'}: {e}", file=sys.stderr)
            internal |= "internal error" in e
        if old is None:
            continue
        if new is not None and new != old:
            changed += 1
            if args.diff:
                sys.stdout.write(_diff(path, old, new))
        source = Source(new if new is not None and not args.diff else old, path)
        for f in findings:
            items.append((f, source))
            if applicable(f.fix, args.unsafe_fixes):
                fixable += 1
            elif applicable(f.fix, True):
                hidden_unsafe += 1
    if not args.diff:
        out = reporters.render(args.output_format, items, color=sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
        if out:
            print(out)
    if args.output_format == "text" and not args.quiet and not args.diff:
        _summary(len(items), fixable, hidden_unsafe, changed, args)
    if internal:
        return 2
    if args.exit_zero:
        return 0
    if args.diff:
        return 1 if changed else 0
    return 1 if items else 0


def _summary(count, fixable, hidden_unsafe, changed, args):
    if args.fix and changed:
        print(f"Fixed {changed} file{'s' if changed != 1 else ''}.", file=sys.stderr)
    if count == 0:
        print("All checks passed!", file=sys.stderr)
        return
    msg = f"Found {count} finding{'s' if count != 1 else ''}."
    if fixable and not args.fix:
        msg += f"\n[*] {fixable} fixable with --fix{' --unsafe-fixes' if args.unsafe_fixes else ''}."
    if hidden_unsafe:
        msg += f"\n{hidden_unsafe} more fixable with --fix --unsafe-fixes (unsafe: they change behaviour or the artifact; read the diff with --diff first)."
    print(msg, file=sys.stderr)


def _write_all(results, cfg, args):
    """With --fix, writes each changed file (writes.py). A file left unwritten is checked again
    as it is on disk, so that its findings are reported where they are. (results, any failure)"""
    if not args.fix or args.diff:
        return results, False
    writer, out, unwritten, failed = writes.Writer(), [], [], False
    for row in sorted(results, key=lambda r: r[0]):
        path, old, new = row[:3]
        if new is None or old is None or new == old:
            out.append(row)
            continue
        try:
            writer.write(path, old, new)
            out.append(row)
        except writes.Skipped as exc:
            print(f"aoti-lsp: warning: {exc}", file=sys.stderr)
            unwritten.append(path)
        except writes.Failed as exc:
            print(f"aoti-lsp: error: {exc}", file=sys.stderr)
            unwritten.append(path)
            failed = True
    if unwritten:
        out += [(p, old, None, found, errs) for p, old, _, found, errs in runner.run(unwritten, cfg, ("check", False), 1)]
    return out, failed


def _diff(path: str, old: bytes, new: bytes) -> str:
    return "".join(difflib.unified_diff(
        old.decode().splitlines(keepends=True), new.decode().splitlines(keepends=True),
        fromfile=f"a/{path}", tofile=f"b/{path}"))
