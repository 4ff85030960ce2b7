"""One Context per text, for every pass over it (engine.reuse_context): the server analyses an
opened file first and stores its summary once typing pauses, from the analysis's names and
facts; a file analysed again after another file changed reuses them too. Each such pass must
equal the same pass on a fresh Context: what depends on other files (artifact keys resolved
through the project, migration plans) is made again, what the file's own code says is kept."""

from __future__ import annotations

import os

import differential as d
import pytest

from aoti_lsp.analysis.engine import analyze
from aoti_lsp.project.project import Project, summarize
from aoti_lsp.analysis.source import Source

UNITS = [u for u in d.units() if len(u[2]) > 1 or "projects/" in u[0]]


def _project(files, cfg, skip=None) -> Project:
    project = Project()
    for f in files:
        if f != skip:
            project.update(os.path.abspath(f), summarize(Source(f.read_bytes(), str(f)), cfg))
    return project


def _findings(result, strip=str) -> list:
    return [d.finding(f, strip) for f in result.findings]


@pytest.mark.parametrize("name,root,files", UNITS, ids=[u[0] for u in UNITS])
def test_a_summary_after_the_check_equals_a_fresh_one(name, root, files):
    cfg = d.config_for(root)
    project = _project(files, cfg)
    reused = 0
    for f in files:
        source = Source(f.read_bytes(), str(f))
        analyze(source, cfg, project=project)
        reused += source.context is not None  # none where no rule applies to the file
        assert summarize(source, cfg) == summarize(Source(f.read_bytes(), str(f)), cfg), f
    assert reused, "no check kept a Context: the test proves nothing"


@pytest.mark.parametrize("name,root,files", UNITS, ids=[u[0] for u in UNITS])
def test_a_check_after_the_project_changed_equals_a_fresh_one(name, root, files):
    """The same text checked first with a project lacking one of the other files, then with the
    whole project: the second check equals one on a fresh Context (a plan or an artifact found
    the first time must not survive)."""
    cfg = d.config_for(root)
    whole = _project(files, cfg)
    for f in files:
        for other in files:
            if other == f:
                continue
            source = Source(f.read_bytes(), str(f))
            analyze(source, cfg, project=_project(files, cfg, skip=other))
            again = analyze(source, cfg, project=whole)
            fresh = analyze(Source(f.read_bytes(), str(f)), cfg, project=whole)
            assert _findings(again) == _findings(fresh), (f, other)


def test_a_plan_made_before_a_constant_changed_is_made_again(tmp_path):
    """build.py loads through a constant of paths.py. Checked while the constant names another
    file, the loader is not part of the compile's migration; checked again, on the same text,
    once paths.py names the compile's file, the plan holds both, as a fresh check's does."""
    paths = tmp_path / "paths.py"
    build = tmp_path / "build.py"
    build.write_text(
        "import torch\nfrom paths import OUT\n\n"
        'so = torch._export.aot_compile(Net(), (torch.randn(2, 8),), options={"aot_inductor.output_path": "out/m.so"})\n'
        'runner = torch._export.aot_load(OUT, "cpu")\n')
    cfg = d.config_for(tmp_path)

    def project(constant: str) -> Project:
        paths.write_text(f'OUT = "{constant}"\n')
        made = _project(sorted(tmp_path.glob("*.py")), cfg)
        made.root = str(tmp_path)
        return made

    source = Source(build.read_bytes(), str(build))
    first = analyze(source, cfg, project=project("out/other.so"))
    whole = project("out/m.so")
    again = analyze(source, cfg, project=whole)
    fresh = analyze(Source(build.read_bytes(), str(build)), cfg, project=whole)
    titles = [f.fix.title for f in fresh.findings if f.fix is not None]
    assert [f.fix.title for f in first.findings if f.fix is not None] != titles, "the change changes nothing: proves nothing"
    assert _findings(again) == _findings(fresh)
