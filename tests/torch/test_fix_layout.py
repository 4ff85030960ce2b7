"""Real torch 2.13 (issue 11): the migration of a file with a BOM, a shebang, an encoding cookie
and CRLF line endings keeps all four, and the migrated program still runs and prints the same."""

from pathlib import Path

import pytest

from conftest import run_python

pytestmark = pytest.mark.torch
HERE = Path(__file__).parent
HEAD = b"\xef\xbb\xbf#!/usr/bin/env python\r\n# -*- coding: utf-8 -*-\r\n"


def test_migration_keeps_bom_shebang_cookie_and_crlf(tmp_path, torch_env):
    script = tmp_path / "script.py"
    body = (HERE / "old_api_script.py").read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    script.write_bytes(HEAD + body)
    out_dir = tmp_path / "artifacts"
    out_dir.mkdir()
    before = run_python([str(script), str(out_dir)], torch_env)
    assert before.returncode == 0, before.stderr[-3000:]

    fix = run_python(["-m", "aoti_lsp", "--check", "--fix", "--unsafe-fixes", str(script)], torch_env)
    assert fix.returncode == 0, fix.stdout + fix.stderr
    migrated = script.read_bytes()
    assert migrated.startswith(HEAD) and b"aot_load" not in migrated
    assert migrated.count(b"\n") == migrated.count(b"\r\n")  # no bare LF came in

    after = run_python([str(script), str(out_dir)], torch_env)
    assert after.returncode == 0, after.stderr[-3000:]
    assert after.stdout.splitlines()[:-1] == before.stdout.splitlines()[:-1]
    assert after.stdout.splitlines()[-1] == "scaled.pt2"
