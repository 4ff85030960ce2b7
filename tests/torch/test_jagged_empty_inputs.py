"""AOTI201 / AOTI202 against real torch 2.13 (CPU): the unfixed packages crash on empty input,
a guard inside the exported forward changes nothing, and the code after aoti-lsp's own quick
fixes (not a hand-written copy) matches eager on non-empty input and gives an empty/zero
result on empty input.

Three AOTI compiles (about 10-30 s each on 2 cores, 7-8 s with a warm
TORCHINDUCTOR_CACHE_DIR); every run of a package happens in a subprocess, so a segfault
fails one assertion and not the test session.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.fixes.fixer import apply_edits, fix_source
from aoti_lsp.analysis.source import Source

pytestmark = pytest.mark.torch
REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "inductor"

# The code under test, as a user writes it: a model with the `offsets[-1]` pattern and the
# guard people reach for, a model with the gather / index_copy pattern, the build step and
# the serving functions that load the packages.
SOURCE = '''\
"""Jagged pooling served from AOTInductor packages."""
import torch
from torch.export import Dim

BAG_MEAN = "bag_mean.pt2"
LAST_ITEM = "last_item.pt2"
DYNAMIC = {"values": {0: Dim("N", min=0)}, "lengths": {0: Dim("B", min=0)}}


class BagMean(torch.nn.Module):
    """Mean of all item embeddings of a request (offsets[-1] is the item count)."""

    def forward(self, values, lengths):
        if lengths.numel() == 0:
            return values.new_zeros(values.shape[1:])
        offsets = torch.cumsum(lengths, 0)
        total = offsets[-1]
        return values.sum(0) / total.clamp(min=1)


class LastItem(torch.nn.Module):
    """The last item of every bag (index_select) and a mask of those rows (index_copy)."""

    def forward(self, values, lengths):
        last = (torch.cumsum(lengths, 0) - 1).clamp(min=0)
        ones = torch.ones(lengths.shape[0], dtype=values.dtype)
        mask = torch.zeros(values.shape[0], dtype=values.dtype).index_copy(0, last, ones)
        return values.index_select(0, last), mask


def build(which=("bag", "last")):
    example = (torch.randn(5, 4), torch.tensor([2, 3]))
    if "bag" in which:
        ep = torch.export.export(BagMean(), example, dynamic_shapes=DYNAMIC)
        torch._inductor.aoti_compile_and_package(ep, package_path=BAG_MEAN)
    if "last" in which:
        ep = torch.export.export(LastItem(), example, dynamic_shapes=DYNAMIC)
        torch._inductor.aoti_compile_and_package(ep, package_path=LAST_ITEM)


def serve_mean(values, lengths):
    runner = torch._inductor.aoti_load_package(BAG_MEAN)
    result = runner(values, lengths)
    return result


def serve_last(values, lengths):
    runner = torch._inductor.aoti_load_package(LAST_ITEM)
    return runner(values, lengths)
'''

# Runs `module.function(*inputs)` for each case in a fresh interpreter (cwd: the package
# folder) and saves the results; `build` compiles there.
HARNESS = textwrap.dedent('''\
    import importlib.util, sys, torch
    spec = importlib.util.spec_from_file_location("user_code", sys.argv[1])
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    if sys.argv[2] == "build":
        mod.build(tuple(sys.argv[3].split(",")))
        sys.exit(0)
    cases = torch.load(sys.argv[3])
    torch.save([getattr(mod, fn)(*args) for fn, args in cases], sys.argv[4])
''')


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def inputs(torch):
    """Non-empty (with an empty bag in the middle), empty (B = 0), and no values (N = 0)."""
    g = torch.Generator().manual_seed(0)
    return {
        "full": (torch.randn(6, 4, generator=g), torch.tensor([2, 0, 3, 1])),
        "empty": (torch.empty(0, 4), torch.empty(0, dtype=torch.long)),
        "no_values": (torch.empty(0, 4), torch.zeros(2, dtype=torch.long)),
    }


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run(script: Path, folder: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(CACHE)}
    return subprocess.run([sys.executable, str(script), *args], check=False, cwd=folder, env=env,
                          capture_output=True, text=True, timeout=timeout)


def call(torch, harness: Path, code: Path, folder: Path, cases: list) -> tuple[subprocess.CompletedProcess, list | None]:
    spec, out = folder / f"{code.stem}.cases.pt", folder / f"{code.stem}.out.pt"
    out.unlink(missing_ok=True)
    torch.save(cases, spec)
    res = run(harness, folder, str(code), "x", str(spec), str(out))
    return res, (torch.load(out) if res.returncode == 0 else None)


def fixes_of(text: str, code: str, what: str):
    """(finding, fix) of aoti-lsp for `code` whose finding text contains `what`."""
    found = [f for f in analyze(Source.from_text(text, "serving.py"), Config()).findings if f.code == code and what in f.message]
    assert len(found) == 1, [f.message for f in found]
    return found[0]


def apply(text: str, fix) -> str:
    assert fix is not None and not fix.snippet, fix
    return apply_edits(text.encode(), fix.edits).decode()


@pytest.fixture(scope="module")
def work(torch, tmp_path_factory):
    """The variants of SOURCE after aoti-lsp's fixes, and the packages they need."""
    root = tmp_path_factory.mktemp("jagged")
    harness = root / "harness.py"
    harness.write_text(HARNESS)
    v = {"unfixed": SOURCE}

    # AOTI201's guard fixes (the alternative for offsets[-1], the only fix for the indexing)
    mean_finding = fixes_of(SOURCE, "AOTI201", "`offsets[-1]`")
    assert mean_finding.fix.title.startswith("Use `lengths.sum(0)`")
    (guard,) = mean_finding.alternatives
    text = apply(SOURCE, guard)
    text = apply(text, fixes_of(text, "AOTI201", "`values.index_select(0, last)`").fix)
    v["guarded_calls"] = text
    # AOTI201's rewrite; AOTI202's move; and everything `aoti-lsp check --fix --unsafe-fixes` does
    v["rewritten"] = apply(SOURCE, mean_finding.fix)
    v["moved"] = apply(SOURCE, fixes_of(SOURCE, "AOTI202", "lengths.numel() == 0").fix)
    v["fix_all"] = fix_source(Source.from_text(SOURCE, "serving.py"), Config(), unsafe=True).data.decode()

    files = {}
    for name, text in v.items():
        folder = root / name
        folder.mkdir()
        files[name] = folder / "serving.py"
        files[name].write_text(text)
    # three compiles: the unfixed models, and BagMean rewritten
    for name, which in (("unfixed", "bag,last"), ("rewritten", "bag")):
        res = run(harness, root / name, str(files[name]), "build", which)
        assert res.returncode == 0, res.stderr[-3000:]
    # the other variants' models export to the same programs (checked in
    # test_guard_in_forward_leaves_no_trace): they share those packages
    share = {"guarded_calls": {"bag": "unfixed", "last": "unfixed"}, "moved": {"bag": "unfixed", "last": "unfixed"},
             "fix_all": {"bag": "rewritten", "last": "unfixed"}, "rewritten": {"last": "unfixed"}}
    for name, links in share.items():
        for pkg, origin in links.items():
            fname = {"bag": "bag_mean.pt2", "last": "last_item.pt2"}[pkg]
            os.symlink(root / origin / fname, root / name / fname)
    return harness, files, v


