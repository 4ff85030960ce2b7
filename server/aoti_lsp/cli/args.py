"""The check's command line: argparse's parser, and `parse` for the frequent shapes (`--check
[options] PATH...`, as the pre-commit hook and CI run it) without argparse (it imports gettext,
and parsing imports locale: ~2 ms of a ~30 ms hook run). Anything else (help, --version, an
error, an abbreviation, `--`, `-j2`, a value that starts with `-`) is left to argparse, so the
result is argparse's own (tests/test_args.py compares the two)."""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

OUTPUT_FORMATS = ("text", "json", "sarif", "github")
# dest: default, in the parser's order (a Namespace's attributes are set in that order)
DEFAULTS = {"check": False, "paths": [], "output_format": "text", "fix": False, "unsafe_fixes": False, "diff": False,
            "select": None, "extend_select": None, "ignore": None, "exclude": None, "config": None,
            "exit_zero": False, "quiet": False, "jobs": None, "no_cache": False}
FLAGS = {"--check": "check", "--fix": "fix", "--unsafe-fixes": "unsafe_fixes", "--diff": "diff",
         "--exit-zero": "exit_zero", "--quiet": "quiet", "-q": "quiet", "--no-cache": "no_cache"}
VALUES = {"--output-format": "output_format", "--select": "select", "--extend-select": "extend_select",
          "--ignore": "ignore", "--exclude": "exclude", "--config": "config", "--jobs": "jobs", "-j": "jobs"}


def codes(value: str) -> list[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def job_count(value: str) -> int | None:
    try:
        n = int(value)
    except ValueError:
        return None
    return n if n >= 1 else None


def _jobs(value: str) -> int:
    n = job_count(value)
    if n is None:
        import argparse

        raise argparse.ArgumentTypeError(f"invalid value {value!r}: a number of processes, 1 or more")
    return n


def _value(dest: str, value: str):
    """An option's value as argparse's type and choices make it; None: argparse's error."""
    if dest in ("select", "extend_select", "ignore"):
        return codes(value)
    if dest == "jobs":
        return job_count(value)
    if dest == "output_format":
        return value if value in OUTPUT_FORMATS else None
    return value


def parse(argv: list[str]) -> SimpleNamespace | None:
    """argparse's namespace for `argv` when its shape is a frequent one, else None."""
    out = dict(DEFAULTS, paths=None)
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg and not arg.startswith("-"):
            if out["paths"] is not None:  # paths, an option, paths: argparse takes the first stretch only
                return None
            start = i
            while i < len(argv) and argv[i] and not argv[i].startswith("-"):
                i += 1
            out["paths"] = argv[start:i]
            continue
        if arg in FLAGS:
            out[FLAGS[arg]] = True
            i += 1
            continue
        name, eq, given = arg.partition("=")
        dest = VALUES.get(name if eq and name.startswith("--") else arg)
        if dest is None:
            return None
        if eq:
            if not given:
                return None
            i += 1
        else:
            if i + 1 == len(argv) or not argv[i + 1] or argv[i + 1].startswith("-"):
                return None
            given, i = argv[i + 1], i + 2
        value = _value(dest, given)
        if value is None:
            return None
        if dest == "exclude":
            out[dest] = [*(out[dest] or []), value]
        else:
            out[dest] = value
    if out["paths"] is None:
        out["paths"] = []
    return SimpleNamespace(**out)


def _columns() -> int:
    """shutil.get_terminal_size().columns, without importing shutil (bz2, lzma, zlib: ~2 ms of a
    run): argparse builds a help formatter for each argument it is given, help or not."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns


def build_parser():
    import argparse

    from aoti_lsp import __version__

    class Help(argparse.HelpFormatter):
        def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
            super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)

    p = argparse.ArgumentParser(
        prog="aoti-lsp",
        formatter_class=Help,
        description="Catch PyTorch AOTInductor misuse (deprecated API, device mismatches, empty jagged inputs).",
        epilog="Subcommands: `aoti-lsp serve` (language server on stdio), `aoti-lsp rule [CODE]` (rule docs), "
               "`aoti-lsp explain LOG --package PKG` (crash log -> Python line), `aoti-lsp inspect PKG` (a .pt2).",
    )
    p.add_argument("--version", action="version", version=f"aoti-lsp {__version__}")
    p.add_argument("--check", action="store_true", help="check files (the default when paths are given)")
    p.add_argument("paths", nargs="*", help="files or folders (default: .)")
    p.add_argument("--output-format", choices=list(OUTPUT_FORMATS), default="text")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes (with --fix / --diff)")
    p.add_argument("--diff", action="store_true", help="print the fixes as a diff, change nothing")
    p.add_argument("--select", type=codes, help="comma-separated codes or prefixes to enable (e.g. AOTI0)")
    p.add_argument("--extend-select", type=codes)
    p.add_argument("--ignore", type=codes, help="comma-separated codes or prefixes to disable")
    p.add_argument("--exclude", action="append", help="glob of paths to skip (repeatable)")
    p.add_argument("--config", help="pyproject.toml to read instead of the nearest one")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    p.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")
    p.add_argument("--jobs", "-j", type=_jobs, default=None,
                   help="worker processes (1 or more; default: one per core, once the files to read pay for them)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache (.aoti_lsp_cache/ at the project root)")
    return p
