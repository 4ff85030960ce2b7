"""cli/args.py: `parse` (the frequent command lines, without argparse) gives argparse's own
result whenever it gives one, and leaves everything else (help, errors, abbreviations, `--`,
joined short options) to argparse."""

from __future__ import annotations

import contextlib
import io

from hypothesis import given, settings
from hypothesis import strategies as st

from aoti_lsp.cli import args


def _argparse(argv: list[str]):
    """("ok", the namespace's attributes in order) or ("exit", code): what argparse does."""
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            return "ok", list(vars(args.build_parser().parse_args(argv)).items())
    except SystemExit as exc:
        return "exit", exc.code


OPTIONS = [*args.FLAGS, *args.VALUES, "--version", "-h", "--help", "--", "-", "", "-x", "--nope", "-qj", "-j2", "-j=2",
           "-q=1", "--chec", "--sel", "--no", "--check=1", "--select=", "--select=AOTI0", "--output-format=json",
           "--output-format=xml", "--jobs=0", "--jobs=3", "--exclude=b*", "--config=a=b", "--ignore=-1", "-1"]
VALUES = ["a.py", "dir", "a b.py", "a=b", "AOTI0,aoti101", " aoti1 ,", "json", "sarif", "xml", "0", "2", " 3", "1_0", "x",
          "-3", "--check", "-q", "caf\u00e9.py"]
token = st.one_of(st.sampled_from(OPTIONS), st.sampled_from(VALUES), st.text(max_size=4))


@settings(max_examples=3000, deadline=None)
@given(st.lists(token, max_size=8))
def test_parse_is_argparse_wherever_it_answers(argv):
    fast = args.parse(argv)
    if fast is not None:
        assert _argparse(argv) == ("ok", list(vars(fast).items())), argv


COMMON = [
    ["--check", "app/a.py"],
    ["--check", "a.py", "b.py", "pkg/c.py"],
    ["--check"],
    ["a.py"],
    ["--check", "--exit-zero", "-q", "--select", "AOTI0,aoti101", "--ignore", "AOTI002", "a.py", "b.py"],
    ["--check", "--output-format", "json", "--no-cache", "-j", "2", "."],
    ["--check", "--output-format=github", "--config=pyproject.toml", "--exclude", "build", "--exclude=gen/*", "src"],
    ["--fix", "--unsafe-fixes", "a.py"],
    ["--diff", "a.py", "--quiet"],
    ["--extend-select=AOTI3", "--jobs=4", "x.py"],
]


def test_the_common_command_lines_are_parsed_without_argparse():
    for argv in COMMON:
        fast = args.parse(argv)
        assert fast is not None, argv
        assert _argparse(argv) == ("ok", list(vars(fast).items())), argv


def test_the_rest_is_left_to_argparse():
    for argv in (["--help"], ["--version"], ["--chec", "a.py"], ["a.py", "--check", "b.py"], ["--", "-a.py"],
                 ["-j2", "a.py"], ["-j", "0", "a.py"], ["--output-format", "xml"], ["--select"], ["-"], [""],
                 ["--select", "-x"], ["--check=yes"], ["--select=", "a.py"]):
        assert args.parse(argv) is None, argv