def test_fixes_are_what_the_issue_asks(work):
    _, _, v = work
    assert "        total = lengths.sum(0)\n" in v["rewritten"]
    assert ("    if lengths.numel() == 0:\n        result = values.new_zeros(values.shape[1:])\n"
            "    else:\n        result = runner(values, lengths)\n") in v["guarded_calls"]
    assert ("    if values.numel() == 0:\n        return (values.new_zeros((lengths.shape[0], *values.shape[1:])), "
            "torch.zeros(values.shape[0], dtype=values.dtype, device=lengths.device))\n"
            "    return runner(values, lengths)\n") in v["guarded_calls"]
    assert "if lengths.numel() == 0:\n            return" not in v["moved"]
    assert "if lengths.numel() == 0:\n        result = values.new_zeros" in v["moved"]
    # after fix-all nothing of AOTI201/AOTI202 is left
    left = [f for f in analyze(Source.from_text(v["fix_all"], "serving.py"), Config()).findings if f.code in ("AOTI201", "AOTI202")]
    assert left == []


def test_unfixed_offsets_last_segfaults_even_with_the_guard_in_forward(torch, work):
    harness, files, _ = work
    data = inputs(torch)
    # eager: the guard is a real branch there
    model = load(files["unfixed"], "unfixed_eager").BagMean()
    assert torch.equal(model(*data["empty"]), torch.zeros(4))
    res, _ = call(torch, harness, files["unfixed"], files["unfixed"].parent, [("serve_mean", data["empty"])])
    assert res.returncode == -signal.SIGSEGV, (res.returncode, res.stderr[-2000:])
    # the same package is fine on non-empty input (the crash is the empty input, not the build)
    res, out = call(torch, harness, files["unfixed"], files["unfixed"].parent, [("serve_mean", data["full"])])
    assert res.returncode == 0, res.stderr[-2000:]
    assert torch.allclose(out[0], model(*data["full"]))


def test_unfixed_gather_index_copy_fails_with_index_out_of_bounds(torch, work):
    harness, files, _ = work
    data = inputs(torch)
    model = load(files["unfixed"], "unfixed_eager2").LastItem()
    with pytest.raises(RuntimeError, match="out of bounds"):  # eager index_copy into an empty tensor
        model(*data["no_values"])
    res, _ = call(torch, harness, files["unfixed"], files["unfixed"].parent, [("serve_last", data["no_values"])])
    assert res.returncode != 0
    assert "index out of bounds: 0 <= tmp" in res.stderr, res.stderr[-2000:]
    assert "Exception raised from cpp_fused_" in res.stderr


