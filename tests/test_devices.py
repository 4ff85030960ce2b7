"""Device evidence, artifact linking, cross-file summaries and the .pt2 reader (no torch)."""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import pytest

from aoti_lsp.project.config import Config
from aoti_lsp.analysis.devices import CODES, analysis
from aoti_lsp.analysis.engine import Context, analyze
from aoti_lsp.project.project import Project, summarize
from aoti_lsp.analysis.pt2 import MAX_METADATA, read_package
from aoti_lsp.rules import rule_by_code
from aoti_lsp.analysis.source import Source

REPO = Path(__file__).resolve().parents[1]
from goldens import REAL_CUDA_PACKAGE as CUDA_PACKAGE  # noqa: E402  (AOTI_SHARED_DIR moves ../shared)

SEED = ('import torch\nmodel = MyModel().cuda(); inp = torch.randn(2, 10, device="cuda"); '
        'so = torch._export.aot_compile(model, (inp,)); loaded = torch._export.aot_load(so, "cpu"); '
        'out = loaded(inp.to("cpu"))\n')

MAKE_PACKAGE = """import torch

example = torch.randn(4, 8, device="cuda")
ep = torch.export.export(Ranker(), (example,))
torch._inductor.aoti_compile_and_package(ep, package_path="out/model.pt2")
"""
APP = """import torch

runner = torch._inductor.aoti_load_package("out/model.pt2")
print(runner(torch.randn(4, 8)))
"""


def run(text: str, path: str = "<string>", project=None, config=None):
    return analyze(Source.from_text(text, path), config or Config(), project=project).findings


def codes(findings):
    return [f.code for f in findings]


def text_at(text: str, start: int, end: int) -> str:
    return text.encode()[start:end].decode()


# -- the seed ---------------------------------------------------------------------------------
def test_seed_reports_deprecations_and_both_mismatches():
    found = run(SEED)
    assert codes(found) == ["AOTI001", "AOTI002", "AOTI101", "AOTI102"]
    aoti101, aoti102 = found[2], found[3]
    assert text_at(SEED, aoti101.start, aoti101.end) == '"cpu"'
    assert text_at(SEED, aoti102.start, aoti102.end) == 'inp.to("cpu")'
    for f in (aoti101, aoti102):
        notes = {(text_at(SEED, r.start, r.end), r.message) for r in f.related}
        assert ("torch._export.aot_compile", "compiled here (`torch._export.aot_compile`)") in notes
        assert ('device="cuda"', 'compiled for cuda: `device="cuda"`') in notes
        assert all(r.path is None for r in f.related)
    assert ('to("cpu")', 'this input is on cpu: `.to("cpu")`') in {
        (text_at(SEED, r.start, r.end), r.message) for r in aoti102.related}
    # which device is right is the user's decision: offered in the editor, never applied by --fix
    assert aoti101.fix.edits[0].text == '"cuda"' and aoti101.fix.applicability.value == "display-only"
    assert aoti102.fix.edits[0].text == '"cuda"' and aoti102.fix.applicability.value == "unsafe"
    # the messages quote what torch was measured to say, per direction (issue 22)
    assert aoti101.message == ("A model compiled for `cuda` (line 2) loaded on `cpu`: load fails: "
                               "`Mixed-device constants`")
    assert aoti102.message == ("CPU input to a model compiled for `cuda` (line 2): "
                               "Expected all tensors to be on the same device")
    assert "segfault" not in rule_by_code("AOTI101").explanation.replace("no segfault", "")
    assert "Mixed-device constants" in rule_by_code("AOTI101").explanation


@pytest.mark.parametrize("code", CODES)
def test_rule_examples(code):
    rule = rule_by_code(code)
    assert rule.invalid and rule.valid
    for example in rule.invalid:
        assert code in codes(run(example)), example
    for example in rule.valid:
        assert code not in codes(run(example)), example


# -- device evidence ----------------------------------------------------------------------------
def device_of(text: str, expr_line: int = -1):
    """Device of the expression on the last line (`value = <expr>`) as `type[:index]`, or None."""
    source = Source.from_text(text)
    ctx = Context(source, Config())
    stmt = source.tree.root_node.named_children[expr_line]
    value = stmt.named_children[0].child_by_field_name("right")
    dev = analysis(ctx).tensor_device(value, value.start_byte)
    return None if dev is None else dev.spelled


