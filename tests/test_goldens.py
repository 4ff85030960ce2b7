import pytest

from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.source import Source
from goldens import FIXTURES, cases, check_file, check_project, fix_file

CASES = list(cases())


@pytest.mark.parametrize("kind,path,golden", CASES, ids=[str(c[1].relative_to(FIXTURES)) for c in CASES])
def test_golden(kind, path, golden, update_goldens):
    actual = {"check": check_file, "fix": fix_file, "project": check_project}[kind](path)
    if update_goldens:
        golden.write_text(actual, "utf-8")
    assert golden.exists(), f"missing {golden.name}: run pytest --update-goldens"
    assert actual == golden.read_text("utf-8")


FIX_CASES = [c for c in CASES if c[0] == "fix"]


@pytest.mark.parametrize("kind,path,golden", FIX_CASES, ids=[str(c[1].relative_to(FIXTURES)) for c in FIX_CASES])
def test_fix_output_is_sound(kind, path, golden):
    """Fixed code parses, is clean of the fixed rule, and fixing it again changes nothing."""
    code = path.parent.name
    fixed = fix_file(path)
    source = Source.from_text(fixed, str(path))
    assert not source.tree.root_node.has_error, fixed
    compile(fixed, str(path), "exec")
    # what --fix --unsafe-fixes would still apply (a display-only fix is never applied)
    left = [f for f in analyze(source, Config()).findings if f.code == code and f.fix is not None
            and f.fix.kind != "display-only"]
    assert left == [], left
    again = golden.with_name(golden.name + ".tmp")
    again.write_text(fixed, "utf-8")
    try:
        assert fix_file(again) == fixed
    finally:
        again.unlink()


def test_every_rule_has_fixtures():
    from aoti_lsp.rules import all_rules

    for rule in all_rules():
        folder = FIXTURES / rule.code
        assert folder.is_dir() and any(folder.glob("*.py")), f"{rule.code} has no fixtures in {folder}"


def test_stand_in_package_is_what_goldens_py_builds():
    from goldens import STAND_IN, stand_in_package

    assert STAND_IN.read_bytes() == stand_in_package(), "rebuild it: STAND_IN.write_bytes(stand_in_package())"


def test_stand_in_says_what_the_real_package_says(tmp_path):
    """The same fixture against the real CUDA package (in ../shared, when it is there): the same
    findings as against the stand-in."""
    from goldens import REAL_CUDA_PACKAGE, STAND_IN

    if not REAL_CUDA_PACKAGE.is_file():
        pytest.skip("the real CUDA package is missing (tests/real_cuda/LastItemGather.pt2)")
    fixture = (FIXTURES / "AOTI102" / "disk_package.py").read_text("utf-8")
    results = []
    for package in (STAND_IN, REAL_CUDA_PACKAGE):
        folder = tmp_path / package.parent.name
        folder.mkdir()
        (folder / "LastItemGather.pt2").symlink_to(package.resolve())
        (folder / "app.py").write_text(fixture, "utf-8")
        results.append([(f.code, f.start, f.message) for f in analyze(Source.from_text(fixture, str(folder / "app.py")), Config()).findings])
    assert results[0] == results[1] and len(results[0]) == 3
