"""Device values on several paths (issue 21): `torch.device` objects, `.type` / `.index`, helpers'
returns, parameter defaults, `x.device`; `device_index=` that can be None or an index on a cpu
package; dynamic-dim bounds against literal call sizes; the measured texts the messages quote
(issue 22) against the real CUDA runs; the hover's checklist (issue 21, issue 23 item 3)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from aoti_lsp.project.config import Config
from aoti_lsp.analysis.devices import CUDA_211, MEASURED, analysis
from aoti_lsp.analysis.engine import Context, analyze
from aoti_lsp.project.project import Project, summarize
from aoti_lsp.analysis.source import Source

SHARED = Path(os.environ.get("AOTI_SHARED_DIR") or Path(__file__).resolve().parents[1].parent / "shared")
RUNS = SHARED / "fixtures" / "cuda" / "runs" / "facts-torch2.11-cu130-h200.json"

HELPER = '''import torch


def init_distributed():
    if not torch.cuda.is_available():
        return 0, torch.device("cpu")
    rank = 1
    return rank, torch.device("cuda", rank)


def load(path):
    rank, device = init_distributed()
    return torch._inductor.aoti_load_package(path, device_index={index})
'''
CPU_PACKAGE = '''import torch
ep = torch.export.export(M(), (torch.randn(4, 8),))
torch._inductor.aoti_compile_and_package(ep, package_path="m.pt2")
'''


def findings(text: str, code: str, path: str = "<string>", project=None):
    return [f for f in analyze(Source.from_text(text, path), Config(), project=project).findings if f.code == code]


def index_of(text: str) -> list:
    """The choices of the last load's device_index: None, an int, `?` (an int not known)."""
    a = analysis(Context(Source.from_text(text), Config()))
    load = a.loads()[-1]
    out = []
    for c in a.index_choices(load.index_node, load.call.start_byte):
        out.append("unknown" if c is None else (c.value if c.known else "?"))
    return out


# -- device_index values -----------------------------------------------------------------------
@pytest.mark.parametrize("index,expected", [
    ("device.index", [None, 1]),                                     # the helper's two returns, in order
    ('device.index if device.type == "cuda" else -1', [1, -1]),      # the test holds on its branch
    ("device.index if device.index is not None else -1", [1, -1]),
    ("None", [None]),
    ("0", [0]),
    ("rank", [0, 1]),
    ("int(os.environ['LOCAL_RANK'])", ["unknown"]),
])
def test_index_choices_follow_the_helper(index, expected):
    assert index_of(HELPER.format(index=index)) == expected


@pytest.mark.parametrize("text,expected", [
    ('import torch\ndef f(p, device=torch.device("cuda")):\n'
     '    return torch._inductor.aoti_load_package(p, device_index=device.index)\n', [None]),
    ('import torch\ndef f(p, device=torch.device("cuda", 1)):\n'
     '    return torch._inductor.aoti_load_package(p, device_index=device.index)\n', [1]),
    ('import torch\nx = torch.randn(3)\ntorch._inductor.aoti_load_package(p, device_index=x.device.index)\n', [None]),
    ('import torch\nx = torch.randn(3).cuda()\ntorch._inductor.aoti_load_package(p, device_index=x.device.index)\n', ["?"]),
    ('import torch\nd = torch.device(f"cuda:{r}")\ntorch._inductor.aoti_load_package(p, device_index=d.index)\n', ["?"]),
    ('import torch\nd = torch.device("cuda:2")\ntorch._inductor.aoti_load_package(p, device_index=d.index)\n', [2]),
    ('import torch\ntorch._inductor.aoti_load_package(p, device_index=torch.cuda.current_device())\n', ["?"]),
    ('import torch\ndef f(p, x):\n    return torch._inductor.aoti_load_package(p, device_index=x.device.index)\n', ["unknown"]),
])
def test_index_choices_forms(text, expected):
    assert index_of(text) == expected


def test_if_statement_guards():
    text = HELPER.replace(
        "    return torch._inductor.aoti_load_package(path, device_index={index})\n",
        "    if device.type == \"cuda\":\n        return torch._inductor.aoti_load_package(path, device_index=device.index)\n"
        "    else:\n        return torch._inductor.aoti_load_package(path, device_index=device.index)\n")
    found = findings(text, "AOTI101")
    assert [f.message.split(" (`")[0] for f in found] == ["`device_index=device.index` can be `None`"]
    assert Source.from_text(text).lines.line_of(found[0].start) == 15  # the else branch only


def test_none_index_message_fix_and_related():
    text = HELPER.format(index="device.index")
    (f,) = findings(text, "AOTI101")
    assert f.message == ('`device_index=device.index` can be `None` (`torch.device("cpu")`, line 6): the loader '
                         'raises `TypeError`')
    assert [r.message for r in f.related] == ['`None` here: `torch.device("cpu")`']
    assert f.fix.applicability.value == "unsafe"
    (edit,) = f.fix.edits
    assert edit.text == 'device.index if device.type == "cuda" else -1'
    fixed = text.encode()[:edit.start] + edit.text.encode() + text.encode()[edit.end:]
    assert findings(fixed.decode(), "AOTI101") == []  # the fix's own result is clean


