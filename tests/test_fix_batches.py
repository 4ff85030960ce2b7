"""Fixes go in by groups (fixer.compiling_subset): one compile when every candidate keeps the file
valid, a few more per candidate that breaks it, and the same choice as one by one. Before, --fix
of a 20k-line file with 1,101 migrations compiled the file once per migration (over 5 minutes)."""

from __future__ import annotations

import random

import pytest
from aoti_lsp.fixes import project_fix
from aoti_lsp.fixes.fixer import compiling_subset
from aoti_lsp.project.config import Config
from aoti_lsp.project.project import Project, summarize
from aoti_lsp.analysis.source import Source


def one_by_one(candidates, compiles_with):
    accepted = []
    for c in candidates:
        if compiles_with(accepted + [c]):
            accepted.append(c)
    return accepted


@pytest.mark.parametrize("seed", range(40))
def test_the_same_choice_as_one_by_one(seed):
    """A candidate breaks the file alone, or beside one other (two migrations that each fit, not
    both): the groups accept what one by one would, in order."""
    rng = random.Random(seed)
    n = rng.randint(0, 60)
    alone = set(rng.sample(range(n), k=min(n, rng.randint(0, 4))))
    pairs = {(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 3))} if n else set()
    calls = []

    def compiles_with(group):
        calls.append(len(group))
        s = set(group)
        return not (s & alone) and not any(a in s and b in s and a != b for a, b in pairs)

    accepted, rejected = compiling_subset(list(range(n)), compiles_with)
    assert accepted == one_by_one(list(range(n)), compiles_with)
    assert sorted(accepted + rejected) == list(range(n))


def test_one_compile_when_all_go_in_and_few_for_one_that_breaks():
    calls = []
    accepted, rejected = compiling_subset(list(range(1100)), lambda g: calls.append(1) or 517 not in g)
    assert rejected == [517] and len(accepted) == 1099
    assert len(calls) <= 2 * 11 + 1  # ~2 log2(1100): not 1,100
    calls.clear()
    assert compiling_subset(list(range(1100)), lambda g: calls.append(1) or True) == (list(range(1100)), [])
    assert len(calls) == 1


SITE = ('so{i} = torch._export.aot_compile(M(), (torch.randn(2, 3),), options={{"aot_inductor.output_path": "/tmp/m{i}.so"}})\n'
        'run{i} = torch._export.aot_load(so{i}, "cpu")\n')
HEAD = "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n\n\n"


def test_a_project_fix_that_breaks_its_file_is_dropped_and_the_rest_go_in(tmp_path, monkeypatch):
    """40 migrations in one file; the one whose result Python would reject (here: the one that
    writes m17.pt2, by a stand-in for Python's verdict) stays a finding, the 39 others go in, and
    the file is compiled a handful of times, not once per migration."""
    path = tmp_path / "build.py"
    data = (HEAD + "".join(SITE.format(i=i) for i in range(40))).encode()
    path.write_bytes(data)
    real = project_fix.compiles
    verdicts = []

    def compiles(text: bytes, where: str) -> bool:
        verdicts.append(where)
        return b"m17.pt2" not in text and real(text, where)

    monkeypatch.setattr(project_fix, "compiles", compiles)
    source = Source(data, str(path))
    project = Project()
    project.update(str(path), summarize(source, Config()))
    fixed = project_fix.fix_project([source], Config(), True, project)[str(path)]
    new = fixed.new.decode()
    assert new.count("aoti_compile_and_package") == 39 and 'package_path="/tmp/m16.pt2"' in new
    assert 'so17 = torch._export.aot_compile(M()' in new and "m17.pt2" not in new
    assert fixed.applied == 39
    assert any(f.code == "AOTI001" and new.encode()[f.start:f.end].startswith(b"torch._export.aot_compile")
               for f in fixed.remaining)
    assert compile(new, "build.py", "exec")
    assert len(verdicts) <= 30, len(verdicts)  # one by one: 40, and more in the passes after
