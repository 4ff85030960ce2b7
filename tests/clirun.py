"""Running the CLI in-process, as the CLI tests do."""

from aoti_lsp.cli.main import main


def run(capsys, *args):
    """(exit code, stdout, stderr); argparse's usage errors become their exit code."""
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err