def test_cpu_package_any_index_and_none(tmp_path):
    helper = HELPER.replace("def load(path):", 'def load(path="m.pt2"):').replace("import torch\n", "", 1)
    text = CPU_PACKAGE + helper.format(index="device.index")
    (f,) = findings(text, "AOTI101")
    assert f.message == ('`device_index=device.index` on a model compiled for `cpu` (line 3): `TypeError` for `None` '
                         '(`torch.device("cpu")`, line 8), `Incorrect device` for an index (`torch.device("cuda", rank)`, '
                         'line 10)')
    from aoti_lsp.lsp.hover import measured_lines
    assert measured_lines(f) == [
        "Measured on torch 2.13 (CPU): `TypeError: __init__(): incompatible constructor arguments`",
        "Measured on torch 2.13 (CPU): `RuntimeError: Incorrect device passed to aoti_runner_cpu`"]
    assert f.fix.title == "Drop device_index"
    # only the CUDA branch is passed: still an index on a cpu package
    guarded = CPU_PACKAGE + helper.format(index='device.index if device.type == "cuda" else -1')
    (g,) = findings(guarded, "AOTI101")
    assert "`None`" not in g.message and "`Incorrect device` for an index" in g.message


@pytest.mark.parametrize("index", ['device.index if device.type == "cuda" else -1', "-1", "rank if False else -1"])
def test_no_finding_when_no_path_fails(index):
    assert findings(HELPER.format(index=index), "AOTI101") == []


# -- device= from variables, defaults, helpers -----------------------------------------------
def test_device_from_helper_default_and_type():
    base = ('import torch\nx = torch.randn(4, 8, device="cuda")\nep = torch.export.export(M(), (x,))\n'
            'runner = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))\n')
    helper = base + 'def dev():\n    return torch.device("cpu")\nrunner(torch.randn(4, 8, device=dev()))\n'
    assert len(findings(helper, "AOTI102")) == 1
    default = base + 'def serve(device=torch.device("cpu")):\n    return runner(torch.randn(4, 8, device=device))\n'
    assert len(findings(default, "AOTI102")) == 1
    typed = base + 'd = torch.device("cpu", 0)\nrunner(torch.randn(4, 8, device=d.type))\n'
    assert len(findings(typed, "AOTI102")) == 1
    two_ways = base + ('def dev():\n    if c:\n        return torch.device("cpu")\n    return torch.device("cuda")\n'
                       'runner(torch.randn(4, 8, device=dev()))\n')
    assert findings(two_ways, "AOTI102") == []  # the helper's returns disagree: unknown


# -- dynamic-dim bounds ----------------------------------------------------------------------
def compile_with(spec: str, example: str = "torch.randn(4, 8)") -> str:
    return ('import torch\nfrom torch.export import Dim\n'
            f'ep = torch.export.export(M(), ({example},), dynamic_shapes=({{0: {spec}}},))\n'
            'runner = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))\n')


@pytest.mark.parametrize("spec,size,expected", [
    ('Dim("batch", min=2, max=32)', 1, "below `min=2` of `Dim(\"batch\", min=2, max=32)`"),
    ('Dim("batch", min=2, max=32)', 33, "above `max=32` of `Dim(\"batch\", min=2, max=32)`"),
    ('Dim("batch", min=2, max=32)', 0, "below `min=2`"),
    ('Dim("batch", min=4)', 3, "below `min=4`"),
    ('Dim("batch")', 1, "has size 1 on dim 0, dynamic (`Dim(\"batch\")`) and traced as >= 2"),
    ('Dim("batch", min=0)', 0, "has size 0 on dim 0, dynamic (`Dim(\"batch\", min=0)`) and traced as >= 2"),
    ("Dim.AUTO", 1, "dynamic (`Dim.AUTO`) and traced as >= 2"),
    ("Dim.DYNAMIC", 0, "dynamic (`Dim.DYNAMIC`) and traced as >= 2"),
    ("torch.export.Dim.DYNAMIC", 1, "dynamic (`Dim.DYNAMIC`) and traced as >= 2"),
])
def test_bounds_reported(spec, size, expected):
    (f,) = findings(compile_with(spec) + f"runner(torch.randn({size}, 8))\n", "AOTI103")
    assert expected in f.message and f.message.endswith(": silently accepted (unchecked)")
    assert len(f.message) <= 112
    low = 4 if "min=4" in spec else 2
    (note,) = [r.message for r in f.related if r.message.startswith("dim 0 traced as ")]
    if size > 32:
        assert "`dim value is too large at 0, expected to be <= 32, but got: 33`" in note
    else:
        assert f"`dim value is too small at 0, expected it to be >= {low}, but got: {size}`" in note
    assert "with `AOTI_RUNTIME_CHECK_INPUTS=1` torch raises (measured on torch 2.13 (CPU))" in note


