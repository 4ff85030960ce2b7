import sys

from aoti_lsp.cli import main

sys.exit(main())
