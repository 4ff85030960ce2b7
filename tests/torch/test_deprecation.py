"""What AOTI001/AOTI002 say about the deprecation, against real torch: a `logging` banner
(logger `torch._export`, once per process), no `warnings` category, no `__deprecated__`, and
`torch._inductor.aot_compile` warns nothing. No compile: fast. `make test-torch-next` runs this
file (and test_migration.py) again under the newest torch installable here."""

import json
import os

import pytest

from conftest import run_python

pytestmark = pytest.mark.torch

PROBE = r"""
import json, logging, warnings
import torch
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append((record.name, record.getMessage()))
logging.getLogger("torch._export").addHandler(Keep())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        try:
            torch._export.aot_load("/nonexistent/model.so", "cpu")
        except Exception as exc:
            error = type(exc).__name__
    old_api = [f"{w.category.__name__}: {w.message}" for w in caught]
    try:
        torch._inductor.aot_compile(torch.nn.Linear(2, 2), (torch.randn(1, 2),))
    except Exception as exc:
        old_inductor = f"{type(exc).__name__}: {exc}"
try:
    torch._export.aot_compile(torch.nn.Linear(2, 2), (torch.randn(1, 2),), constraints=[])
except Exception as exc:
    constraints = f"{type(exc).__name__}: {exc}"
import inspect
keywords = {n: repr(p.default) for f in (torch._export.aot_compile, torch._inductor.aot_compile)
            for n, p in inspect.signature(f).parameters.items() if p.kind is p.KEYWORD_ONLY}
print(json.dumps({
    "version": torch.__version__,
    "constraints": constraints,
    "keywords": keywords,
    "records": records,
    "warnings": old_api,
    "deprecated_attr": [hasattr(f, "__deprecated__") for f in (torch._export.aot_compile, torch._export.aot_load)],
    "old_inductor": old_inductor,
}))
"""


def test_deprecation_is_a_logging_banner_only(torch_env, tmp_path):
    res = run_python(["-c", PROBE], {**torch_env, "PYTHONWARNINGS": ""}, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    seen = json.loads(res.stdout.strip().splitlines()[-1])
    # the environment under test is the one the docs name (make test-torch-next sets it)
    assert seen["version"].split("+")[0] == os.environ.get("AOTI_EXPECT_TORCH", "2.13.0")
    banner = [m for name, m in seen["records"] if "is being deprecated" in m]
    assert len(banner) == 1, seen["records"]  # once per process, although called twice
    assert banner[0].startswith("torch._export.aot_compile()/torch._export.aot_load() is being deprecated")
    assert all(name == "torch._export" for name, _ in seen["records"])
    assert seen["warnings"] == []  # no warnings category: `python -W error` never notices
    assert seen["deprecated_attr"] == [False, False]
    assert seen["old_inductor"].startswith("AttributeError") and "graph" in seen["old_inductor"]


def test_the_keywords_the_migration_drops_or_refuses_are_torchs(torch_env, tmp_path):
    """migrate.keywords_check: `constraints=` fails the old call itself; the keywords it drops or
    carries over are exactly torch's keyword-only ones."""
    from aoti_lsp.fixes.migrate import _CARRIED, _DROPPED

    res = run_python(["-c", PROBE], {**torch_env, "PYTHONWARNINGS": ""}, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    seen = json.loads(res.stdout.strip().splitlines()[-1])
    assert seen["constraints"].startswith("TypeError") and "constraints" in seen["constraints"]
    assert set(seen["keywords"]) - set(_CARRIED) == {n for names in _DROPPED.values() for n in names}