@pytest.mark.parametrize("text,expected", [
    ("import torch\nv = torch.randn(2).cuda()", "cuda"),
    ("import torch\nv = torch.randn(2).cuda(1)", "cuda:1"),
    ("import torch\nv = torch.randn(2, device='cuda').cpu()", "cpu"),
    ("import torch\nv = x.to('cuda:0')", "cuda:0"),
    ("import torch\ndev = torch.device('cuda', 1)\nv = x.to(dev)", "cuda:1"),
    ("import torch\nv = x.to(device=torch.device('cuda:2'))", "cuda:2"),
    ("import torch\nv = x.to(0)", "cuda:0"),
    ("import torch\nDEVICE = 'cuda'\nv = torch.zeros(3, device=DEVICE)", "cuda"),
    ("import torch\nv = torch.ones(3)", "cpu"),
    ("import torch\nv = torch.empty_like(torch.ones(3, device='cuda'))", "cuda"),
    ("import torch\nt = torch.ones(3, device='cuda')\nv = torch.full_like(t, 2, device='cpu')", "cpu"),
    ("import torch\nx = torch.ones(3)\nx = x.cuda()\nv = x.float()", "cuda"),
    ("import torch\nx = torch.ones(3)\nv = x.to(torch.float16)", "cpu"),
    ("import torch\nx = torch.ones(3, device='cuda')\nv = torch.ones(3).to(x.device)", "cuda"),
    ("import torch\nB, D = 2, 'cuda'\nv = torch.ones(B, device=D)", "cuda"),
    ("import torch\ntorch.set_default_device('cuda')\nv = torch.randn(20)", "cuda"),
    ("import torch\nv = torch.randn(20)\ntorch.set_default_device('cuda')", None),  # `v` is not the last line
    ("import torch\nv = torch.nn.Linear(2, 2, device='cuda')", "cuda"),
    ("import torch\nm = MyModel()\nm.to('cuda')\nv = m", "cuda"),
    ("import torch\nm = torch.ones(3)\nm.to('cuda')\nv = m", "cpu"),  # a tensor's .to() is not in place
    ("import numpy\nimport torch\nv = torch.from_numpy(numpy.ones(3)).float()", "cpu"),
])
def test_known_devices(text, expected):
    if expected is None:  # the assignment is not the last statement
        assert device_of(text, expr_line=1) == "cpu"
    else:
        assert device_of(text) == expected


@pytest.mark.parametrize("text", [
    "import torch\nv = x.to('cuda' if torch.cuda.is_available() else 'cpu')",
    "import torch\nv = torch.ones(3, device=cfg.device)",
    "import torch\nv = torch.ones(3, device=os.environ['DEV'])",
    "import torch\ndef f(x, dev):\n    return x.to(dev)\nv = x",
    "import torch\nv = MyModel()",
    "import torch\nv = torch.as_tensor(data)",  # from a tensor: its device
    "import torch\nif c:\n    x = torch.ones(3, device='cuda')\nelse:\n    x = torch.ones(3)\nv = x",
    "import torch\nx = torch.ones(3)\nif c:\n    x = x.cuda()\nv = x",
    "import torch\ndef g():\n    torch.set_default_device('cuda')\nv = torch.ones(3)",
    "import torch\ntorch.set_default_tensor_type(torch.cuda.FloatTensor)\nv = torch.ones(3)",
    "import torch\nwith torch.device(dev):\n    pass\nv = x.to(dev)",
    "import torch\nv = x.to(x2)",
])
def test_unknown_devices(text):
    assert device_of(text) is None


