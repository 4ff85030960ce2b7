"""`python -m aoti_lsp`. `--version` is answered before the CLI's modules are imported: editors
probe it beside the server they start (VS Code's extension runs both at once)."""

import sys

if sys.argv[1:] == ["--version"]:
    from aoti_lsp import __version__

    print(f"aoti-lsp {__version__}")
    sys.exit(0)

from aoti_lsp.cli.main import run  # noqa: E402

run()
