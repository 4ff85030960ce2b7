"""Issue 19 item 2: any text a file (or its name) holds reaches every output format intact. A lone
surrogate (`'\\ud800'` in a string literal, a file name that is not UTF-8) crashed the printing:
stdout empty, exit 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from aoti_lsp.cli import reporters
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.source import Source

SOURCE = "import torch\nr = torch._inductor.aoti_load_package('\\ud800.so')\n"
FORMATS = ["text", "json", "sarif", "github"]


def cli(tmp_path, *args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONIOENCODING"}
    return subprocess.run([sys.executable, "-m", "aoti_lsp", "--check", "--no-cache", *args], cwd=tmp_path,
                          capture_output=True, env=env, timeout=60)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_lone_surrogate_in_a_literal_is_printed(tmp_path, fmt):
    (tmp_path / "m.py").write_text(SOURCE)
    run = cli(tmp_path, "--output-format", fmt, "m.py")
    assert b"Traceback" not in run.stderr and b"internal error" not in run.stderr
    assert run.returncode == 1 and b"AOTI003" in run.stdout
    assert "\\ud800.so" in readable(run.stdout, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_file_name_that_is_not_utf8_is_printed(tmp_path, fmt):
    (tmp_path / os.fsdecode(b"m\xff.py")).write_text(SOURCE.replace("\\ud800", "m"))
    run = cli(tmp_path, "--output-format", fmt, ".")
    assert b"Traceback" not in run.stderr
    assert run.returncode == 1 and b"AOTI003" in run.stdout
    assert "m\\udcff.py" in readable(run.stdout, fmt)


def readable(out: bytes, fmt: str) -> str:
    """The output as its reader sees it: strict UTF-8; JSON parsed, where the escape arrives as
    text (a backslash), not as a surrogate."""
    text = out.decode("utf-8")
    if fmt in ("json", "sarif"):
        values = []

        def strings(v):
            if isinstance(v, dict):
                for k, x in v.items():
                    strings(k), strings(x)
            elif isinstance(v, list):
                for x in v:
                    strings(x)
            elif isinstance(v, str):
                values.append(v)

        strings(json.loads(text))
        assert not any(reporters._LONE.search(v) for v in values)
        return "\n".join(values)
    return text


@pytest.mark.parametrize("fmt", FORMATS)
def test_render_never_returns_what_utf8_cannot_carry(fmt):
    source = Source(SOURCE.encode(), "\udcff.py")
    findings = analyze(source).findings
    assert findings
    reporters.render(fmt, [(f, source) for f in findings]).encode("utf-8")


def test_shown_escapes_only_surrogates():
    assert reporters.shown("é😀\\x") == "é😀\\x"
    assert reporters.shown("a\ud800b") == "a\\ud800b"
    assert json.loads(reporters.shown(json.dumps("a\udfffb", ensure_ascii=False), in_json=True)) == "a\\udfffb"
