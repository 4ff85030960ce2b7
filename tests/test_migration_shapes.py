"""The migration on the shapes real code has (issue 18), planned without torch: what it rewrites,
and the true reason where it does not. Real-torch runs of these shapes, before and after the fix at
batch sizes other than the example's: tests/torch/test_real_shapes.py."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.fixes import plan as planmod
from aoti_lsp.analysis.source import Source

MODEL = """
    import torch
    class Net(torch.nn.Module):
        def forward(self, x):
            return x * 2
"""


def _project(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip())
    return root


def _diff(root: Path, *paths: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aoti_lsp", "--check", "--no-cache", "--diff", "--unsafe-fixes",
                           *(paths or ["."])], cwd=root, capture_output=True, text=True, timeout=120)


def test_a_temporary_folder_is_private_and_the_value_flows_to_its_loader(tmp_path):
    root = _project(tmp_path, {"script.py": """
        import os, tempfile, torch
        out_dir = tempfile.mkdtemp()
        so_path = torch._export.aot_compile(model, (x,), {"scale": s}, dynamic_shapes=ds,
                                            options={"aot_inductor.output_path": os.path.join(out_dir, "m.so")})
        runner = torch._export.aot_load(so_path, "cpu")
    """})
    out = _diff(root)
    assert out.returncode == 1, out.stderr
    assert 'package_path=os.path.join(out_dir, "m.pt2")' in out.stdout
    assert "dynamic_shapes=ds" in out.stdout and "{\"scale\": s}" in out.stdout
    assert "+runner = torch._inductor.aoti_load_package(so_path)" in out.stdout
    assert "not fixed" not in out.stderr


def test_with_temporary_directory_is_private_too(tmp_path):
    root = _project(tmp_path, {"script.py": """
        import os, tempfile, torch
        with tempfile.TemporaryDirectory() as d:
            so = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": os.path.join(d, "m.so")})
            print(so)
    """})
    out = _diff(root)
    assert 'package_path=os.path.join(d, "m.pt2")' in out.stdout, out.stderr


def test_tutorial_two_scripts_cwd_path_options_variable_and_device_ternary(tmp_path):
    common = """
        device = "cuda" if torch.cuda.is_available() else "cpu"
        so_file = os.path.join(os.getcwd(), "m.so")
    """
    root = _project(tmp_path, {
        "export.py": "import os\nimport torch\nfrom torch.export import Dim\n" + textwrap.dedent(common) + textwrap.dedent("""
            opts = {"aot_inductor.output_path": so_file}
            with torch.no_grad():
                so = torch._export.aot_compile(model, sample, dynamic_shapes={"x": {0: Dim("batch", min=2, max=64)}}, options=opts)
        """),
        "serve.py": "import os\nimport torch\n" + textwrap.dedent(common) + "runner = torch._export.aot_load(so_file, device)\n",
    })
    for named in ((), ("serve.py",), ("export.py",)):  # the whole tree, or one file from the root
        out = _diff(root, *named)
        assert out.returncode == 1 and "not fixed" not in out.stderr, out.stderr
        assert '-opts = {"aot_inductor.output_path": so_file}' in out.stdout
        assert 'dynamic_shapes={"x": {0: Dim("batch", min=2, max=64)}}, strict=True)' in out.stdout
        assert "aoti_compile_and_package(ep, package_path=so_file)" in out.stdout
        assert out.stdout.count('+so_file = os.path.join(os.getcwd(), "m.pt2")') == 2
        assert "+runner = torch._inductor.aoti_load_package(so_file)" in out.stdout


def test_an_options_variable_with_more_keys_keeps_them(tmp_path):
    root = _project(tmp_path, {"build.py": """
        import torch
        opts = {
            "max_autotune": False,
            "aot_inductor.output_path": "/srv/m.so",
        }
        so = torch._export.aot_compile(model, (x,), options=opts)
        runner = torch._export.aot_load(so, "cuda:1")
    """})
    out = _diff(root)
    assert '-    "aot_inductor.output_path": "/srv/m.so",' in out.stdout, out.stdout + out.stderr
    assert '"max_autotune": False,' not in [l[1:] for l in out.stdout.splitlines() if l.startswith("-")]
    assert 'aoti_compile_and_package(ep, package_path="/srv/m.pt2", inductor_configs=opts)' in out.stdout
    assert "aoti_load_package(so, device_index=1)" in out.stdout


def test_an_exported_program_is_compiled_never_exported_again(tmp_path):
    root = _project(tmp_path, {"run.py": """
        import os, torch
        from torch.export import Dim
        ep = torch.export.export(M(), example_inputs, dynamic_shapes={"x": {0: Dim("batch", min=2, max=64)}})
        path = torch._inductor.aot_compile(ep.module(), example_inputs, options={"aot_inductor.output_path": os.path.abspath("c.so")})
        runner = torch._export.aot_load(path, "cpu")
    """})
    out = _diff(root)
    assert "torch.export.export(ep.module()" not in out.stdout and "strict=True" not in out.stdout
    assert '+path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.abspath("c.pt2"))' in out.stdout


def test_a_graph_module_named_first_compiles_its_exported_program(tmp_path):
    """Real code (a PyTorch issue's reproduction) names the graph module before compiling it:
    `gm = ep.module()` compiles `ep`; `gm = torch.export.export(...).module()` names the program
    first (`ep = ...`, `gm = ep.module()`), so its dynamic dims are kept (tests/torch: module_named)."""
    root = _project(tmp_path, {"run.py": """
        import torch
        def build(args):
            ep = torch.export.export(M(), args)
            gm = ep.module()
            so = torch._inductor.aot_compile(gm, args)
            return torch._export.aot_load(so, "cpu")
        def inline(args):
            gm = torch.export.export(M(), args).module()
            so = torch._inductor.aot_compile(gm, args)
            return torch._export.aot_load(so, "cpu")
        def rebound(args):
            ep = torch.export.export(M(), args)
            gm = ep.module()
            ep = None
            so = torch._inductor.aot_compile(gm, args)
            return torch._export.aot_load(so, "cpu")
    """})
    out = _diff(root)
    added = [line[1:].strip() for line in out.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["so = torch._inductor.aoti_compile_and_package(ep)", "return torch._inductor.aoti_load_package(so)",
                     "ep2 = torch.export.export(M(), args)", "gm = ep2.module()",
                     "so = torch._inductor.aoti_compile_and_package(ep2)", "return torch._inductor.aoti_load_package(so)"]
    # `ep` holds None at the compile: no program to compile, and re-exporting `gm` would lose its
    # dims. Placed in the file as it is, not in the fixed text the diff shows (a line longer)
    assert "run.py:15:10: AOTI001 not fixed: no automatic fix: `gm` is the module of something this analysis" in out.stderr
    assert "run.py:16:12: AOTI002 not fixed: no automatic fix: `gm` is the module of something" in out.stderr


def test_a_result_unpacked_as_torch_2_1_returned_it_is_assigned_not_unpacked(tmp_path):
    """PyTorch issues' reproductions unpack `so, _ = torch._export.aot_compile(...)`: torch 2.1
    returned (path, ExportedProgram). aoti_compile_and_package returns the path alone (a str:
    unpacked it raises "too many values to unpack", as the old call does on torch 2.13)."""
    root = _project(tmp_path, {"run.py": """
        import torch
        so, _ = torch._export.aot_compile(M(), (torch.rand(1),))
        with torch.no_grad():
            so_path, exported = torch._export.aot_compile(M(), (torch.rand(1),))
        print(so, so_path, exported.graph)
        x = 1; path, program = torch._export.aot_compile(M(), (torch.rand(2),))
    """})
    out = _diff(root)
    added = [line[1:] for line in out.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["ep = torch.export.export(M(), (torch.rand(1),), strict=True)",
                     "so = torch._inductor.aoti_compile_and_package(ep)",
                     "    ep = torch.export.export(M(), (torch.rand(1),), strict=True)",
                     "    so_path = torch._inductor.aoti_compile_and_package(ep)",
                     "    exported = ep",
                     "x = 1; ep = torch.export.export(M(), (torch.rand(2),), strict=True); "
                     "path = torch._inductor.aoti_compile_and_package(ep); program = ep"]


def test_diff_places_what_it_leaves_unfixed_in_the_file_as_it_is(tmp_path):
    """--diff prints the fixed text and, on stderr, the findings it leaves: placed in the file on
    disk (the diff is not written), not in the fixed text (a migration above changes its bytes)."""
    root = _project(tmp_path, {"run.py": """
        import torch
        def build(args):
            ep = torch.export.export(M(), args)
            so = torch._inductor.aot_compile(ep.module(), args)
            return torch._export.aot_load(so, "cpu")
        def unknown(args):
            so = torch._inductor.aot_compile(gm, args)
            return torch._export.aot_load(so, "cpu")
    """})
    out = _diff(root)
    assert "+    so = torch._inductor.aoti_compile_and_package(ep)" in out.stdout
    left = [line.split(" not fixed")[0] for line in out.stderr.splitlines() if "not fixed" in line]
    assert left == ["run.py:7:10: AOTI001", "run.py:8:12: AOTI002"]  # where `--check` puts them


def test_a_graph_module_of_unknown_origin_is_offered_for_the_editor_with_the_reason(tmp_path):
    """The old call kept the dims a graph module holds (measured: the .module() of a dynamic
    export stays dynamic); re-exported without dynamic_shapes they become static. Faithful for a
    static graph module (tests/torch/projects/migration/graph_branches), so it is the user's call:
    offered in the editor, not applied by --fix, its title says why."""
    root = _project(tmp_path, {"run.py": """
        import torch
        path = torch._inductor.aot_compile(gm, args, options={"aot_inductor.output_path": "/tmp/g.so"})
        runner = torch._export.aot_load(path, "cpu")
    """})
    before = (root / "run.py").read_text()
    out = _diff(root)
    assert out.returncode == 1 and out.stdout == ""
    assert "AOTI001 not fixed: display-only fix, for the editor" in out.stderr, out.stderr
    assert (root / "run.py").read_text() == before
    fix = _fix_of(root, "run.py", "AOTI001")
    assert fix["applicability"] == "display-only"
    assert "re-exports the graph module `gm` at its example's shapes: where it holds dynamic dims (the .module() " \
           "of a dynamic export, a symbolic make_fx trace), which the old call kept, they become static" \
           in fix["message"], fix["message"]
    assert [e["content"] for e in fix["edits"]][:2] == ["ep = torch.export.export(gm, args, strict=True)\n",
                                                        "torch._inductor.aoti_compile_and_package(ep, package_path=\"/tmp/g.pt2\")"]


ALMA_EXPORT = """
    import torch
    from torch.export.exported_program import ExportedProgram
    def get_exported_model(model, data) -> ExportedProgram:
        return torch.export.export(model, (data,))
"""
ALMA_LOWER = """
    import torch
    from torch.export.exported_program import ExportedProgram
    from torch.fx.graph_module import GraphModule
    from .export import get_exported_model
    def forward_call(model, data, device):
        model = get_exported_model(model, data)
        return lowered(model, data, device)
    def lowered(model: ExportedProgram | GraphModule, data, device):
        if isinstance(model, ExportedProgram):
            so_path = torch._inductor.aot_compile(model.module(), (data,))
        else:
            so_path = torch._inductor.aot_compile(model, (data,))
        return torch._export.aot_load(so_path, device=device.type)
"""


def test_a_graph_module_branch_no_caller_reaches_is_migrated_with_the_rest(tmp_path):
    """saifhaq/alma: `lowered` re-exports a graph module in the `else` of `isinstance(model,
    ExportedProgram)`, and its one caller passes what a helper of another module annotated
    `-> ExportedProgram` returns: that branch never runs, so --fix migrates the three calls
    together (tests/torch/projects/migration/graph_branches_programs runs it)."""
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/export.py": ALMA_EXPORT, "pkg/aoti.py": ALMA_LOWER})
    for named in (".", "pkg/aoti.py"):  # the whole tree, and the file named from the root
        out = _diff(root, named)
        assert "+        so_path = torch._inductor.aoti_compile_and_package(model)" in out.stdout, out.stdout + out.stderr
        assert "+        ep = torch.export.export(model, (data,), strict=True)" in out.stdout
        assert "+    return torch._inductor.aoti_load_package(so_path)" in out.stdout
        assert "not fixed" not in out.stderr, out.stderr
    fix = _fix_of(root, "pkg/aoti.py", "AOTI002")
    assert fix["applicability"] == "unsafe"
    assert "the branch re-exporting `model` never runs: every caller of `lowered` (line 7) passes an ExportedProgram" \
        in fix["message"], fix["message"]


@pytest.mark.parametrize("change", [
    # another module calls it with a graph module: that branch runs
    ("pkg/other.py", "from pkg.aoti import lowered\nlowered(gm, x, d)\n"),
    # a caller here passes a graph module
    ("pkg/aoti.py", "def again(gm, x, d):\n    return lowered(gm.module(), x, d)\n"),
    # its name is read otherwise: passed on, called who knows how
    ("pkg/aoti.py", "HOOKS = [lowered]\n"),
    # the helper says nothing of what it returns
    ("pkg/export.py", None),
])
def test_a_graph_module_branch_some_caller_may_reach_stays_for_the_editor(tmp_path, change):
    rel, text = change
    files = {"pkg/__init__.py": "", "pkg/export.py": ALMA_EXPORT, "pkg/aoti.py": ALMA_LOWER}
    if text is None:
        files[rel] = ALMA_EXPORT.replace(" -> ExportedProgram", "")
    else:
        files[rel] = textwrap.dedent(files.get(rel, "")).lstrip() + text
    root = _project(tmp_path, files)
    out = _diff(root)
    assert out.stdout == "" and "AOTI001 not fixed: display-only fix, for the editor" in out.stderr, out.stdout + out.stderr
    assert "re-exports the graph module `model` at its example's shapes" in _fix_of(root, "pkg/aoti.py", "AOTI002")["message"]


def test_refusals_name_the_blocking_expression_and_place(tmp_path):
    root = _project(tmp_path, {
        "serve.py": "import sys, torch\nrunner = torch._export.aot_load(sys.argv[1], 'cpu')\n",
        "build.py": "import torch\nopts = {'aot_inductor.output_path': '/srv/m.so'}\n"
                    "so = torch._export.aot_compile(model, (x,), options=opts)\nprint(opts)\n"
                    "r = torch._export.aot_load(so, 'cpu')\n",
    })
    err = _diff(root).stderr
    assert ("serve.py:2:10: AOTI002 not fixed: display-only fix, for the editor: Migrate to "
            "torch._inductor.aoti_load_package (the path `sys.argv[1]` (serve.py:2) comes from the command line; "
            "what is given there must be a .pt2") in err
    assert "its options `opts` set aot_inductor.output_path and are also read at build.py:4" in err
    assert "None" not in err


def test_a_reader_outside_the_project_gets_an_editor_only_offer_that_says_so(tmp_path):
    root = _project(tmp_path, {"export_for_cpp.py": """
        import torch
        torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": "/models/ranker.so"})
    """})
    src = (root / "export_for_cpp.py").read_text()
    found = analyze(Source.from_text(src, str(root / "export_for_cpp.py")), Config()).findings
    fix = found[0].fix
    assert fix.applicability.value == "display-only"
    assert "nothing in the project loads" in fix.title and "C++ runner" in fix.title
    out = _diff(root)
    assert out.returncode == 1 and out.stdout == "" and "display-only fix, for the editor" in out.stderr


def test_many_loads_of_one_artifact_are_planned_once(monkeypatch):
    """400 loads of one shared path: the artifact is collected once, not once per load (issue 19)."""
    calls = []
    real = planmod._collect
    monkeypatch.setattr(planmod, "_collect", lambda *a: calls.append(1) or real(*a))
    lines = ["import torch", "P = 'out/m.so'",
             "so = torch._export.aot_compile(model, (x,), options={'aot_inductor.output_path': P})"]
    for i in range(400):
        lines += [f"def f{i}():", "    r = torch._export.aot_load(P, 'cpu')", "    return r(x)"]
    found = analyze(Source.from_text("\n".join(lines) + "\n", "/tmp/many.py"), Config()).findings
    assert sum(f.code == "AOTI002" and f.fix is not None for f in found) == 400
    assert len(calls) == 1


def test_a_so_named_by_a_makefile_is_read_outside_python(tmp_path):
    """The Python loader is not the only reader: a Makefile runs a C++ binary on the same .so."""
    root = _project(tmp_path, {
        "run.py": """
            import os, torch
            so = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": os.path.join(os.getcwd(), "export/model.so")})
            runner = torch._export.aot_load(f"export/model.so", "cpu")
        """,
        "Makefile": "run:\n\t./build/inference ${PWD}/export/model.so\n",
    })
    out = _diff(root)
    assert out.stdout == "" and out.returncode == 1
    assert "`model.so` is also named in Makefile:2: a program outside Python may read it" in out.stderr
    (root / "Makefile").unlink()
    out = _diff(root)
    assert "+runner = torch._inductor.aoti_load_package(f\"export/model.pt2\")" in out.stdout, out.stderr


def test_a_refusal_names_the_runner_that_loads_the_so_before_the_readme(tmp_path):
    """TaufeqRazakh/AOTInductor_Test: the README (first in the walk) mentions model.so, a shell
    script copies it, inference.cpp loads it: the refusal names the C++ source."""
    root = _project(tmp_path, {
        "model.py": """
            import os, torch
            so = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": os.path.join(os.getcwd(), "model.so")})
        """,
        "README.md": "Run `compile.sh`: it gives you `model.so`.\n",
        "infer.sh": "cp $src/model.so .\n./inference\n",
        "inference.cpp": "#include <string>\nint main() {\n  std::string so = \"model.so\";\n}\n",
    })
    out = _diff(root)
    assert out.stdout == "" and "`model.so` is also named in inference.cpp:3:" in out.stdout + out.stderr, out.stderr
    (root / "inference.cpp").unlink()
    assert "`model.so` is also named in infer.sh:1:" in _diff(root).stderr


SERVING_UTILS = """
    from pathlib import Path
    import torch

    def aot_compile(model_directory, name, fn, sample_args):
        path = Path(model_directory) / Path(f"{name}.pt2")
        exported = torch.export.export(fn, sample_args)
        return torch._inductor.aoti_compile_and_package(exported, package_path=str(path))

    def aot_load(path):
        return torch._export.aot_load(path, "cuda")
"""


def test_a_loader_helper_beside_a_package_writer_is_migrated(tmp_path):
    """pytorch/ao's sam2 server utilities (tests/realcode: ao-sam2-dead-load-helper): the old
    loader's path is a parameter nobody fills, and the file's only compile writes a .pt2, which the
    old loader cannot open. A human migrates it; so does --fix --unsafe-fixes, saying why."""
    root = _project(tmp_path, {"utils.py": SERVING_UTILS})
    fix = _fix_of(root, "utils.py", "AOTI002")
    assert fix["applicability"] == "unsafe"
    assert ("nothing calls `aot_load`, and this file writes only .pt2 packages (aoti_compile_and_package, line 7), "
            'which the old loader cannot open; drops device "cuda": a package loads on the device type it was '
            "compiled for") in fix["message"]
    out = _diff(root)
    assert "+    return torch._inductor.aoti_load_package(path)" in out.stdout, out.stderr
    assert "device_index" not in out.stdout and "not fixed" not in out.stderr


def test_a_loader_helper_with_a_caller_or_an_old_compile_stays_the_editors(tmp_path):
    """The twins: a caller in another module (what it passes decides), or an old compile beside it
    (its .so could be what the helper loads): an editor-only offer, as for a loader alone."""
    with_caller = _project(tmp_path / "caller", {"utils.py": SERVING_UTILS, "serve.py": """
        from utils import aot_load
        runner = aot_load("exported/model.so")
    """})
    old_compile = _project(tmp_path / "old", {"utils.py": SERVING_UTILS + """
    def legacy(model, args):
        return torch._export.aot_compile(model, args)
    """})
    for root in (with_caller, old_compile):
        fix = _fix_of(root, "utils.py", "AOTI002")
        assert fix["applicability"] == "display-only", (root, fix["message"])
        assert "nothing calls" not in fix["message"]
        assert "+    return torch._inductor.aoti_load_package(path)" not in _diff(root).stdout
    # analysed alone (no project: an editor without a folder), nothing says that no caller exists
    src = (with_caller / "utils.py").read_text()
    fix = next(f.fix for f in analyze(Source.from_text(src, "utils.py"), Config()).findings if f.code == "AOTI002")
    assert fix.applicability.value == "display-only"


def test_a_loader_helper_that_qualifies_once_its_file_is_migrated_is_migrated_in_the_same_run(tmp_path):
    """fixtures/AOTI002/migrate.in.py: its old compile keeps the helper `f` back in the first pass;
    once that compile writes a .pt2, the helper loads only packages, so the same --fix migrates it
    (dropping "cpu", as its title says): one run, and a second one changes nothing."""
    fixture = Path(__file__).parent / "fixtures" / "AOTI002" / "migrate.in.py"
    root = _project(tmp_path, {"m.py": fixture.read_text()})
    fix = [sys.executable, "-m", "aoti_lsp", "--check", "--no-cache", "--fix", "--unsafe-fixes", "."]
    first = subprocess.run(fix, cwd=root, capture_output=True, text=True, timeout=120)
    migrated = (root / "m.py").read_text()
    assert "aot_load" not in migrated and "torch._inductor.aoti_load_package(p)" in migrated, first.stderr
    again = subprocess.run(fix, cwd=root, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and (root / "m.py").read_text() == migrated, again.stdout + again.stderr


def _fix_of(root: Path, rel: str, code: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "aoti_lsp", "--check", "--no-cache", "--output-format", "json", rel],
                         cwd=root, capture_output=True, text=True, timeout=120)
    return next(f["fix"] for f in json.loads(out.stdout) if f["code"] == code)


def test_a_loader_alone_is_offered_in_the_editor_with_what_its_producer_must_do(tmp_path):
    root = _project(tmp_path, {"utils.py": """
        import torch
        def aot_load(path):
            return torch._export.aot_load(path, "cuda")
    """})
    src = (root / "utils.py").read_text()
    fix = analyze(Source.from_text(src, str(root / "utils.py")), Config()).findings[0].fix
    assert fix.applicability.value == "display-only"
    assert "no compile of the project writes it: what it names must become a .pt2" in fix.title
    assert [e.text for e in fix.edits] == ["torch._inductor.aoti_load_package(path)"]


def test_the_private_temporary_folder_spelt_twice_is_one_artifact(tmp_path):
    root = _project(tmp_path, {"test_q.py": """
        import tempfile, torch
        def test_export():
            with tempfile.TemporaryDirectory() as tmpdirname:
                torch._export.aot_compile(model, (t,), options={"aot_inductor.output_path": f"{tmpdirname}/model.so"})
                fn = torch._export.aot_load(f"{tmpdirname}/model.so", "cpu")
    """})
    out = _diff(root)
    assert out.stdout.count('f"{tmpdirname}/model.pt2"') == 2, out.stdout + out.stderr
    assert "+        fn = torch._inductor.aoti_load_package(f\"{tmpdirname}/model.pt2\")" in out.stdout


def test_a_helper_returns_the_so_path_to_a_caller_in_another_module(tmp_path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/build.py": """
            import torch
            def build(model, x):
                so_path = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": "artifacts/m.so"})
                return so_path
        """,
        "main.py": """
            import torch
            from pkg.build import build
            so = build(model, x)
            runner = torch._export.aot_load(so, "cpu")
        """,
    })
    for named in ((), ("main.py",), ("pkg/build.py",)):
        out = _diff(root, *named)
        assert 'package_path="artifacts/m.pt2")' in out.stdout, (named, out.stderr)
        assert "+runner = torch._inductor.aoti_load_package(so)" in out.stdout
        assert "not fixed" not in out.stderr
    # a caller that only prints it: the return leads to code no loader of the project reads
    (root / "main.py").write_text("from pkg.build import build\nprint(build(model, x))\n")
    out = _diff(root)
    assert out.stdout == "" and "nothing in the project loads" in out.stderr, out.stderr


def test_a_parameter_every_caller_fills_with_a_private_folder_is_private(tmp_path):
    build = """
        import os, torch
        def compile_model(model, example, out_dir):
            options = {"aot_inductor.output_path": os.path.join(out_dir, "mlp.so"), "max_autotune": False}
            return torch._export.aot_compile(model, (example,), options=options)
    """
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/build.py": build,
        "main.py": """
            import tempfile, torch
            from pkg.build import compile_model
            so_path = compile_model(model, x, tempfile.mkdtemp())
            runner = torch._export.aot_load(so_path, "cpu")
        """,
    })
    out = _diff(root)
    assert 'package_path=os.path.join(out_dir, "mlp.pt2"), inductor_configs=options)' in out.stdout, out.stderr
    # one more caller that passes a folder of its own: another program may read it there
    (root / "tool.py").write_text("from pkg.build import compile_model\ncompile_model(model, x, '/srv/models')\n")
    out = _diff(root)
    assert out.stdout == "" and "known only at run time" in out.stderr, out.stderr


CACHE_BUILDS = {
    # the stem known at run time, the `.so` spelt: an f-string's ending (nfdi-demonstrator's cache)
    "fstring": ("""
        import os, torch
        def build(model, x, name, device):
            path = os.path.join("cache", f"{name}_{device}.so")
            so = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": path})
            return torch._export.aot_load(so, device)
    """, 'path = os.path.join("cache", f"{name}_{device}.pt2")'),
    # a pathlib folder joined with a literal name, given as str() (inference-benchmarks)
    "pathlib": ("""
        import torch
        def build(model, x, out, device):
            output = out / "net.so"
            so = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": str(output)})
            return torch._export.aot_load(so, device)
    """, 'output = out / "net.pt2"'),
    # the path's name rebound to the compile's result: the read in the call sees the path
    "rebound": ("""
        import os, torch
        def build(model, x, device):
            so_path = os.path.join("models", "net.so")
            so_path = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": so_path})
            return torch._export.aot_load(so_path, device)
    """, 'so_path = os.path.join("models", "net.pt2")'),
    # the result given to the loader as str(): the same file
    "str": ("""
        import os, torch
        def build(model, x, name, device):
            path = os.path.join("cache", f"{name}.so")
            so = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": path})
            return torch._export.aot_load(str(so), device)
    """, 'path = os.path.join("cache", f"{name}.pt2")'),
}


@pytest.mark.parametrize("shape", list(CACHE_BUILDS))
def test_a_cache_the_same_code_writes_and_loads_is_migrated_with_its_so_ending(tmp_path, shape):
    """The helper's sweep (stop 41): compile to a cache path and load it in the same function, the
    path's `.so` spelt in this file. aoti_compile_and_package refuses a path that does not end in
    .pt2, so the ending is renamed; the loader is the compile's own: --fix applies it (before: for
    the editor only, and without the rename, an edit that raised when it ran)."""
    text, renamed = CACHE_BUILDS[shape]
    root = _project(tmp_path, {"build.py": text})
    out = _diff(root)
    assert "+    " + renamed in out.stdout, out.stdout + out.stderr
    assert "torch._inductor.aoti_load_package(" in out.stdout and "not fixed" not in out.stderr, out.stderr
    fix = _fix_of(root, "build.py", "AOTI001")
    assert fix["applicability"] == "unsafe", fix["message"]
    if shape != "rebound":  # a path known when read: its plan is the artifact's, as any static path's
        assert "it ends in .pt2 now, and this program loads what it writes" in fix["message"], fix["message"]


@pytest.mark.parametrize("shape, change, extra, why", [
    # the build also reads the .so it wrote (its size, the files beside it: geoeo/depthsplat)
    ("fstring", ("    return torch._export.aot_load(so, device)",
                 "    print(os.path.getsize(so))\n    return torch._export.aot_load(so, device)"), {},
     "also read by `os.path.getsize(so)` (build.py:5)"),
    # a file of the project outside Python names it: another program reads it
    ("pathlib", ("", ""), {"Makefile": "serve:\n\t./server models/net.so\n"},
     "known only at run time: it must end in .pt2, and any program outside the project"),
])
def test_a_cache_build_that_hands_its_so_to_more_than_its_loader_stays_for_the_editor(tmp_path, shape, change,
                                                                                       extra, why):
    _editor_only(tmp_path, "build.py", CACHE_BUILDS[shape][0], change, extra, why)


def _editor_only(tmp_path, name, text, change, extra, why):
    """`text` changed by `change` (old, new), with `extra` files beside it: offered for the editor
    only, its title naming `why`."""
    text = textwrap.dedent(text).lstrip()
    assert change[0] in text
    root = _project(tmp_path, {name: text.replace(*change), **extra})
    out = _diff(root)
    assert out.stdout == "" and "display-only fix, for the editor" in out.stderr, out.stdout + out.stderr
    assert why in _fix_of(root, name, "AOTI001")["message"]


def test_a_cache_build_returning_its_path_to_another_file_is_not_migrated(tmp_path):
    """It loads what it wrote and also returns the path to a caller in another file: what that
    caller does with it is not read here (a return to this file's callers only is followed)."""
    text = textwrap.dedent(CACHE_BUILDS["fstring"][0]).lstrip().replace(
        "    return torch._export.aot_load(so, device)", "    runner = torch._export.aot_load(so, device)\n    return so")
    root = _project(tmp_path, {"build.py": text, "serve.py": "from build import build\nso = build(m, x, 'n', 'cpu')\n"})
    out = _diff(root)
    assert out.stdout == "" and "returned by `build` (build.py:6) to code this analysis cannot follow" in out.stderr, \
        out.stdout + out.stderr

def test_a_cache_build_whose_loader_is_a_caller_stays_for_the_editor(tmp_path):
    """The helper returns the path and its caller loads it: another caller may keep it for another
    program (test_a_parameter_every_caller_fills_with_a_private_folder_is_private for the private
    folder that makes it safe)."""
    root = _project(tmp_path, {"build.py": """
        import os, torch
        def build(model, x, name):
            path = os.path.join("cache", f"{name}.so")
            return torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": path})
        runner = torch._export.aot_load(build(model, x, "net"), "cpu")
    """})
    out = _diff(root)
    assert out.stdout == "" and "display-only fix, for the editor" in out.stderr, out.stdout + out.stderr
    fix = _fix_of(root, "build.py", "AOTI001")
    renamed = [e for e in fix["edits"] if e["content"] == ".pt2"]  # the editor's edit renames the ending too
    assert [(e["location"]["row"], e["location"]["column"]) for e in renamed] == [(3, 42)], fix["edits"]



# inference-benchmarks' runtime: the caller builds the cache's path and probes it; a helper given
# that path compiles into it under try/finally and logs where it wrote; the loader after the
# probe's if/else reads either branch's value, both the same file
CACHE_HELPER = """
    import logging
    from pathlib import Path
    import torch
    L = logging.getLogger(__name__)
    CACHE = Path("/tmp/aot_cache")
    class Runtime:
        def init(self, name: str, device: str):
            cache_path = CACHE / f"{name}_{device}.so"
            if cache_path.exists():
                so_path = str(cache_path)
            else:
                so_path = _compile_and_cache(name, cache_path, device)
            return torch._export.aot_load(so_path, device)
    def _compile_and_cache(name: str, cache_path: Path, device: str) -> str:
        x = torch.zeros(2, 8, device=device)
        try:
            ep = torch.export.export(make(name), (x,))
            gm = ep.module()
            so_path = torch._inductor.aot_compile(gm, (x,), options={"aot_inductor.output_path": str(cache_path)})
        finally:
            restore()
        L.info("cache.saved", path=so_path)
        return so_path
"""


def test_a_cache_a_helper_fills_for_its_one_caller_is_migrated(tmp_path):
    """Its one caller passes the path and loads what the probe or the helper gives: the `.so` the
    caller spells is renamed, the helper compiles the program (never ep.module()), the loader
    follows. Another file defining a function of the same name (runtimes/torch_tensorrt's own
    `_compile_and_cache`) is not a caller. Before: both refused ('nothing in the project writes it')."""
    root = _project(tmp_path, {"rt.py": CACHE_HELPER, "other.py": """
        def _compile_and_cache(name, cache_path):
            return name
        x = _compile_and_cache("a", "b")
    """})
    out = _diff(root)
    assert '+        cache_path = CACHE / f"{name}_{device}.pt2"' in out.stdout, out.stdout + out.stderr
    assert "torch._inductor.aoti_load_package(so_path" in out.stdout and "not fixed" not in out.stderr, out.stderr
    assert "aoti_compile_and_package(ep, package_path=str(cache_path))" in out.stdout, out.stdout
    for code in ("AOTI001", "AOTI002"):
        fix = _fix_of(root, "rt.py", code)
        assert fix["applicability"] == "unsafe" and "this program loads what it writes" in fix["message"], fix


@pytest.mark.parametrize("change, extra, why", [
    # a second caller: it may keep the .so for another program
    (("    return so_path\n", "    return so_path\n_compile_and_cache('b', Path('b.so'), 'cpu')\n"), {},
     "known only at run time: it must end in .pt2"),
    # another file imports the helper: a caller this plan does not see
    (("", ""), {"serve.py": "from rt import _compile_and_cache\n_compile_and_cache('a', 'a.so', 'cpu')\n"},
     "known only at run time: it must end in .pt2"),
    # printed, not logged: a build script prints where the .so is for another program
    (('L.info("cache.saved", path=so_path)', "print(so_path)"), {}, "also read by `print(so_path)`"),
])
def test_a_cache_helper_whose_so_may_reach_more_than_its_caller_stays_for_the_editor(tmp_path, change, extra, why):
    _editor_only(tmp_path, "rt.py", CACHE_HELPER, change, extra, why)


def test_files_aoti_wrote_beside_an_artifact_are_not_its_readers(tmp_path):
    """The old aot_compile writes `<hash>.wrapper.cpp` (naming the .so) into the output folder."""
    root = _project(tmp_path, {"run.py": """
        import os, torch
        so = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": os.path.abspath("artifacts/m.so")})
        runner = torch._export.aot_load(so, "cpu")
    """})
    (root / "artifacts").mkdir()
    (root / "artifacts" / "c5x.wrapper.cpp").write_text('// loads "m.so"\n')
    (root / "artifacts" / "m.so").write_bytes(b"\x7fELF")
    (root / "gen").mkdir()
    (root / "gen" / "c5x.wrapper.cpp").write_text('// loads "m.so"\n')
    out = _diff(root)
    assert 'package_path=os.path.abspath("artifacts/m.pt2")' in out.stdout, out.stderr


# The official AOTInductor Python-runtime tutorial's shape: an options dict holding only the output
# path, with other inductor keys added later in a branch (`.update({...})` or `opts["k"] = v`).
TUTORIAL = """
    import os
    import torch
    class Net(torch.nn.Module):
        def forward(self, x):
            return x * 2
    with torch.inference_mode():
        opts = {
            "aot_inductor.output_path": os.path.join(os.getcwd(), "net.so"),
        }
        if torch.cuda.is_available():
            device = "cuda"
            opts.update({"max_autotune": True})
        else:
            device = "cpu"
            opts["epilogue_fusion"] = False
        x = torch.randn(4, 8, device=device)
        ep = torch.export.export(Net().to(device), (x,), dynamic_shapes={"x": {0: torch.export.Dim("b", min=2, max=32)}})
        so = torch._inductor.aot_compile(ep.module(), (x,), options=opts)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    runner = torch._export.aot_load(os.path.join(os.getcwd(), "net.so"), device)
"""


def test_options_given_more_keys_later_keep_them_for_inductor_configs(tmp_path):
    root = _project(tmp_path, {"tutorial.py": TUTORIAL})
    out = _diff(root)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "not fixed" not in out.stderr, out.stderr
    added = [line[1:].strip() for line in out.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")]
    removed = [line[1:].strip() for line in out.stdout.splitlines() if line.startswith("-") and not line.startswith("---")]
    # the entry leaves the dict, whose statement and later writes stay; the dict is what configures inductor
    assert removed[0] == '"aot_inductor.output_path": os.path.join(os.getcwd(), "net.so"),', out.stdout
    assert "opts = {" not in removed and 'opts.update({"max_autotune": True})' not in removed
    assert ('so = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(os.getcwd(), "net.pt2"), '
            'inductor_configs=opts)') in added  # the exported program itself: its dynamic batch is kept
    assert 'runner = torch._inductor.aoti_load_package(os.path.join(os.getcwd(), "net.pt2"))' in added


def test_options_whose_later_writes_are_unknown_or_touch_the_path_are_refused_with_the_write(tmp_path):
    cases = {
        "opts.update(extra)": "its options `opts` set aot_inductor.output_path and are also read at tutorial.py:",
        "opts.update(**extra)": "its options `opts` set aot_inductor.output_path and are also read at tutorial.py:",
        'opts.update({"aot_inductor.output_path": "/srv/other.so"})':
            "its options `opts` set aot_inductor.output_path again at tutorial.py:",
        'opts["aot_inductor.package"] = True': "its options `opts` set aot_inductor.package at tutorial.py:",
        "print(opts)": "its options `opts` set aot_inductor.output_path and are also read at tutorial.py:",
    }
    for k, (write, why) in enumerate(cases.items()):
        root = _project(tmp_path / str(k), {"tutorial.py": TUTORIAL.replace('opts["epilogue_fusion"] = False', write)})
        before = (root / "tutorial.py").read_text()
        out = _diff(root)
        assert out.returncode == 1 and out.stdout == "", (write, out.stdout)
        assert why in out.stderr, (write, out.stderr)
        assert (root / "tutorial.py").read_text() == before


def test_a_loader_spelling_the_path_inline_loads_the_package_the_compile_writes(tmp_path):
    """`aot_load(os.path.join(d, "net.so"), ...)` beside a compile writing the same path: the
    loader's own rewrite renames its `.so` too (before, it kept "net.so": the migrated program
    loaded a file that no longer exists, and the next check said AOTI003)."""
    root = _project(tmp_path, {"run.py": """
        import os
        import torch
        class Net(torch.nn.Module):
            def forward(self, x):
                return x * 2
        x = torch.randn(4, 8)
        ep = torch.export.export(Net(), (x,), dynamic_shapes={"x": {0: torch.export.Dim("b", min=2, max=32)}})
        so = torch._inductor.aot_compile(ep.module(), (x,), options={"aot_inductor.output_path": os.path.join(os.getcwd(), "net.so")})
        runner = torch._export.aot_load(os.path.join(os.getcwd(), "net.so"), "cpu")
    """})
    out = _diff(root)
    assert out.returncode == 1 and "not fixed" not in out.stderr, out.stderr
    assert '+runner = torch._inductor.aoti_load_package(os.path.join(os.getcwd(), "net.pt2"))' in out.stdout
    fixed = subprocess.run([sys.executable, "-m", "aoti_lsp", "--check", "--no-cache", "--fix", "--unsafe-fixes", "."],
                           cwd=root, capture_output=True, text=True, timeout=120)
    assert fixed.returncode == 0 and "0 remaining" in fixed.stderr, fixed.stdout + fixed.stderr
    again = subprocess.run([sys.executable, "-m", "aoti_lsp", "--check", "--no-cache", "."], cwd=root,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "All checks passed!" in again.stderr, again.stdout + again.stderr
    assert ".so" not in (root / "run.py").read_text()


ANNOTATED = """
    import torch
    from torch.export import ExportedProgram
    def forward_of(model: ExportedProgram, data: torch.Tensor):
        with torch.no_grad():
            so_path = torch._inductor.aot_compile(model.module(), (data,))
        return torch._export.aot_load(so_path, device="cuda")
"""


def test_a_parameter_annotated_as_an_exported_program_is_compiled_itself(tmp_path):
    root = _project(tmp_path, {"bench.py": ANNOTATED})
    out = _diff(root)
    assert out.returncode == 1 and "not fixed" not in out.stderr, out.stderr
    assert "+        so_path = torch._inductor.aoti_compile_and_package(model)" in out.stdout
    assert "export(" not in "".join(l for l in out.stdout.splitlines() if l.startswith("+"))  # never re-exported


def test_a_parameter_that_may_not_be_an_exported_program_is_refused(tmp_path):
    twins = {
        "Optional": ANNOTATED.replace("model: ExportedProgram", "model: Optional[ExportedProgram]"),
        "string": ANNOTATED.replace("model: ExportedProgram", 'model: "ExportedProgram"'),
        "unannotated": ANNOTATED.replace("model: ExportedProgram", "model"),
        "rebound": ANNOTATED.replace("    with torch.no_grad():", "    model = wrap(model)\n        with torch.no_grad():"),
        "another class": ANNOTATED.replace("from torch.export import ExportedProgram",
                                           "from mylib import ExportedProgram"),
    }
    for k, (what, text) in enumerate(twins.items()):
        root = _project(tmp_path / str(k), {"bench.py": text})
        out = _diff(root)
        assert out.returncode == 1 and out.stdout == "", (what, out.stdout)
        assert "`model.module()` is the module of something this analysis cannot tell is an ExportedProgram" in out.stderr, \
            (what, out.stderr)


def test_a_path_table_whose_entry_is_overwritten_is_not_taken_for_an_options_dict(tmp_path):
    """Writing a key of a dict constant that holds the path is harmless only for an options dict
    (its other keys): `PATHS["m"] = "other.so"` overwrites what the loader reads."""
    root = _project(tmp_path, {"run.py": """
        import torch
        PATHS = {"m": "/srv/m.so"}
        so = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": PATHS["m"]})
        PATHS["m"] = "/srv/other.so"
        runner = torch._export.aot_load(PATHS["m"], "cpu")
    """})
    out = _diff(root)
    assert out.returncode == 1 and out.stdout == "", out.stdout
    assert "not fixed" in out.stderr, out.stderr


# A compile returns a path; its folder and its stem name the same files after the migration
# (measured on torch 2.13: without package_path the new call writes `<h>.wrapper.pt2` into an
# inductor folder that also holds `<h>.wrapper.so` and `<h>.wrapper.cpp`; `splitext(p)[0]` is the
# same for `.so` and `.pt2`: tests/torch/projects/migration/returned_folder runs it). What still
# uses the path as the .so itself is refused, and said.
RETURNED = """
    import os, shutil
    import torch
    def build(model, dummy):
        exported = torch.export.export(model, (dummy,))
        so_path = torch._inductor.aot_compile(exported.module(), (dummy,))
        print(f"{so_path}: {os.path.getsize(so_path)} bytes", os.path.exists(so_path))
        runner = torch._export.aot_load(so_path, device="cuda")
        USE
        return runner(dummy)
"""


def test_the_returned_path_used_as_the_old_output_is_refused_and_named(tmp_path):
    uses = {
        'shutil.copy(so_path, "/srv/models/model.so")':
            '`shutil.copy(so_path, "/srv/models/model.so")` (build.py:9) copies or moves the .so elsewhere',
        'ext = os.path.splitext(so_path)[1]': "`os.path.splitext(so_path)` (build.py:9) reads its extension apart",
        'lib = ctypes.CDLL(so_path)': "loads it as a shared library",
        'cpp = so_path.replace(".so", ".cpp")': "takes the path apart as a string",
    }
    for k, (use, why) in enumerate(uses.items()):
        text = RETURNED.replace("USE", use).replace("import os, shutil", "import ctypes, os, shutil")
        root = _project(tmp_path / str(k), {"build.py": text})
        out = _diff(root)
        assert out.returncode == 1 and out.stdout == "", (use, out.stdout)
        assert "its result is also used as the old .so: " + why.split(" (")[0] in out.stderr or why in out.stderr, \
            (use, out.stderr)


def test_the_returned_paths_folder_and_stem_migrate(tmp_path):
    """remaster's copy of the compile's folder, and the C++ source read beside it, name the
    same files once the compile writes a package: migrated, nothing refused."""
    uses = ['for f in os.listdir(os.path.dirname(so_path)): shutil.copy2(os.path.join(os.path.dirname(so_path), f), "/mnt")',
            'cpp = open(os.path.splitext(so_path)[0] + ".cpp").read()',
            'folder, name = os.path.split(so_path)']
    for k, use in enumerate(uses):
        root = _project(tmp_path / str(k), {"build.py": RETURNED.replace("USE", use)})
        out = _diff(root)
        assert out.returncode == 1 and "not fixed" not in out.stderr, (use, out.stderr)
        assert "aoti_compile_and_package(exported" in out.stdout and "aoti_load_package(so_path" in out.stdout, \
            (use, out.stdout)


def test_the_returned_path_only_named_sized_and_loaded_migrates(tmp_path):
    root = _project(tmp_path, {"build.py": RETURNED.replace("USE", "pass")})
    out = _diff(root)
    assert out.returncode == 1 and "not fixed" not in out.stderr, out.stderr
    assert "+    so_path = torch._inductor.aoti_compile_and_package(exported)" in out.stdout
    assert "+    runner = torch._inductor.aoti_load_package(so_path)" in out.stdout


# `so` holds the compile's .so on some runs only (a script that compiles unless given a .so):
# the loader reads a merge of branches, which single assignments do not follow. Migrating the
# compile alone gave the old loader a .pt2 (`invalid ELF header`: aoti-facts.md).
CACHED_OR_COMPILED = """
    import sys
    import torch
    from torch.export import Dim, export

    def main():
        so_path = FIRST
        if so_path is None:
            model = torch.nn.Linear(4, 4).eval()
            x = torch.randn(2, 4)
            exported = export(model, (x,), dynamic_shapes=({0: Dim("b", min=1, max=64)},))
            so_path = torch._inductor.aot_compile(exported.module(), (x,))
        runner = torch._export.aot_load(so_path, "cpu")
        return runner(torch.randn(3, 4))
"""


def test_a_loader_the_compile_reaches_on_some_runs_changes_with_it(tmp_path):
    root = _project(tmp_path, {"run.py": CACHED_OR_COMPILED.replace("FIRST", "None")})
    out = _diff(root)
    assert out.returncode == 1 and "not fixed" not in out.stderr, out.stderr
    assert "+        so_path = torch._inductor.aoti_compile_and_package(exported)" in out.stdout
    assert "+    runner = torch._inductor.aoti_load_package(so_path)" in out.stdout


def test_a_loader_that_may_also_load_a_given_path_takes_the_compile_to_the_editor(tmp_path):
    text = CACHED_OR_COMPILED.replace("FIRST", "sys.argv[1] if len(sys.argv) > 1 else None")
    root = _project(tmp_path, {"run.py": text})
    out = _diff(root)
    assert out.returncode == 1 and out.stdout == "", out.stdout  # --fix leaves both
    for code in ("AOTI001", "AOTI002"):  # one plan, offered from either call
        fix = _fix_of(root, "run.py", code)
        assert fix["applicability"] == "display-only"
        assert "`so_path` (run.py:12) may also hold `sys.argv[1]` (run.py:6)" in fix["message"], fix["message"]
        assert [e["content"] for e in fix["edits"]] == ["torch._inductor.aoti_compile_and_package(exported)",
                                                         "torch._inductor.aoti_load_package(so_path)"]


def test_a_loader_two_old_compiles_reach_migrates_with_both(tmp_path):
    """saifhaq/alma: `if ...: so = aot_compile(a) else: so = aot_compile(b)`, one loader: the
    three migrate together (each compile's own rewrite, one loader)."""
    root = _project(tmp_path, {"run.py": """
        import torch
        def main(big, x):
            if big:
                so = torch._export.aot_compile(torch.nn.Linear(4, 4), (x,))
            else:
                so = torch._export.aot_compile(torch.nn.Linear(4, 4).half(), (x.half(),))
            return torch._export.aot_load(so, "cpu")(x)
    """})
    out = _diff(root)
    added = [line[1:].strip() for line in out.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["ep = torch.export.export(torch.nn.Linear(4, 4), (x,), strict=True)",
                     "so = torch._inductor.aoti_compile_and_package(ep)",
                     "ep = torch.export.export(torch.nn.Linear(4, 4).half(), (x.half(),), strict=True)",
                     "so = torch._inductor.aoti_compile_and_package(ep)",
                     "return torch._inductor.aoti_load_package(so)(x)"], out.stdout + out.stderr
    assert "not fixed" not in out.stderr, out.stderr


# -- `aot_inductor.package` set: the old call returns the package's files (a list) ---------------
PACKAGE_FLAG = MODEL + """
    import os, tempfile
    from torch._inductor.package import package_aoti, load_package
    def build(folder, x):
        files = torch._export.aot_compile(Net(), (x,), options={{"aot_inductor.package": True}})
{use}
"""


def _flagged(tmp_path, use: str) -> subprocess.CompletedProcess:
    body = textwrap.indent(textwrap.dedent(use).strip("\n"), " " * 8)
    return _diff(_project(tmp_path, {"build.py": PACKAGE_FLAG.format(use=body)}))


def test_package_aoti_of_the_files_is_absorbed(tmp_path):
    """`path = package_aoti(dst, files)`: the new call writes dst itself (package_path=) and
    package_aoti, which raises on the new call's str (measured: `Expected aoti_files to be a dict`),
    is gone. Real torch at four batch sizes: tests/torch/projects/migration/package_files."""
    res = _flagged(tmp_path, """
        path = package_aoti(os.path.join(folder, "m.pt2"), files)
        return load_package(path)
    """)
    added = [line[1:].strip() for line in res.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert 'path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(folder, "m.pt2"))' in added
    assert not any("package_aoti" in line for line in added) and "-    path = package_aoti(" in res.stdout


@pytest.mark.parametrize("use, named", [
    ("so = [p for p in files if p.endswith('.so')][0]\nreturn so", "so = [p for p in files if p.endswith('.so')][0]"),
    ("upload(files)", "upload(files)"),
    ("print(files)\npath = package_aoti(os.path.join(folder, 'm.pt2'), files)", "print(files)"),  # read twice
    ("folder = make_folder()\npath = package_aoti(os.path.join(folder, 'm.pt2'), files)", "path = package_aoti("),  # dst moves
    ("for d in ('a', 'b'):\n    package_aoti(os.path.join(d, 'm.pt2'), files)",
     "package_aoti(os.path.join(d, 'm.pt2'), files)"),  # a block that runs twice
    ("net = Net()\nnet.load_state_dict(torch.load('w.pt'))\nwith tempfile.TemporaryDirectory() as d:\n"
     "    package_aoti(os.path.join(d, 'm.pt2'), files)", "package_aoti(os.path.join(d, 'm.pt2'), files)"),
])
def test_other_reads_of_the_files_are_refused_and_named(tmp_path, use, named):
    res = _flagged(tmp_path, use)
    assert "aot_compile" not in "".join(l for l in res.stdout.splitlines() if l.startswith("-")), res.stdout
    assert "it sets aot_inductor.package: the old call returns the package's files (a list)" in res.stderr + res.stdout
    assert f"`{named}" in res.stderr + res.stdout, res.stderr + res.stdout
    if named.startswith("path = package_aoti"):  # what would let it migrate
        assert "is bound after the compile: bind it before, and the migration passes it as package_path=" in res.stderr
    if use.startswith("for d"):
        assert "it may not run once after the compile (a loop or a branch between)" in res.stderr, res.stderr
    if "load_state_dict" in use:  # what it names: the first statement between that may change the model
        assert "`net = Net()` (build.py:" in res.stderr and "may change what the compile reads" in res.stderr, res.stderr


EXECUTORCH_SHAPE = MODEL + """
    import os, tempfile
    from torch._inductor.package import package_aoti, load_package
    def build(x, ds):
        with torch.no_grad():
            so = torch._export.aot_compile(
                Net(),
                args=(x,),
                options={{"aot_inductor.package": True, "reorder_for_peak_memory": False}},
                dynamic_shapes=ds,
            )
        {between}
        with tempfile.TemporaryDirectory() as tempdir:
            path = package_aoti(os.path.join(tempdir, "m.pt2"), so)
            return load_package(path)(x)
"""


@pytest.mark.parametrize("between", ["", "# a comment", "print('packaging')", "folder = os.path.join('a', 'b')"])
def test_package_aoti_in_a_with_body_after_the_compile_takes_the_compile(tmp_path, between):
    """ExecuTorch's tests package the files in a `with tempfile.TemporaryDirectory()` body after
    the compile: the export stays where the compile was, the compile moves to package_aoti's
    place and writes its path; package_aoti's import goes. Real torch at four batch sizes:
    tests/torch/projects/migration/package_in_with."""
    res = _diff(_project(tmp_path, {"build.py": EXECUTORCH_SHAPE.format(between=between)}))
    new = "".join(line[1:] + "\n" for line in res.stdout.splitlines() if line[:1] in (" ", "+") and not line.startswith("+++"))
    assert "package_aoti" not in new and "aot_compile" not in new, res.stdout + res.stderr
    assert new.index("ep = torch.export.export(") < new.index("with tempfile.TemporaryDirectory() as tempdir:") \
        < new.index("path = torch._inductor.aoti_compile_and_package(")
    assert 'package_path=os.path.join(tempdir, "m.pt2")' in new and '"reorder_for_peak_memory": False' in new
    assert "from torch._inductor.package import load_package\n" in new


def test_package_aoti_after_a_private_folder_is_made_takes_the_compile(tmp_path):
    res = _flagged(tmp_path, "d = tempfile.mkdtemp()\npath = package_aoti(os.path.join(d, 'm.pt2'), files)\nreturn load_package(path)")
    new = "".join(line[1:] + "\n" for line in res.stdout.splitlines() if line[:1] in (" ", "+") and not line.startswith("+++"))
    assert new.index("ep = torch.export.export(") < new.index("d = tempfile.mkdtemp()") \
        < new.index("path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(d, 'm.pt2'))"), res.stdout


def test_options_rebound_before_package_aoti_keep_the_compile_in_place(tmp_path):
    """The moved compile would read `opts` as rebound: refused, the compile is not moved."""
    res = _flagged(tmp_path, "d = tempfile.mkdtemp()\npath = package_aoti(os.path.join(d, 'm.pt2'), files)")
    assert "aoti_compile_and_package" in res.stdout  # the twin below differs only in `opts`
    text = PACKAGE_FLAG.replace('options={{"aot_inductor.package": True}}', 'options={{"aot_inductor.package": True, "max_autotune": opts}}')
    body = textwrap.indent("opts = False\nd = tempfile.mkdtemp()\npath = package_aoti(os.path.join(d, 'm.pt2'), files)", " " * 8)
    res = _diff(_project(tmp_path / "twin", {"build.py": text.replace("def build(folder, x):", "def build(folder, x, opts=True):").format(use=body)}))
    assert res.stdout == "", res.stdout
    assert "package_aoti(os.path.join(d, 'm.pt2'), files)" in res.stderr, res.stderr


@pytest.mark.parametrize("between", ["aoti_path = 'm.pt2'", "aoti_path = 'm.pt2'  # where it goes\n# a note",
                                     "folder = 'elsewhere'\naoti_path = os.path.join(folder, 'm.pt2')"])
def test_a_plain_binding_of_the_path_between_moves_above_the_compile(tmp_path, between):
    """ExecuTorch's test binds the package's path between the compile and package_aoti: that
    binding (a literal, nothing the compile reads) moves above the compile, which then writes it."""
    res = _flagged(tmp_path, between + "\npackage_aoti(aoti_path, files)")
    new = "".join(line[1:] + "\n" for line in res.stdout.splitlines() if line[:1] in (" ", "+") and not line.startswith("+++"))
    assert new.index(between.splitlines()[0]) < new.index("files = torch._inductor.aoti_compile_and_package(ep, package_path=aoti_path)"), res.stdout
    assert "package_aoti(aoti_path" not in new and new.count(between.splitlines()[0]) == 1


def test_a_binding_between_that_is_not_plain_is_not_moved(tmp_path):
    res = _flagged(tmp_path, "aoti_path = make_path()\npackage_aoti(aoti_path, files)")
    assert res.stdout == ""  # nothing migrated
    assert "its path `aoti_path` is bound after the compile" in res.stderr


def test_files_nobody_reads_migrate(tmp_path):
    res = _flagged(tmp_path, "return None")
    assert "+        torch._inductor.aoti_compile_and_package(ep)" in res.stdout or \
        "files = torch._inductor.aoti_compile_and_package(ep)" in res.stdout, res.stdout


@pytest.mark.parametrize("export_dims, migrated", [("", False), (", dynamic_shapes=ds", True), (", dynamic_shapes=None", False)])
def test_the_module_of_a_static_program_recompiled_with_dims_is_not_compiled_as_the_program(tmp_path, export_dims, migrated):
    """`aot_compile(ep.module(), args, dynamic_shapes=ds)` re-exports with `ds`: compiling `ep` is
    faithful only where ep's export gives dims too. Of a static `ep` (measured on torch 2.13) the old
    call raises `Constraints violated`, and the program's package runs a batch of 7 as 4, silently:
    refused, with what to do."""
    root = _project(tmp_path, {"build.py": MODEL + f"""
    from torch.export import Dim
    def build(x):
        ds = ({{0: Dim("b", min=2, max=64)}},)
        ep = torch.export.export(Net(), (x,){export_dims})
        so = torch._export.aot_compile(ep.module(), (x,), dynamic_shapes=ds)
        return torch._export.aot_load(so, "cpu")
    """})
    res = _diff(root)
    assert ("aoti_compile_and_package(ep)" in res.stdout) == migrated, res.stdout + res.stderr
    if not migrated:
        assert "re-exports `ep.module()` with dynamic_shapes that its export (build.py:" in res.stderr


def test_a_call_continued_with_a_backslash_is_migrated(tmp_path):
    """tree-sitter puts a `line_continuation` node among the arguments: read as a comment is, not
    as an argument (it made the rule fail, and the finding was lost)."""
    root = _project(tmp_path, {"run.py": 'import torch\nso = torch._export.aot_compile(model, \\\n    (x,))\n'
                                         'r = torch._export.aot_load(so, "cpu")\n'})
    out = _diff(root)
    assert "+so = torch._inductor.aoti_compile_and_package(" in out.stdout, out.stdout + out.stderr
    assert "failed" not in out.stderr, out.stderr


@pytest.mark.parametrize("trace, refused", [
    ('gm = make_fx(M(), tracing_mode="symbolic")(x)', True),
    ('wrapped = make_fx(step, tracing_mode="symbolic")\n        gm = wrapped(x)', True),
    ("gm = make_fx(M())(x)", False),  # a real trace: static, as its re-export
])
def test_a_symbolic_make_fx_trace_is_refused_a_static_one_offered(tmp_path, trace, refused):
    """HBTGen's issue 129719 and mlcolvar compile a make_fx(tracing_mode="symbolic") graph: its
    dims are symbolic and the old call kept them; a re-export would make them static."""
    root = _project(tmp_path, {"run.py": f"""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx
    def build(x):
        {trace}
        so = torch._inductor.aot_compile(gm, (x,))
        return torch._export.aot_load(so, "cpu")
    """})
    out = _diff(root)
    assert out.stdout == "", out.stdout
    symbolic = 'is a graph module traced by make_fx(tracing_mode="symbolic") (run.py:'
    assert (symbolic in out.stderr) == refused, out.stderr
    assert ("display-only fix, for the editor" in out.stderr) != refused, out.stderr


def test_a_so_a_private_runner_opens_is_not_renamed(tmp_path):
    """Intel's DLRM example writes its .so to a path known only at run time and opens it with
    torch._C._aoti.AOTIModelContainerRunnerCpu (a .so only): refused with that reader, not
    offered as a migration whose .pt2 that runner could not open."""
    root = _project(tmp_path, {"bench.py": """
        import os, time, torch
        def bench(model, example_inputs):
            tmp_dir = os.path.join(os.getcwd(), f"./aoti-model-{time.time()}")
            model_dir = f"{tmp_dir}/model.so"
            torch._export.aot_compile(model, example_inputs, options={"aot_inductor.output_path": model_dir})
            runner = torch._C._aoti.AOTIModelContainerRunnerCpu(model_dir, 1)
            return runner.get_call_spec()
    """})
    out = _diff(root)
    assert out.stdout == "", out.stdout
    assert "`torch._C._aoti.AOTIModelContainerRunnerCpu(model_dir, 1)` (bench.py:6) loads it as a shared library" \
        in out.stderr, out.stderr
    check = subprocess.run([sys.executable, "-m", "aoti_lsp", "--check", "--no-cache", "--output-format", "json", "."],
                           cwd=root, capture_output=True, text=True, timeout=120)
    assert [f["fix"] for f in json.loads(check.stdout) if f["code"] == "AOTI001"] == [None]  # nothing offered


@pytest.mark.parametrize("between, blocker", [
    ("list(gm.graph.nodes)[3].replace_all_uses_with(s)\n        gm.graph.eliminate_dead_code()",
     "`gm` is changed after `ep.module()` made it: `list(gm.graph.nodes)[3].replace_all_uses_with(s)` (run.py:6)"),
    ('gm.to("cuda")', '`gm` is changed after `ep.module()` made it: `gm.to("cuda")` (run.py:6)'),
    ("patch(gm)", "`gm` is changed after `ep.module()` made it: `patch(gm)` (run.py:6)"),
    ("g = gm.graph", "`gm` has a part bound to a name, which may change it, after `ep.module()` made it: `g = gm.graph`"),
    ("print(gm)\n        expected = gm(x)\n        n = len(gm.graph.nodes)\n        gm.print_readable()", None),
])
def test_a_module_changed_after_module_is_not_compiled_as_its_program(tmp_path, between, blocker):
    """torch-xpu-ops edits `ep.module()`'s graph by hand, then compiles the edited module: `ep`
    does not hold the edit (measured, tests/torch/test_migration.py), so compiling `ep` in its
    place would drop it. Reading, printing or running the module changes nothing."""
    root = _project(tmp_path, {"run.py": f"""
    import torch
    def build(model, x):
        ep = torch.export.export(model, (x,))
        gm = ep.module()
        s = 2
        {between}
        so = torch._inductor.aot_compile(gm, (x,))
        return torch._export.aot_load(so, "cpu")
    """})
    reasons = (blocker, "`ep` does not hold a change of its module, so it cannot be compiled in the module's place")
    _migrated_else_refused(_diff(root), *(reasons if blocker else ()))


def _migrated_else_refused(out: subprocess.CompletedProcess, *reasons: str) -> None:
    """Without `reasons`, `so = aot_compile(...)` became `aoti_compile_and_package(ep)`; with
    them, --diff wrote nothing and gave each reason on stderr."""
    if not reasons:
        assert "+    so = torch._inductor.aoti_compile_and_package(ep)" in out.stdout, out.stdout + out.stderr
        return
    assert out.stdout == "", out.stdout
    for reason in reasons:
        assert reason in out.stderr, out.stderr


def test_a_result_returned_by_a_method_names_the_method(tmp_path):
    """torch_musa's AOTIRunnerUtil.compile returns the .so to its class's other methods: the
    refusal names the method (it said "`a function`")."""
    root = _project(tmp_path, {"util.py": """
    import torch
    class Runner:
        @staticmethod
        def compile(model, x):
            so_path = torch._inductor.aot_compile(model, (x,))
            return so_path
    """})
    err = _diff(root).stderr
    assert ("its result is returned by the method `Runner.compile` (util.py:6), whose callers this analysis "
            "does not follow") in err, err


@pytest.mark.parametrize("around", [
    'with config.patch({"aot_inductor.package": True}):',
    'with torch.no_grad(), config.patch("aot_inductor.package", True):',
])
def test_config_patch_setting_package_around_the_call_is_read_as_the_option(tmp_path, around):
    """torch_musa's tests set aot_inductor.package with `config.patch` around the old call, not in
    its options: the old call then returns a list of files, which `for f in files` reads."""
    root = _project(tmp_path, {"run.py": f"""
    import shutil
    import torch
    from torch._inductor import config
    def build(model, x, dst):
        {around}
            files = torch._export.aot_compile(model, (x,))
        for f in files:
            shutil.copy(f, dst)
    """})
    out = _diff(root)
    assert out.stdout == "", out.stdout
    assert "sets aot_inductor.package around it: the old call returns the package's files (a list), read at run.py:7" \
        in out.stderr, out.stderr


@pytest.mark.parametrize("use, outside", [
    ("runner = load_package(so, 'musa')", "`vendor_pkg.package.load_package`"),
    ("mlflow.log_artifact(so)", "`mlflow.log_artifact`"),
    ("print(so)\n        assert os.path.exists(so)", None),
    ("logging.info('built %s', so)", None),
])
def test_a_result_given_to_a_function_outside_torch_is_the_users_call(tmp_path, use, outside):
    """torch_musa gives the old call's result to its own load_package, which opens the .so (or
    the list of files): a function this analysis does not read. Offered in the editor only, its
    title naming the function; the standard library and builtins are read as naming the path."""
    root = _project(tmp_path, {"run.py": f"""
    import logging, os
    import mlflow
    import torch
    from vendor_pkg.package import load_package
    def build(model, x):
        so = torch._export.aot_compile(model, (x,))
        {use}
        return torch._export.aot_load(so, "cpu")
    """})
    reasons = ("display-only fix, for the editor",
               f"gives it to {outside} (run.py:7), which this analysis does not read: that must read the .pt2")
    _migrated_else_refused(_diff(root), *(reasons if outside else ()))


def test_a_compile_writing_a_path_names_the_outside_function_its_result_is_given_to(tmp_path):
    """The plan by path (an output path, its loaders found by it) reads the compile's value too."""
    root = _project(tmp_path, {"run.py": """
    import torch
    from vendor_pkg import store
    def build(model, x):
        so = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": "/srv/m.so"})
        store.upload(so)
        return torch._export.aot_load("/srv/m.so", "cpu")
    """})
    out = _diff(root)
    assert out.stdout == "", out.stdout
    assert "gives it to `vendor_pkg.store.upload` (run.py:5), which this analysis does not read" in out.stderr, out.stderr


def test_a_keyword_torch_rejects_is_refused_one_it_ignores_is_dropped(tmp_path):
    """bertmaher/llama2.so's shape: `constraints=` made dim 1 dynamic; the migration dropped it and
    exported a static program. A keyword torch 2.13 ignores (aoti-facts) is dropped."""
    root = _project(tmp_path, {"build.py": """
        import torch
        so = torch._export.aot_compile(model, (x,), constraints=[torch._export.dynamic_dim(x, 1) <= 64],
                                       options={"aot_inductor.output_path": "/srv/m.so"})
        run = torch._export.aot_load(so, "cpu")
        """, "other.py": """
        import torch
        so = torch._export.aot_compile(model, (x,), same_signature=False)
        run = torch._export.aot_load(so, "cpu")
        """})
    out = _diff(root)
    assert "+++ b/build.py" not in out.stdout and "build.py:2:6: AOTI001 not fixed: no automatic fix: it passes " \
        "`constraints=`" in out.stderr
    added = [line for line in out.stdout.split("+++ b/other.py")[1].splitlines() if line.startswith("+")]
    assert added and not any("same_signature" in line for line in added)


def test_a_run_time_path_names_the_projects_own_container_runner(tmp_path):
    """molnex's shape: the .so path is a parameter, and the project's C++ (not "a program outside
    the project") opens .so files with AOTIModelContainerRunnerCpu: the editor-only offer names
    that file (its source before the header that declares it) and what it must become."""
    root = _project(tmp_path, {
        "export.py": """
            import torch
            def export_model(model, x, so_path):
                torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": so_path})
        """,
        "interface/include/runner.h": "#include <torch/csrc/inductor/aoti_runner/model_container_runner_cpu.h>\n"
                                      "std::unique_ptr<torch::inductor::AOTIModelContainerRunnerCpu> runner;\n",
        "interface/src/runner.cpp": '#include "runner.h"\n\nvoid load(const char* p) {\n'
                                    "  runner = std::make_unique<torch::inductor::AOTIModelContainerRunnerCpu>(p);\n}\n",
    })
    err = _diff(root).stderr
    assert "AOTI001 not fixed: display-only fix, for the editor" in err and "outside the project" not in err
    assert ("interface/src/runner.cpp:4 of the project opens .so files with AOTIModelContainerRunner: it must load "
            "the package with AOTIModelPackageLoader") in err


SPELT_TWICE = """
    import os
    import torch
    def go(m, x, n):
        torch._export.aot_compile(m, (x,), options={"aot_inductor.output_path": os.path.join(os.getcwd(), f"b/m_{n}.so")})
        {between}r = torch._export.aot_load(os.path.join(os.getcwd(), f"b/m_{n}.so"), "cpu")
        return r(x)
"""


@pytest.mark.parametrize("between", ["", "n = n + 1\n        "])
def test_a_run_time_path_spelt_again_at_the_loader_is_one_artifact(tmp_path, between):
    """An e3nn benchmark's shape: the compile and its loader spell the same run-time path. They
    are one artifact (one fix, both paths renamed; editor-only: another program may read it), not
    two fixes whose reasons contradict each other. Where a name of it is bound again between, the
    loader may read another file: its own plan, as before."""
    path = tmp_path / "bench.py"
    path.write_text(textwrap.dedent(SPELT_TWICE.replace("{between}", between)).lstrip())
    found = analyze(Source.from_text(path.read_text(), str(path)), Config()).findings
    compile_fix, load_fix = found[0].fix, found[1].fix
    if between:
        assert "no compile of the project writes it" in load_fix.title
        assert compile_fix.title != load_fix.title
        return
    assert compile_fix.title == load_fix.title and compile_fix.applicability.value == "display-only"
    assert "Migrate to aoti_compile_and_package + aoti_load_package" in compile_fix.title
    texts = [e.text for e in compile_fix.edits]
    assert any('package_path=os.path.join(os.getcwd(), f"b/m_{n}.pt2")' in t for t in texts)
    assert any('aoti_load_package(os.path.join(os.getcwd(), f"b/m_{n}.pt2"))' in t for t in texts)


def test_what_a_decorator_wraps_is_a_function_and_is_refused_so(tmp_path):
    """lianakoleva/no-libtorch-compile compiles the function its decorator wraps: export takes an
    nn.Module (torch 2.13: `ValueError: Expected 'mod' to be an instance of 'torch.nn.Module'`).
    A run-time cache path the same code loads no longer hides that (stop 41 made those fixable)."""
    root = _project(tmp_path, {"cache.py": """
        import torch
        def sticky(name):
            def decorator(orig_fn):
                def run(*args):
                    torch._export.aot_compile(orig_fn, args, options={"aot_inductor.output_path": f"/tmp/c/{name}.so"})
                    fn = torch._export.aot_load(f"/tmp/c/{name}.so", "cuda")
                    return fn(*args)
                return run
            return decorator
        @sticky(name="add")
        def add(x, y):
            return x + y
    """})
    out = _diff(root)
    assert out.stdout == "", out.stdout
    assert "`orig_fn` is what the decorator `@sticky` (cache.py:10) wraps: a function, not an nn.Module" in out.stderr, \
        out.stderr
    # a decorator applied to nothing in the file: nothing says what it receives
    root2 = _project(tmp_path / "two", {"cache.py": textwrap.dedent("""
        import torch
        def sticky(name):
            def decorator(model):
                def run(*args):
                    torch._export.aot_compile(model, args, options={"aot_inductor.output_path": f"/tmp/c/{name}.so"})
                    fn = torch._export.aot_load(f"/tmp/c/{name}.so", "cuda")
                    return fn(*args)
                return run
            return decorator
    """)})
    assert "what the decorator" not in _diff(root2).stderr


# umut-kocak/PyTorchDemos: a helper compiles to the path its one caller passes (an argparse
# option whose default ends in .so), and the caller loads that path after the call. Run on torch
# by tests/torch/projects/migration/helper_argument.
HELPER_ARGUMENT = """
    import argparse, os
    import torch
    DEFAULT = "net.so"
    def get_args():
        parser = argparse.ArgumentParser()
        parser.add_argument("--out-name", default=DEFAULT)
        return parser.parse_args()
    def export_model(model, x, out_file):
        ep = torch.export.export(model, (x,))
        torch._inductor.aot_compile(ep.module(), (x,), options={"aot_inductor.output_path": out_file})
    def main(model, x):
        args = get_args()
        out_path = os.path.join(os.getcwd(), args.out_name)
        export_model(model, x, out_path)
        SECOND
        runner = torch._export.aot_load(out_path, device="cpu")
        return runner(x)
"""


def test_a_path_passed_to_the_compiling_helper_and_loaded_after_migrates(tmp_path):
    # another file spelling the name only inside a longer one calls nothing (PyTorchDemos' demoExport)
    root = _project(tmp_path, {"main.py": HELPER_ARGUMENT.replace("SECOND", "pass"),
                               "other.py": "def export_model_examples():\n    pass\n\n\nexport_model_examples()\n"})
    out = _diff(root)
    assert out.returncode == 1 and "not fixed" not in out.stderr, out.stderr
    assert '-DEFAULT = "net.so"\n+DEFAULT = "net.pt2"' in out.stdout, out.stdout
    assert "aoti_compile_and_package(ep, package_path=out_file)" in out.stdout, out.stdout
    assert "+    runner = torch._inductor.aoti_load_package(out_path)" in out.stdout, out.stdout
    check = subprocess.run([sys.executable, "-m", "aoti_lsp", "--check", "--no-cache", "--output-format", "json", "."],
                           cwd=root, capture_output=True, text=True, timeout=120)
    titles = {f["fix"]["message"] for f in json.loads(check.stdout) if f["code"] in ("AOTI001", "AOTI002")}
    assert len(titles) == 1 and "a path given as `--out-name` must end in .pt2 too" in titles.pop(), check.stdout


def test_a_compiling_helper_called_twice_is_the_users_call(tmp_path):
    """Its path is what each caller passes: the loader of one call says nothing of the other's."""
    text = HELPER_ARGUMENT.replace("SECOND", 'export_model(model, x, "/srv/other.so")')
    root = _project(tmp_path, {"main.py": text})
    out = _diff(root)
    assert out.returncode == 1 and out.stdout == "", out.stdout
    assert "not fixed" in out.stderr and "known only at run time" in out.stderr, out.stderr
    # the loader's reason names the call that writes its path, never "nothing writes it"
    assert "`export_model(model, x, out_path)` (main.py:14) writes it with the compile at main.py:10" in out.stderr
    assert "writes it: what it names" not in out.stderr, out.stderr


# zhxchen17/torchnative: `aot_compile(ep.module(), *ep.example_inputs)`, the program's own (args,
# kwargs) spread in. Run on torch by tests/torch/projects/migration/program_inputs.
PROGRAM_INPUTS = """
    import torch
    def build(model, x, other):
        ep = torch.export.export(model, (x,))
        so = torch._inductor.aot_compile(MODEL, SPLAT)
        return torch._export.aot_load(so, "cpu")(x)
"""


def test_a_programs_own_example_inputs_spread_in_compile_the_program(tmp_path):
    root = _project(tmp_path, {"m.py": PROGRAM_INPUTS.replace("MODEL", "ep.module()").replace("SPLAT", "*ep.example_inputs")})
    out = _diff(root)
    assert out.returncode == 1 and "not fixed" not in out.stderr, out.stderr
    assert "+    so = torch._inductor.aoti_compile_and_package(ep)" in out.stdout, out.stdout


@pytest.mark.parametrize("model, splat, why", [
    ("ep.module()", "*other.example_inputs", "it passes *args/**kwargs"),  # another program's inputs
    ("other.module()", "*other.example_inputs", "`*other.example_inputs` of something this analysis cannot tell"),
    ("ep.module()", "*ep.example_inputs[0]", "it passes *args/**kwargs"),
])
def test_other_spread_inputs_stay_refused_and_say_why(tmp_path, model, splat, why):
    root = _project(tmp_path, {"m.py": PROGRAM_INPUTS.replace("MODEL", model).replace("SPLAT", splat)})
    out = _diff(root)
    assert out.returncode == 1 and out.stdout == "", out.stdout
    assert why in out.stderr, out.stderr


# zhxchen17/torchnative's whisper_aoti: each compile's path handed to a method of a builder of
# the same file (which copies the .so for a Rust program) — a reader the plan does not read; and
# wip/flux_aoti.py: the paths printed in a command for a sibling script, which loads argv.
def test_a_path_given_to_a_local_objects_method_is_the_users_call(tmp_path):
    root = _project(tmp_path, {"export.py": """
        import torch
        class Builder:
            def add_library(self, name, so_path):
                self.so = so_path
        ep = torch.export.export(model, (x,))
        so = torch._inductor.aot_compile(ep.module(), *ep.example_inputs)
        builder = Builder()
        builder.add_library("enc", so)
    """})
    out = _diff(root)
    assert out.returncode == 1 and out.stdout == "", out.stdout
    assert "gives it to `builder.add_library` (export.py:8), which this analysis does not read" in out.stderr, out.stderr


BUILD_AND_PRINT = """
    import torch
    ep = torch.export.export(model, (x,))
    so = torch._inductor.aot_compile(ep.module(), *ep.example_inputs)
    print(f"python serve_test.py {so}")
"""


def test_a_path_printed_in_a_command_for_another_script_migrates_with_that_scripts_loader(tmp_path):
    """torchnative's wip/flux_aoti.py prints the command that runs flux_test.py on its paths; the
    script loads them from sys.argv: the compile and that loader change together, in both files
    (tests/torch/projects/migration/command_for_script runs it), whichever file is checked."""
    root = _project(tmp_path, {"build.py": BUILD_AND_PRINT,
                               "serve_test.py": "import sys, torch\nrunner = torch._export.aot_load(sys.argv[1], 'cuda')\n"})
    for paths in ((), ("build.py",), ("serve_test.py",)):
        out = _diff(root, *paths)
        assert out.returncode == 1 and "not fixed" not in out.stderr, (paths, out.stderr)
        assert "+so = torch._inductor.aoti_compile_and_package(ep)" in out.stdout, out.stdout
        assert "+runner = torch._inductor.aoti_load_package(sys.argv[1])" in out.stdout, out.stdout
    check = _check(root, "serve_test.py")
    assert ("fix (unsafe): Migrate to aoti_compile_and_package + aoti_load_package (edits 2 files, the compile at "
            "build.py:3 writes its path into a command for `serve_test.py`, whose loader of it changes with it)") \
        in check.stdout, check.stdout


@pytest.mark.parametrize("hidden", ["exclude", "gitignore"])
def test_a_script_outside_the_project_is_not_followed(tmp_path, hidden):
    """The script a command names is edited only where it is a file of the project: excluded by
    the configuration or .gitignore'd, it is not (as a loader there is not seen), and the compile
    stays the user's call, naming it."""
    root = _project(tmp_path, {"build.py": BUILD_AND_PRINT,
                               "serve_test.py": "import sys, torch\nrunner = torch._export.aot_load(sys.argv[1], 'cuda')\n"})
    if hidden == "exclude":
        (root / "pyproject.toml").write_text((root / "pyproject.toml").read_text() + "[tool.aoti-lsp]\nexclude = ['serve_test.py']\n")
    else:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        (root / ".gitignore").write_text("serve_test.py\n")
    out = _diff(root)
    assert out.returncode == 1 and out.stdout == "", out.stdout
    assert "its path is written into a command for `serve_test.py` (build.py:4)" in out.stderr, out.stderr
    assert (root / "serve_test.py").read_text().count("aot_load") == 1


def test_two_paths_printed_in_one_command_migrate_with_the_loaders_of_their_arguments(tmp_path):
    """flux_aoti.py's two compiles, `python flux_test.py {fmodel_path} {ae_decoder_path}`, and
    flux_test.py's `fmodel_path, ae_decoder_path = sys.argv[1:]`: matched argument for argument."""
    root = _project(tmp_path, {"build.py": """
        import torch
        ep_a, ep_b = torch.export.export(m_a, (x,)), torch.export.export(m_b, (y,))
        a = torch._inductor.aot_compile(ep_a.module(), *ep_a.example_inputs)
        b = torch._inductor.aot_compile(ep_b.module(), *ep_b.example_inputs)
        print(f"python serve_test.py {a} {b}")
    """, "serve_test.py": """
        import sys, torch
        a_path, b_path = sys.argv[1:]
        def load_b():
            return torch._export.aot_load(b_path, "cuda")
        a = torch._export.aot_load(a_path, "cuda")
    """})
    out = _diff(root)
    assert out.returncode == 1 and "not fixed" not in out.stderr, out.stderr
    assert out.stdout.count("+a = torch._inductor.aoti_compile_and_package(ep_a)") == 1, out.stdout
    assert out.stdout.count("+b = torch._inductor.aoti_compile_and_package(ep_b)") == 1, out.stdout
    assert out.stdout.count("torch._inductor.aoti_load_package(") == 2, out.stdout
    assert ("the compiles at build.py:3, build.py:4 write their paths into a command for `serve_test.py`, whose "
            "loaders of them change with them") in _check(root).stdout


@pytest.mark.parametrize("build, serve, why", [
    # the path inside a longer word: not an argument the script reads by its place
    (BUILD_AND_PRINT.replace("serve_test.py {so}", "serve_test.py --model={so}"),
     "import sys, torch\nrunner = torch._export.aot_load(sys.argv[1], 'cuda')\n",
     "its path is written into a command for `serve_test.py` (build.py:4)"),
    # the script loads an argument no compile of the project writes (a .so built elsewhere) too
    (BUILD_AND_PRINT, "import sys, torch\nr = torch._export.aot_load(sys.argv[1], 'cuda')\n"
                      "s = torch._export.aot_load(sys.argv[2], 'cuda')\n",
     "its path is written into a command for `serve_test.py` (build.py:4)"),
    # ... or another argument than the one the command gives it
    (BUILD_AND_PRINT, "import sys, torch\nr = torch._export.aot_load(sys.argv[2], 'cuda')\n",
     "its path is written into a command for `serve_test.py` (build.py:4)"),
    # an argparse option: which word it is, is not read here
    (BUILD_AND_PRINT.replace("{so}", "--model {so}"),
     "import argparse, torch\np = argparse.ArgumentParser()\np.add_argument('--model')\nargs = p.parse_args()\n"
     "r = torch._export.aot_load(args.model, 'cuda')\n",
     "its path is written into a command for `serve_test.py` (build.py:4)"),
    # counted from the end
    (BUILD_AND_PRINT, "import sys, torch\n(p,) = sys.argv[-1:]\nr = torch._export.aot_load(p, 'cuda')\n",
     "its path is written into a command for `serve_test.py` (build.py:4)"),
    # the compile's path also given to a reader the plan does not read
    (BUILD_AND_PRINT + "    import artifact_store\n    artifact_store.upload(so)\n",
     "import sys, torch\nr = torch._export.aot_load(sys.argv[1], 'cuda')\n",
     "gives it to `artifact_store.upload` (build.py:6)"),
])
def test_a_printed_command_that_does_not_match_the_script_stays_the_users_call(tmp_path, build, serve, why):
    root = _project(tmp_path, {"build.py": build, "serve_test.py": serve})
    out = _diff(root)
    assert out.returncode == 1 and out.stdout == "", out.stdout
    assert why in out.stderr, out.stderr


def test_a_path_printed_in_a_command_for_another_script_is_the_users_call(tmp_path):
    """Where the script's side does not match (its loader reads another argument), the refusal
    names both sides."""
    root = _project(tmp_path, {"build.py": BUILD_AND_PRINT,
                               "serve_test.py": "import sys, torch\nrunner = torch._export.aot_load(sys.argv[2], 'cuda')\n"})
    out = _diff(root)
    assert out.returncode == 1 and out.stdout == "", out.stdout
    assert "its path is written into a command for `serve_test.py` (build.py:4)" in out.stderr, out.stderr
    # the script's loader of argv names that compile (never "no compile of the project writes it")
    assert ("serve_test.py:2:10: AOTI002 not fixed: display-only fix, for the editor: Migrate to "
            "torch._inductor.aoti_load_package (the path `sys.argv[2]` (serve_test.py:2) comes from the command "
            "line; the compile at build.py:3 writes what it makes into a command for this script") in out.stderr, out.stderr
    # a line for a person (remaster's `print(f"Output: {so_path}")`) is not a command
    (root / "build.py").write_text((root / "build.py").read_text().replace("python serve_test.py", "Output:"))
    out = _diff(root, "build.py")
    assert out.returncode == 1 and "aoti_compile_and_package(ep)" in out.stdout and "not fixed" not in out.stderr, out.stderr
    (root / "build.py").unlink()  # the command's writer gone: what is given must be a .pt2
    out = _diff(root)
    assert "`sys.argv[2]` (serve_test.py:2) comes from the command line; what is given there must be a .pt2" in out.stderr


def _check(root: Path, *paths: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aoti_lsp", "--check", "--no-cache", *(paths or ["."])], cwd=root,
                          capture_output=True, text=True, timeout=120)


def test_comments_beside_the_old_calls_arguments_move_with_them(tmp_path):
    """Zenasj/HBTGen-artifact's reproductions (the AOTI tutorial's call): a comment above an
    argument, or at the end of its line, stays with what that argument becomes; the output path's
    goes with `package_path=`; the one after `(` (inference-benchmarks' `# type: ignore[...]`)
    stays at the end of the line that opens the call in its place."""
    root = _project(tmp_path, {"m.py": """
        import os
        import torch
        so_path = torch._export.aot_compile(  # compile once
            model,
            example_inputs,
            # Specify the first dimension of the input x as dynamic
            dynamic_shapes={"x": {0: batch_dim}},  # batch only
            # Specify the generated shared library path
            options={"aot_inductor.output_path": os.path.join(os.getcwd(), "model.so")},
            # nothing after this
        )
        runner = torch._export.aot_load(so_path, "cpu")
    """})
    out = _diff(root)
    assert out.returncode == 1 and "not fixed" not in out.stderr, out.stderr
    new = [line[1:] for line in out.stdout.splitlines() if line.startswith(("+", " ")) and not line.startswith("+++")]
    assert new[new.index("ep = torch.export.export(") + 1:new.index("so_path = torch._inductor.aoti_compile_and_package("
                                                                   "  # compile once")] == [
        "    model,",
        "    example_inputs,",
        "    # Specify the first dimension of the input x as dynamic",
        '    dynamic_shapes={"x": {0: batch_dim}},  # batch only',
        "    strict=True,",
        ")",
    ], out.stdout
    assert new[new.index("so_path = torch._inductor.aoti_compile_and_package(  # compile once") + 1:][:4] == [
        "    ep,",
        "    # Specify the generated shared library path",
        '    package_path=os.path.join(os.getcwd(), "model.pt2"),  # nothing after this',
        ")",
    ], out.stdout
