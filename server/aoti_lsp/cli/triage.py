"""`aoti-lsp explain` and `aoti-lsp inspect`: argument parsing and output (no torch, no pygls)."""

from __future__ import annotations

import argparse
import sys

from aoti_lsp.analysis import budget


def main(argv: list[str]) -> int:
    if argv[0] == "inspect":
        p = argparse.ArgumentParser(prog="aoti-lsp inspect", description="Show what a .pt2 package was compiled for (no torch).")
        p.add_argument("package")
        p.add_argument("--output-format", choices=["text", "json"], default="text")
        args = p.parse_args(argv[1:])
        from aoti_lsp.triage import inspect_pkg

        try:
            with budget.deadline():  # a package crafted to be slow to read must not hang the run
                info = inspect_pkg.inspect(args.package)
        except budget.OverBudget as exc:
            print(f"aoti-lsp inspect: error: {args.package}: {exc}", file=sys.stderr)
            return 2
        print(inspect_pkg.render_json(info) if args.output_format == "json" else inspect_pkg.render_text(info))
        return 2 if info["error"] else 0
    p = argparse.ArgumentParser(prog="aoti-lsp explain",
                                description="Trace an AOTInductor crash log to its cause (and the Python line).")
    p.add_argument("log", help="the log file, or - for stdin")
    p.add_argument("--package", help="the .pt2 package that crashed")
    p.add_argument("--source", action="append", default=[],
                   help="a Python file of yours: the model (its forward) or the code that compiles, loads and calls it (repeatable)")
    p.add_argument("--output-format", choices=["text", "json"], default="text")
    args = p.parse_args(argv[1:])
    from aoti_lsp.triage import explain

    try:
        if args.log == "-":
            text = sys.stdin.read(16 * 1024 * 1024)
        else:
            with open(args.log, encoding="utf-8", errors="replace") as fh:
                text = fh.read(16 * 1024 * 1024)
    except OSError as exc:
        print(f"aoti-lsp explain: error: cannot read {args.log}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        with budget.deadline():
            items = explain.explain(text, args.package, args.source)
    except budget.OverBudget as exc:
        print(f"aoti-lsp explain: error: {exc}", file=sys.stderr)
        return 2
    print(explain.render_json(items) if args.output_format == "json" else explain.render_text(items))
    return 1 if items else 0