def test_guard_in_forward_leaves_no_trace(torch, work):
    """What AOTI202 claims: the exported program is the same with or without the guard."""
    _, files, _ = work
    data = inputs(torch)
    programs = {}
    for name in ("unfixed", "moved", "rewritten", "fix_all"):
        mod = load(files[name], f"export_{name}")
        ep = torch.export.export(mod.BagMean(), (torch.randn(5, 4), torch.tensor([2, 3])), dynamic_shapes=mod.DYNAMIC)
        programs[name] = (ep.graph_module.code, str(ep.range_constraints))
    assert programs["unfixed"] == programs["moved"]
    assert programs["rewritten"] == programs["fix_all"]
    assert programs["unfixed"] != programs["rewritten"]
    # and the empty case cannot be traced instead: export refuses an empty example
    mod = load(files["unfixed"], "export_empty")
    with pytest.raises(torch._dynamo.exc.UserError, match="specialized it to be a constant \\(0\\)"):
        torch.export.export(mod.BagMean(), data["empty"], dynamic_shapes=mod.DYNAMIC)


@pytest.mark.parametrize("variant", ["guarded_calls", "moved", "rewritten", "fix_all"])
def test_fixed_code_matches_eager_and_survives_empty_input(torch, work, variant):
    harness, files, _ = work
    data = inputs(torch)
    eager = load(files["unfixed"], f"eager_{variant}")
    bag, last = eager.BagMean(), eager.LastItem()
    cases = [("serve_mean", data["full"]), ("serve_mean", data["empty"]), ("serve_mean", data["no_values"])]
    if variant in ("guarded_calls", "fix_all"):
        cases += [("serve_last", data["full"]), ("serve_last", data["empty"]), ("serve_last", data["no_values"])]
    res, out = call(torch, harness, files[variant], files[variant].parent, cases)
    assert res.returncode == 0, (res.returncode, res.stderr[-3000:])
    mean_full, mean_empty, mean_no_values = out[:3]
    assert torch.allclose(mean_full, bag(*data["full"]))
    assert torch.equal(mean_empty, torch.zeros(4))
    assert torch.equal(mean_no_values, torch.zeros(4))
    if len(out) > 3:
        (items, mask), (e_items, e_mask), (n_items, n_mask) = out[3:]
        want_items, want_mask = last(*data["full"])
        assert torch.allclose(items, want_items) and torch.equal(mask, want_mask)
        assert e_items.shape == (0, 4) and e_mask.shape == (0,)
        assert torch.equal(n_items, torch.zeros(2, 4)) and n_mask.shape == (0,)


def test_guard_is_effective_under_torch_compile(torch, work):
    """Why AOTI202 stays silent for torch.compile: Dynamo keeps the branch (it guards on the
    size and recompiles), so the empty input takes it. Dynamo only (backend="eager")."""
    _, files, _ = work
    data = inputs(torch)
    model = load(files["unfixed"], "compiled").BagMean()
    compiled = torch.compile(model, backend="eager", dynamic=True)
    assert torch.allclose(compiled(*data["full"]), model(*data["full"]))
    assert torch.equal(compiled(*data["empty"]), torch.zeros(4))


def test_a_static_export_is_told_and_the_rewrite_is_not_offered_for_it(torch, work, tmp_path):
    """BagMean exported without `dynamic_shapes`: AOTI201 says so, and offers no empty-safe
    rewrite of `forward`. What it claims, measured: the package of the rewritten forward, exported
    static, still reads the example's sizes (5 values, 2 lengths): wrong on 4 lengths, and the
    empty input does not come back as eager's zeros. One compile."""
    harness, _, v = work
    static = v["unfixed"].replace("torch.export.export(BagMean(), example, dynamic_shapes=DYNAMIC)",
                                  "torch.export.export(BagMean(), example)")
    assert static != v["unfixed"]
    finding = fixes_of(static, "AOTI201", "`offsets[-1]`")
    assert "exported without `dynamic_shapes`" in finding.message
    assert finding.fix is None or "numel() == 0" in "".join(e.text for e in finding.fix.edits)  # the callers' check only
    assert not finding.alternatives
    assert any("an empty-safe `forward` does not help" in r.message for r in finding.related)

    # the user applies the rewrite anyway: the static package of it
    rewritten = v["rewritten"].replace("torch.export.export(BagMean(), example, dynamic_shapes=DYNAMIC)",
                                       "torch.export.export(BagMean(), example)")
    assert "total = lengths.sum(0)" in rewritten and rewritten != v["rewritten"]
    folder = tmp_path / "static"
    folder.mkdir()
    code = folder / "serving.py"
    code.write_text(rewritten)
    res = run(harness, folder, str(code), "build", "bag")
    assert res.returncode == 0, res.stderr[-3000:]
    data = inputs(torch)
    bag = load(code, "static_eager").BagMean()
    res, out = call(torch, harness, code, folder, [("serve_mean", data["full"])])
    assert res.returncode == 0, res.stderr[-2000:]
    assert not torch.allclose(out[0], bag(*data["full"]))  # 4 lengths, 6 values: read as 2 and 5
    res, out = call(torch, harness, code, folder, [("serve_mean", data["empty"])])
    assert res.returncode != 0 or not torch.equal(out[0], torch.zeros(4)), out
