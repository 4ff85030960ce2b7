"""A project where no file spells an export, an AOT compile or a package load (runner.in_reach)
has nothing in AOTI201/202's scope: the files only they look at are not parsed. Once a file
within reach appears (or is cached), they are, and every run says what a run from scratch says."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

POOL = """import torch


class Pool(torch.nn.Module):
    def forward(self, values, lengths):
        offsets = torch.cumsum(lengths, 0)
        return values.sum(0) / offsets[-1]
"""
CALLER = """def run(model, values, lengths):
    return model(values, lengths=lengths, offsets=None)
"""
BUILD = """import torch

from pkg.pool import Pool

ep = torch.export.export(Pool(), (torch.randn(4, 8), torch.tensor([1, 3])))
torch._inductor.aoti_compile_and_package(ep, package_path="pool.pt2")
"""
_MODULES = """
import sys
from aoti_lsp.cli.main import main
code = main(sys.argv[1:])
print(sorted(m for m in sys.modules if m.startswith(("aoti_lsp", "tree_sitter"))), file=sys.stderr)
sys.exit(code)
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "pool.py").write_text(POOL)
    (pkg / "caller.py").write_text(CALLER)
    for i in range(3):
        (pkg / f"m{i}.py").write_text(f"import os\n\n\ndef f{i}(rows):\n    return len(rows)\n")
    _age(tmp_path)
    return tmp_path


def _age(root: Path) -> None:
    """Old enough for the cache to trust the files' stat (cache.RACY_NS)."""
    old = time.time() - 3600
    for f in root.rglob("*.py"):
        os.utime(f, (old, old))


def _check(root: Path, *args: str) -> tuple[int, str, set[str]]:
    out = subprocess.run([sys.executable, "-c", _MODULES, "--check", "-j", "1", *args, "."], cwd=root,
                         capture_output=True, text=True)
    return out.returncode, out.stdout, set(eval(out.stderr.strip().splitlines()[-1]))


def test_out_of_reach_the_jagged_rules_parse_nothing(tmp_path):
    root = _project(tmp_path)
    for args in ((), ("--no-cache",)):
        code, out, mods = _check(root, *args)
        assert code == 0, out
        # neither the jagged analysis nor a parse: no file can be in their scope
        assert not {"aoti_lsp.analysis.jagged", "aoti_lsp.rules.aoti201", "tree_sitter._binding"} & mods, sorted(mods)


def test_a_file_within_reach_brings_the_jagged_rules_back_as_a_run_from_scratch(tmp_path):
    root = _project(tmp_path)
    assert _check(root)[0] == 0  # the cache holds the project out of reach
    (root / "pkg" / "build.py").write_text(BUILD)
    code, warm, mods = _check(root)
    assert code == 1 and "pkg/pool.py:7:32: AOTI201" in warm, warm
    assert warm == _check(root, "--no-cache")[1]
    # a changed model file (only the jagged rules look at it) beside a cached file within reach
    _age(root)
    assert _check(root)[0] == 1
    (root / "pkg" / "pool.py").write_text(POOL.replace("values.sum(0)", "values.sum(0) * 2"))
    code, warm, _ = _check(root)
    assert code == 1 and "pkg/pool.py:7:" in warm and "AOTI201" in warm, warm
    assert warm == _check(root, "--no-cache")[1]
    # out of reach again: the finding goes, as from scratch
    (root / "pkg" / "build.py").unlink()
    code, warm, _ = _check(root)
    assert code == 0 and warm == _check(root, "--no-cache")[1], warm


def test_a_package_load_alone_is_within_reach(tmp_path):
    """`load_package` spells neither `export` nor `aot`: it is within reach of its own (the device
    rules read other files' summaries, which the jagged-only files would otherwise lack)."""
    from aoti_lsp.project import runner
    from aoti_lsp.project.config import Config

    root = _project(tmp_path)
    serve = root / "pkg" / "serve.py"
    serve.write_text("from torch._inductor.package import load_package\n\nrunner = load_package('pool.pt2')\n")
    paths = [str(root / "pkg" / n) for n in ("pool.py", "caller.py", "serve.py", "m0.py")]
    deferred: list[str] = []
    _, rows = runner._scan(paths, Config(root=str(root)), defer=deferred)
    assert deferred == paths[:2]  # only the jagged rules look at them
    reach = {Path(path).name: facts[3] for path, err, _, _, facts in rows}
    assert reach == {"serve.py": True, "m0.py": False}, reach


def test_what_spells_reach():
    """Every spelling of an export, AOT compile or package load is within reach; TorchScript's
    `@torch.jit.export`, the ONNX exporter and the profiler's export_chrome_trace are not."""
    from aoti_lsp.project.runner import in_reach

    within = ["ep = torch.export.export(m, args)", "from torch.export import export as ex",
              "import torch.export", "so = torch._export.aot_compile(m, args)", "from torch import export",
              "torch._inductor.aoti_compile_and_package(ep)", "from torch._inductor.package import load_package",
              "@torch.jit.export\ndef f(self): pass\nep = export(m, args)", "export(m, args)"]
    outside = ["@torch.jit.export\ndef f(self): pass", "torch.onnx.export(m, args, 'm.onnx')",
               "prof.export_chrome_trace('t.json')", "def forward(self, x):\n    return x"]
    assert [s for s in within if not in_reach(s.encode())] == []
    assert [s for s in outside if in_reach(s.encode())] == []


def test_one_file_named_from_the_root_says_what_the_whole_tree_says(tmp_path):
    """The pre-commit shape (one file named, the project summarised around it), out of reach and
    within it, cold and warm: the named file's findings are those of a check of the whole tree."""
    root = _project(tmp_path)

    def named(*args):
        out = subprocess.run([sys.executable, "-m", "aoti_lsp", "--check", "-j", "1", *args, "pkg/pool.py"], cwd=root,
                             capture_output=True, text=True)
        return out.returncode, out.stdout, out.stderr.strip().splitlines()[-1]

    assert named() == named("--no-cache") == (0, "", "All checks passed!")
    (root / "pkg" / "build.py").write_text(BUILD)
    whole = _check(root, "--no-cache")[1]  # build.py has no finding of its own
    code, out, last = named()
    assert code == 1 and out == whole and "pkg/pool.py:7:32: AOTI201" in out, (out, whole)
    assert named("--no-cache") == (code, out, last)