def test_with_device_block_and_function_defaults():
    text = ("import torch\n"
            "with torch.device('cuda'):\n"
            "    a = torch.ones(3)\n"
            "b = torch.ones(3)\n"
            "torch.set_default_device('cuda')\n"
            "def f():\n"
            "    return torch.ones(3)\n"
            "with torch.device('meta'):\n"
            "    def g():\n"
            "        return torch.ones(3)\n")  # may run inside the block, or not: unknown
    source = Source.from_text(text)
    a = analysis(Context(source, Config()))
    calls = [n for n in _walk(source.tree.root_node) if n.type == "call" and n.text.startswith(b"torch.ones")]
    devices = [a.tensor_device(c, c.start_byte) for c in calls]
    assert [d and d.spelled for d in devices] == ["cuda", "cpu", "cuda", None]


def _walk(node):
    yield node
    for c in node.named_children:
        yield from _walk(c)


# -- cross-file -------------------------------------------------------------------------------
def project_of(files: dict[str, str], config=None) -> Project:
    project = Project()
    for path, text in files.items():
        project.update(path, summarize(Source.from_text(text, path), config))
    return project


def test_cross_file_related_points_into_the_other_file():
    project = project_of({"/ws/make_package.py": MAKE_PACKAGE, "/ws/app.py": APP})
    (f,) = run(APP, "/ws/app.py", project)
    assert f.code == "AOTI102" and "(make_package.py:5)" in f.message
    assert text_at(APP, f.start, f.end) == "torch.randn(4, 8)"
    other = [r for r in f.related if r.path == "/ws/make_package.py"]
    assert {text_at(MAKE_PACKAGE, r.start, r.end) for r in other} == {'device="cuda"', "torch._inductor.aoti_compile_and_package"}
    # alone, app.py knows nothing of the package: no finding
    assert run(APP, "/ws/app.py") == []


def test_editing_the_other_file_changes_the_finding():
    """What the server does: re-summarise the edited file, re-check dependents when it changed."""
    project = project_of({"/ws/make_package.py": MAKE_PACKAGE, "/ws/app.py": APP})
    assert codes(run(APP, "/ws/app.py", project)) == ["AOTI102"]
    cpu = MAKE_PACKAGE.replace('device="cuda"', 'device="cpu"')
    assert project.update("/ws/make_package.py", summarize(Source.from_text(cpu, "/ws/make_package.py")))
    assert run(APP, "/ws/app.py", project) == []
    # the summary holds byte offsets (for related information), so moving the compile site
    # is a change too; a change elsewhere in the file is not
    assert project.update("/ws/make_package.py", summarize(Source.from_text("# moved\n" + cpu, "/ws/make_package.py")))
    assert not project.update("/ws/make_package.py",
                              summarize(Source.from_text("# moved\n" + cpu + "x = 1\n", "/ws/make_package.py")))
    assert project.update("/ws/make_package.py", summarize(Source.from_text(MAKE_PACKAGE, "/ws/make_package.py")))
    assert codes(run(APP, "/ws/app.py", project)) == ["AOTI102"]


def test_two_files_compiling_the_same_path_differently_is_unknown():
    cpu = MAKE_PACKAGE.replace('device="cuda"', 'device="cpu"')
    project = project_of({"/ws/a.py": MAKE_PACKAGE, "/ws/b.py": cpu, "/ws/app.py": APP})
    assert run(APP, "/ws/app.py", project) == []


def test_own_summary_is_not_used_for_the_file_itself():
    text = APP + MAKE_PACKAGE.replace("import torch\n", "")
    project = project_of({"/ws/app.py": text})
    (f,) = run(text, "/ws/app.py", project)
    assert f.code == "AOTI102" and "(line " in f.message and all(r.path is None for r in f.related)


def test_summary_is_small_plain_data_stored_once():
    summary = summarize(Source.from_text(MAKE_PACKAGE, "/ws/make_package.py"))
    assert [k for k in summary if k.startswith("AOTI10")] == ["AOTI101"]  # one copy, not three
    data = pickle.dumps(summary["AOTI101"])
    assert len(data) < 1024 and b"tree_sitter" not in data
    entry = summary["AOTI101"]["compiles"][0]
    assert entry["key"] == "out/model.pt2" and entry["device"] == ("cuda", None)
    # with AOTI101 disabled, the next enabled rule keeps the facts
    cfg = Config(ignore=("AOTI101",))
    assert [k for k in summarize(Source.from_text(MAKE_PACKAGE, "/ws/make_package.py"), cfg) if k.startswith("AOTI10")] == ["AOTI102"]
    project = project_of({"/ws/make_package.py": MAKE_PACKAGE}, cfg)
    assert codes(run(APP, "/ws/app.py", project, cfg)) == ["AOTI102"]
    # a file that compiles nothing with a known path stores nothing
    assert not [k for k in summarize(Source.from_text(APP, "/ws/app.py")) if k.startswith("AOTI10")]