@pytest.mark.parametrize("spec,size", [
    ('Dim("batch", min=2, max=32)', 2), ('Dim("batch", min=2, max=32)', 32), ('Dim("batch")', 1000),
    ('Dim("batch", min=lo, max=hi)', 1),  # bounds computed elsewhere: not known
    ("Dim.STATIC", 4),
])
def test_bounds_not_reported(spec, size):
    assert findings(compile_with(spec) + f"runner(torch.randn({size}, 8))\n", "AOTI103") == []


def test_auto_on_a_size_one_example_is_static():
    # Dim.AUTO on an example of size 1: export keeps it static, so it has no range to check
    text = compile_with("Dim.AUTO", "torch.randn(1, 8)") + "runner(torch.randn(1, 8))\n"
    assert findings(text, "AOTI103") == []


def test_bounds_cross_file_through_the_summary(tmp_path):
    build = compile_with('Dim("batch", min=2, max=32)').replace(
        "aoti_compile_and_package(ep)", 'aoti_compile_and_package(ep, package_path="m.pt2")')
    serve = 'import torch\nrunner = torch._inductor.aoti_load_package("m.pt2")\nrunner(torch.randn(40, 8))\n'
    project = Project()
    bpath = str(tmp_path / "build.py")
    project.update(bpath, summarize(Source.from_text(build, bpath)))
    (f,) = findings(serve, "AOTI103", str(tmp_path / "serve.py"), project)
    assert "above `max=32`" in f.message
    (r,) = [r for r in f.related if r.message.startswith("dim 0 traced as 2..32")]
    assert r.path == bpath


# -- the measured texts are real (issue 22) --------------------------------------------------
@pytest.mark.skipif(not RUNS.is_file(), reason="../shared/fixtures/cuda/runs is not beside the repository")
def test_measured_cuda_texts_are_in_the_real_runs():
    runs = json.loads(RUNS.read_text("utf-8"))
    where = {"cuda_loaded_on_cpu": "old_load_cuda_so_on_cpu", "cpu_input_to_cuda": "cuda_pkg_cpu_input",
             "cuda_input_to_cpu": "cpu_pkg_cuda_input", "bad_ordinal": "cuda_pkg_device_index_1",
             "index_on_cpu": "cpu_pkg_device_index_0"}
    for key, scenario in where.items():
        run = runs[scenario]
        text, _, short = MEASURED[key]
        assert run["rc"] != 0 and short in text, key
        assert all(part in run["stderr"] for part in text.split(" ... ")), key  # the whole text, gaps marked
    assert {k for k, (_, w, _) in MEASURED.items() if w == CUDA_211} <= set(where)
    # a static dim mismatch on CUDA runs (AOTI103 says so): rc 0 without the check, an error with it
    assert runs["cuda_pkg_wrong_batch"]["rc"] == 0 and "resized" in runs["cuda_pkg_wrong_batch"]["stderr"]
    assert "unmatched dim value at 0, expected: 2, but got: 3" in runs["cuda_pkg_wrong_batch_CHECK_INPUTS"]["stderr"]


# -- hover -----------------------------------------------------------------------------------
def checklist_at(text: str, needle: str) -> str:
    from aoti_lsp.lsp.hover import checklist, site_at

    source = Source.from_text(text)
    site = site_at(Context(source, Config()), text.encode().index(needle.encode()) + 1)
    return "\n".join(checklist(site))


def test_hover_shows_the_bounds_next_to_each_input():
    text = compile_with('Dim("batch", min=2, max=32)') + "runner(torch.randn(1, 8))\n"
    out = checklist_at(text, "runner(torch")
    assert 'input 0: float32[4, 8], dynamic dims: 0 (`Dim("batch", min=2, max=32)`: traced as 2..32)' in out
    assert "dynamic dims within their traced range" in out


def test_hover_on_a_deprecated_load_recommends_aoti_load_package():
    text = ('import torch\nx = torch.randn(2, 8, device="cuda")\nso = torch._export.aot_compile(M(), (x,))\n'
            'runner = torch._export.aot_load(so, "cpu")\n')
    out = checklist_at(text, "aot_load(so")
    assert "aot_load(path" not in out and "`aoti_load_package(pt2)`" in out and "AOTI002" in out
    assert "Mixed-device constants" in out and "invalid device ordinal" in out
    assert "Measured on" not in out and "(measured on torch 2.11+cu130 (H200))" in out


def test_early_return_guard():
    text = HELPER.replace(
        "    return torch._inductor.aoti_load_package(path, device_index={index})\n",
        "    if device.type == \"cpu\":\n        return torch._inductor.aoti_load_package(path)\n"
        "    return torch._inductor.aoti_load_package(path, device_index=device.index)\n")
    assert findings(text, "AOTI101") == []
    # the same `if` without leaving the block guards nothing after it
    assert len(findings(text.replace("        return torch._inductor.aoti_load_package(path)\n",
                                     "        print(device)\n"), "AOTI101")) == 1
