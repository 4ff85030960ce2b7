"""The server's start (issue 23 item 5: the first squiggle within 1.5 s of opening a file). Its
imports run with the collector paused and their objects frozen; what only a later request needs
is imported then. Each check runs in a fresh interpreter: this process has imported everything."""

from __future__ import annotations

import json
import subprocess
import sys

START = """
import gc, json, sys
collecting = gc.isenabled()
import aoti_lsp.lsp.server
print(json.dumps({
    "collecting": gc.isenabled() == collecting,
    "frozen": gc.get_freeze_count(),
    "loaded": sorted(m for m in sys.modules if m.startswith("aoti_lsp.")),
}))
"""


def start(*flags: str) -> dict:
    run = subprocess.run([sys.executable, *flags, "-c", START], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_collector_runs_again_after_the_imports():
    seen = start()
    assert seen["collecting"]
    assert seen["frozen"] > 50_000  # lsprotocol's classes and the rest (~100,000): no collection walks them


def test_the_imports_leave_out_what_only_a_later_request_needs():
    loaded = start()["loaded"]
    assert "aoti_lsp.lsp.hover" not in loaded  # the first hover or completion imports it
    assert "aoti_lsp.fixes.project_fix" not in loaded  # a migration's code action imports it
    assert "aoti_lsp.lsp.notebooks" in loaded and "aoti_lsp.rules.aoti001" in loaded  # needed at start


def test_a_server_imported_with_the_collector_off_leaves_it_off():
    code = "import gc; gc.disable(); import aoti_lsp.lsp.server; print(gc.isenabled())"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "False", run.stderr