# -- .pt2 packages on disk ------------------------------------------------------------------------
def make_package(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return path


def metadata(device: str) -> bytes:
    return json.dumps({"AOTI_DEVICE_KEY": device, "AOTI_PLATFORM": "linux"}).encode()


@pytest.mark.skipif(not CUDA_PACKAGE.exists(), reason="the real CUDA package is missing (tests/real_cuda/LastItemGather.pt2)")
def test_real_cuda_package():
    info = read_package(CUDA_PACKAGE)
    device, entry = info.device()
    assert device == "cuda"
    assert entry.startswith("LastItemGather/data/aotinductor/model/") and entry.endswith(".wrapper_metadata.json")


@pytest.mark.skipif(not CUDA_PACKAGE.exists(), reason="the real CUDA package is missing (tests/real_cuda/LastItemGather.pt2)")
def test_real_cuda_package_from_source(tmp_path):
    text = f"import torch\nrunner = torch._inductor.aoti_load_package({str(CUDA_PACKAGE)!r})\nrunner(torch.ones(3))\n"
    (f,) = run(text, str(tmp_path / "app.py"))
    assert f.code == "AOTI102" and f.message == (
        "CPU input to the package `LastItemGather.pt2` compiled for `cuda`: Expected all tensors to be on the same device")
    (rel,) = f.related[:1]
    assert rel.path == str(CUDA_PACKAGE.resolve()) and (rel.start, rel.end) == (0, 0)
    assert "AOTI_DEVICE_KEY" in rel.message


def test_package_relative_to_the_file_or_a_parent(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    make_package(tmp_path / "cpu.pt2", {"cpu/data/aotinductor/model/x.wrapper_metadata.json": metadata("cpu")})
    sub = tmp_path / "scripts"
    sub.mkdir()
    text = "import torch\nr = torch._inductor.aoti_load_package('cpu.pt2', device_index=1)\n"
    (f,) = run(text, str(sub / "serve.py"))  # found in the project root, where scripts are run from
    assert f.code == "AOTI101"
    assert run(text, "<string>") == []  # no file, no folder to look in


def test_bounded_and_broken_packages(tmp_path):
    assert read_package(tmp_path / "missing.pt2") is None
    (tmp_path / "not_a_zip.pt2").write_bytes(b"\x7fELF" + b"\0" * 100)
    assert read_package(tmp_path / "not_a_zip.pt2") is None
    big = make_package(tmp_path / "big.pt2", {
        "big/data/aotinductor/model/x.wrapper_metadata.json": b" " * (MAX_METADATA + 1) + metadata("cpu")})
    assert read_package(big) is None
    bad = make_package(tmp_path / "bad.pt2", {"bad/data/aotinductor/model/x.wrapper_metadata.json": b"{nope"})
    assert read_package(bad) is None
    other = make_package(tmp_path / "other.pt2", {"other/data/weights.json": metadata("cuda")})
    assert read_package(other) is None


def test_several_models_and_cache_invalidation(tmp_path):
    path = make_package(tmp_path / "multi.pt2", {
        "multi/data/aotinductor/model/a.wrapper_metadata.json": metadata("cuda"),
        "multi/data/aotinductor/model/a.kernel_metadata.json": metadata("cuda"),
        "multi/data/aotinductor/cpu_model/b.wrapper_metadata.json": metadata("cpu"),
    })
    info = read_package(path)
    assert info.device()[0] == "cuda"
    assert info.device()[1].endswith("a.wrapper_metadata.json")
    assert info.device("cpu_model")[0] == "cpu"
    make_package(path, {"multi/data/aotinductor/model/a.wrapper_metadata.json": metadata("cpu") + b" " * 10})
    assert read_package(path).device()[0] == "cpu"  # rewritten: read again
