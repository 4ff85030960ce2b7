"""The migration is planned per artifact across the project: every file that names the
artifact changes together, or nothing changes and the finding says why (issue: never half a
migration). Real-torch runs of migrated projects: tests/torch/test_project_migration.py."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PATHS = """
    import os
    ARTIFACT_DIR = os.environ.get("ARTIFACT_DIR", "/srv/artifacts")
    TOWER = os.path.join(ARTIFACT_DIR, "tower.so")
"""
BUILD_CPU = """
    import torch
    from pkg.paths import TOWER
    def build(model, x):
        torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": TOWER})
"""
SERVE = """
    import torch
    from pkg.paths import TOWER
    runner = torch._export.aot_load(TOWER, "cpu")
"""


def _project(root: Path, files: dict[str, str]) -> Path:
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def _aoti(root: Path, *args):
    return subprocess.run([sys.executable, "-m", "aoti_lsp", *args], cwd=root, capture_output=True, text=True,
                          timeout=120)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.py"))}


def _findings(root: Path, *args) -> list[dict]:
    out = _aoti(root, "--check", "--output-format", "json", "--no-cache", *args)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout or "[]")


def test_one_file_named_from_the_root_migrates_every_file_of_the_artifact(tmp_path):
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/paths.py": PATHS, "pkg/build.py": BUILD_CPU,
                               "pkg/serve.py": SERVE})
    out = _aoti(root, "--check", "--fix", "--unsafe-fixes", "--no-cache", "pkg/serve.py")
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'os.path.join(ARTIFACT_DIR, "tower.pt2")' in (root / "pkg/paths.py").read_text()
    assert "aoti_compile_and_package(ep, package_path=TOWER)" in (root / "pkg/build.py").read_text()
    assert "aoti_load_package(TOWER)" in (root / "pkg/serve.py").read_text()
    assert _findings(root, ".") == []


def test_quick_fix_title_names_the_rename_and_the_files(tmp_path):
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/paths.py": PATHS, "pkg/build.py": BUILD_CPU,
                               "pkg/serve.py": SERVE})
    found = {f["code"]: f for f in _findings(root, ".")}
    title = found["AOTI002"]["fix"]["message"]
    assert "renames tower.so -> tower.pt2 in 3 files" in title, title
    assert found["AOTI002"]["fix"]["applicability"] == "unsafe"


BLOCKED = {
    # the artifact path comes from the command line: its other users cannot be found
    "runtime_path": {
        "build.py": """
            import sys, torch
            torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": sys.argv[1]})
        """,
        "serve.py": """
            import sys, torch
            runner = torch._export.aot_load(sys.argv[1], "cpu")
        """,
    },
    # the .so is also loaded as a shared library: renaming it would break that
    "constant_used_as_a_library": {
        "build.py": """
            import ctypes, torch
            OUT = "/srv/libscaled.so"
            torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": OUT})
            lib = ctypes.CDLL(OUT)
            runner = torch._export.aot_load(OUT, "cpu")
        """,
    },
    # no compile of the project writes the .so this loads
    "producer_outside": {
        "serve.py": """
            import torch
            runner = torch._export.aot_load("/opt/vendor/model.so", "cuda")
        """,
    },
}


@pytest.mark.parametrize("name", sorted(BLOCKED))
def test_blocked_plans_leave_every_file_untouched_and_say_why(tmp_path, name):
    root = _project(tmp_path, BLOCKED[name])
    before = _snapshot(root)
    out = _aoti(root, "--check", "--fix", "--unsafe-fixes", "--no-cache", ".")
    assert out.returncode == 1, out.stdout + out.stderr
    assert _snapshot(root) == before
    deprecated = [f for f in _findings(root, ".") if f["code"] in ("AOTI001", "AOTI002")]
    # no fix and why, or (a reader outside the project) an editor-only offer whose title says why
    assert deprecated and all(
        (f["fix"] is None and any("no automatic fix" in r["message"] for r in f["related"]))
        or (f["fix"]["applicability"] == "display-only"
            and any(why in f["fix"]["message"] for why in ("outside the project", "no compile of the project",
                                                            "comes from the command line")))
        for f in deprecated), deprecated


def test_a_load_on_another_device_blocks_the_migration_and_stays_reported(tmp_path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "", "pkg/paths.py": PATHS,
        "pkg/build.py": BUILD_CPU.replace("(model, (x,)", '(model.cuda(), (x.to("cuda"),)'),
        "pkg/serve.py": SERVE,
    })
    found = _findings(root, ".")
    codes = sorted(f["code"] for f in found)
    assert codes == ["AOTI001", "AOTI002", "AOTI101"], codes
    load = next(f for f in found if f["code"] == "AOTI002")
    assert load["fix"]["applicability"] == "display-only" and 'drops device="cpu"' in load["fix"]["message"]
    before = _snapshot(root)
    out = _aoti(root, "--check", "--fix", "--unsafe-fixes", "--no-cache", ".")
    assert out.returncode == 1 and _snapshot(root) == before, out.stdout + out.stderr
    assert "AOTI101" in {f["code"] for f in _findings(root, ".")}


def test_a_load_on_another_device_offers_the_two_ways_out():
    """Load (and feed) on the compile device, or compile for the load device: both editor-only."""
    from aoti_lsp.analysis.engine import analyze
    from aoti_lsp.fixes.fixer import apply_edits
    from aoti_lsp.analysis.source import Source

    text = ('import torch\nmodel = MyModel().cuda()\nx = torch.randn(2, 10, device="cuda")\n'
            'so = torch._export.aot_compile(model, (x,))\nrunner = torch._export.aot_load(so, "cpu")\n')
    source = Source.from_text(text, "m.py")
    (f,) = [f for f in analyze(source).findings if f.code == "AOTI101"]
    fixes = [f.fix, *f.alternatives]
    assert [x.applicability.value for x in fixes] == ["display-only", "display-only"]
    load_on, compile_for = (apply_edits(source.data, x.edits).decode() for x in fixes)
    assert 'aot_load(so, "cuda")' in load_on
    assert "MyModel().cpu()" in compile_for and 'device="cpu"' in compile_for and 'aot_load(so, "cpu")' in compile_for
