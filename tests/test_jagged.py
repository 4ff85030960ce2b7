"""AOTI201 / AOTI202 without torch: rule examples, guards, configuration, snippets, fixes."""

from __future__ import annotations

import textwrap

import pytest
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.findings import Applicability
from aoti_lsp.fixes.fixer import apply_edits, fix_source
from aoti_lsp.project.project import Project, summarize
from aoti_lsp.rules import rule_by_code
from aoti_lsp.analysis.source import Source

RULES = [rule_by_code("AOTI201"), rule_by_code("AOTI202")]


def findings(code: str, rule: str | None = None, config: Config | None = None, project=None, path="m.py"):
    src = Source.from_text(textwrap.dedent(code), path)
    result = analyze(src, config or Config(), project=project)
    assert result.errors == []
    return [f for f in result.findings if rule is None or f.code == rule]


# AOTI evidence in the file (it loads some package): its forwards are in the rules' scope
EVIDENCE = "\n\nrunner = torch._inductor.aoti_load_package('other.pt2')\n"


def model(body: str, params: str = "values, lengths", evidence: bool = True) -> str:
    return "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, " + params + "):\n" + textwrap.indent(
        textwrap.dedent(body), " " * 8) + (EVIDENCE if evidence else "")


# -- the rules' own examples (they are also the docs) ----------------------------------------
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_examples(rule):
    for code in rule.invalid:
        assert [f for f in findings(code) if f.code == rule.code], code
    for code in rule.valid:
        assert not [f for f in findings(code) if f.code == rule.code], code


# -- AOTI201: what is and is not reported ----------------------------------------------------
@pytest.mark.parametrize("body", [
    "return torch.cumsum(lengths, 0)[-1]",
    "offsets = lengths.cumsum(0)\nreturn offsets[-1]",
    "offsets = torch.cumsum(lengths, 0)\nlast = torch.where(offsets > 0, offsets - 1, 0)\nreturn values[last]",
    "return lengths.max()",
    "return torch.min(lengths)",
    "return lengths[-1:]",
    "return values[lengths.cumsum(0)[:-1]]",
    "return values.index_select(0, lengths.long().clamp(min=0))",
    "return torch.take(values, lengths - 1)",
    "return torch.zeros_like(values).index_copy(0, lengths.cumsum(0) - 1, values[:lengths.shape[0]])",
    "if lengths.numel() == 0:\n    pass\nreturn lengths[-1]",  # no exit: not a guard
    "if values.numel() == 0:\n    return values\nreturn lengths[-1]",  # another tensor
    "x = lengths[-1]\nif lengths.numel() == 0:\n    return values\nreturn x",  # after the use
    "if lengths.numel() == 0 and values.numel() == 0:\n    return values\nreturn lengths[-1]",  # `and`
    "if lengths.numel() == 0:\n    return values\nreturn values[lengths.cumsum(0) - 1]",  # lengths [0, 0]: N = 0
])
def test_reported(body):
    assert findings(model(body), "AOTI201"), body


@pytest.mark.parametrize("body", [
    "return lengths.sum()",
    "return torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, 0)])[-1]",
    "return torch.cat([torch.zeros(1, dtype=lengths.dtype), lengths.cumsum(0)])[-1]",
    "return torch.nn.functional.pad(lengths.cumsum(0), (1, 0))[-1]",
    "return torch.max(lengths, values.long())",  # elementwise
    "return torch.segment_reduce(values, 'mean', lengths=lengths)",
    ("seg = torch.repeat_interleave(torch.arange(lengths.shape[0]), lengths, output_size=values.shape[0])\n"
    "return values.new_zeros(lengths.shape[0], values.shape[1]).index_add(0, seg, values)"),
    "return values[:, -1]",
    "return self.table[lengths - 1]",  # a module weight
    "if lengths.numel() == 0:\n    return values\nreturn lengths[-1]",
    "if not lengths.numel():\n    raise ValueError('empty')\nreturn lengths[-1]",
    "if len(lengths) == 0 or values is None:\n    return values\nreturn lengths.max()",
    "if lengths.shape[0] > 0:\n    return lengths[-1]\nreturn values",
    "if lengths.size(0) == 0:\n    x = values\nelse:\n    x = lengths[-1]\nreturn x",
    "return lengths[-1] if lengths.numel() else values",
    "return lengths.numel() > 0 and lengths[-1]",
    "return lengths.numel() == 0 or lengths[-1]",
    "torch._check(lengths.numel() > 0)\nreturn lengths[-1]",
    "assert lengths.shape[0] > 0\nreturn lengths[-1]",
    "offsets = lengths.cumsum(0)\nif offsets.numel() == 0:\n    return values\nreturn offsets[-1]",
    "if values.numel() == 0:\n    return values\nreturn values[lengths.cumsum(0) - 1]",
    "if lengths.sum() == 0:\n    return values\nreturn values[lengths.cumsum(0) - 1]",
    "return lengths[-1]  # noqa: AOTI201",
])
def test_not_reported(body):
    assert not findings(model(body), "AOTI201"), body


def test_only_forward_and_aot_compiled_functions():
    code = "import torch\n\ndef f(values, lengths):\n    return lengths[-1]\n"
    assert not findings(code, "AOTI201")
    # torch.compile specialises sizes 0 and 1 and keeps guards: no AOTI package runs it
    assert not findings(code + "g = torch.compile(f)\n", "AOTI201")
    assert not findings(code.replace("def f", "@torch.compile\ndef f"), "AOTI201")
    assert findings(code + "so = torch._export.aot_compile(f, (x, y))\n", "AOTI201")


def test_configured_names():
    code = model("return sizes[-1] + lengths[-1]", "values, sizes, lengths")
    assert [f.message.split("`")[1] for f in findings(code, "AOTI201")] == ["lengths[-1]"]
    config = Config(options={"jagged-names": ["sizes", "*_lens"]})
    assert [f.message.split("`")[1] for f in findings(code, "AOTI201", config)] == ["sizes[-1]"]
    assert findings(model("return seq_lens[-1]", "values, seq_lens"), "AOTI201", config)


def test_message_says_what_happens_and_which_input():
    (f,) = findings(model("offsets = torch.cumsum(item_lengths, 0)\nreturn offsets[-1]", "values, item_lengths"), "AOTI201")
    assert f.message == "`offsets[-1]` reads out of bounds when jagged input `item_lengths` is empty"
    (f,) = findings(model("return values.index_select(0, lengths - 1)"), "AOTI201")
    assert f.message == "`values.index_select(0, lengths - 1)` indexes out of bounds when jagged input `lengths` has no values"
    # what torch does (the segfault, eager's IndexError, `index out of bounds`) is on the rule page
    from aoti_lsp.rules import rule_by_code

    page = rule_by_code("AOTI201").explanation
    assert "segfault" in page and "IndexError" in page and "index out of bounds" in page


# -- fixes -------------------------------------------------------------------------------------
def test_rewrite_first_guard_as_alternative():
    code = model("offsets = torch.cumsum(lengths, 0)\nreturn values.sum(0) / offsets[-1]")
    (f,) = findings(code, "AOTI201")
    # no package of M is visible: the rule is not certain, nothing is applied
    assert f.fix.title.startswith("Use `lengths.sum(0)`") and f.fix.applicability == Applicability.DISPLAY
    (guard,) = f.alternatives
    assert guard.applicability == Applicability.DISPLAY and not guard.snippet
    fixed = apply_edits(code.encode(), guard.edits).decode()
    assert "        if lengths.numel() == 0:\n            return values.new_zeros(values.shape[1:])\n        offsets" in fixed
    assert not findings(fixed, "AOTI201")
    assert fix_source(Source.from_text(code), Config(), unsafe=True).applied == 0


def test_rewrite_is_unsafe_where_a_package_certainly_runs_the_forward():
    code = model("offsets = torch.cumsum(lengths, 0)\nreturn values.sum(0) / offsets[-1]", evidence=False) + EXPORT
    (f,) = findings(code, "AOTI201")
    assert f.fix.applicability == Applicability.UNSAFE
    result = fix_source(Source.from_text(code), Config(), unsafe=True)
    assert result.applied == 1 and "values.sum(0) / lengths.sum(0)" in result.data.decode()


@pytest.mark.parametrize("body", [
    "x = lengths.max()\nreturn self.head(values, x)",  # an output of unknown shape
    "return self.pool(values, lengths.max()), self.other(values, lengths.min())",  # two of them
    "if values.dim() > 2:\n    return values, lengths\nreturn lengths.max()",  # outputs differ in number
])
def test_no_early_return_whose_outputs_are_not_known(body):
    """A guessed `torch.zeros(0)` has the wrong rank or arity for most forwards: not offered."""
    (f, *_) = findings(model(body), "AOTI201")
    assert f.fix is None and not f.alternatives


def test_early_return_matches_every_output():
    code = model("a = lengths.max()\nreturn values.index_select(0, lengths - 1) * a, lengths.float()")
    f = findings(code, "AOTI201")[0]
    (edit,) = f.fix.edits
    assert edit.text.startswith("if values.numel() == 0 or lengths.numel() == 0:\n            return "
                                "(values.new_zeros((lengths.shape[0], *values.shape[1:])), lengths.new_zeros(lengths.shape[0], dtype=torch.float32))")


def test_snippet_text_is_escaped():
    from aoti_lsp.fixes.jagged import Code

    code = Code.of("a['$x'] + {") + Code.of("y}", True)
    assert code.render(True) == "a['\\$x'] + {${1:y\\}}"
    assert code.render(False) == "a['$x'] + {y}"


def test_guard_of_all_sites_of_a_function_is_one_fix():
    code = model("a = lengths.max()\nreturn values.index_select(0, lengths.cumsum(0) - 1) * a")
    fs = findings(code, "AOTI201")
    assert len(fs) == 2 and fs[0].fix == fs[1].fix
    assert fs[0].fix.edits[0].text.startswith("if values.numel() == 0 or lengths.numel() == 0:")
    fixed = apply_edits(code.encode(), fs[0].fix.edits).decode()
    assert not [f for f in findings(fixed) if f.code == "AOTI201"]


# -- AOTI202 -------------------------------------------------------------------------------------
DIMS = "dynamic_shapes=({0: torch.export.Dim('N')}, {0: torch.export.Dim('B')})"
EXPORT = ("\n\nep = torch.export.export(M(), (torch.randn(4, 8), torch.tensor([1, 3])), " + DIMS + ")\n"
          "torch._inductor.aoti_compile_and_package(ep, package_path='m.pt2')\n")
PLAIN_EXPORT = "\n\nrun = torch.export.export(M(), (torch.randn(4, 8), torch.tensor([1, 3]))).module()\n"


TRACED = ("\n\nfrom torch.fx.experimental.proxy_tensor import make_fx\nargs = (torch.randn(4, 8), torch.tensor([1, 3]))\n"
          "{trace}\nep = torch.export.export(fx, args)\ntorch._inductor.aoti_compile_and_package(ep, package_path='m.pt2')\n")


@pytest.mark.parametrize("trace", ["fx = make_fx(M(), tracing_mode='symbolic')(*args)",
                                   "tracer = make_fx(M(), tracing_mode='symbolic')\nfx = tracer(*args)"])
@pytest.mark.parametrize("guard, reported", [("if lengths.numel() == 0:\n    return values", True),
                                             ("torch._check(lengths.shape[0] > 0)", False)])
def test_a_guard_of_a_class_make_fx_traces_before_the_export(trace, guard, reported):
    """mattersim's and nequip's shape: the `if` is gone from make_fx's graph (measured in
    tests/torch/test_jagged_checks.py); other forms are not measured through make_fx."""
    code = model(guard + "\nreturn values.sum(0) / lengths.sum()", evidence=False) + TRACED.format(trace=trace)
    got = findings(code, "AOTI202")
    assert [f.message.split(" `")[0] for f in got] == (["make_fx's trace drops"] if reported else [])


HELPER = ("\n\ndef package(model, args, path):\n"
          "    ep = torch.export.export(model, args, " + DIMS + ")\n"
          "    return torch._inductor.aoti_compile_and_package(ep, package_path=path)\n\n\n"
          "class Other(torch.nn.Module):\n    def forward(self, values, lengths):\n        return values\n\n\n")
ARGS = "(torch.randn(4, 8), torch.tensor([1, 3]))"


@pytest.mark.parametrize("calls, reported", [
    (f"package(M(), {ARGS}, 'm.pt2')\n", True),
    (f"m = M().eval()\npackage(model=m, args={ARGS}, path='m.pt2')\n", True),
    (f"package(M(), {ARGS}, 'm.pt2')\npackage(Other(), {ARGS}, 'o.pt2')\n", False),  # which one: not said
    ("", False),  # no caller here: no package of M is known
])
def test_a_guard_of_a_model_a_helper_exports_and_packages(calls, reported):
    """mattersim's `compile_m3gnet_aoti(m3gnet, ...)`, nequip's `aot_export_model(model, ...)`: the
    helper's parameter is what its callers in the file pass, when they all pass one model."""
    code = model("if lengths.numel() == 0:\n    return values\nreturn values.sum(0) / lengths.sum()",
                 evidence=False) + HELPER + calls
    assert bool(findings(code, "AOTI202")) == reported


@pytest.mark.parametrize("guard", [
    "if lengths.numel() == 0:\n    return values",
    "if lengths.shape[0] == 0:\n    return values",
    "if not lengths.numel():\n    return values",
    "if len(lengths) == 0:\n    return values",
    "if lengths.size(0) < 1:\n    raise ValueError('empty')",
    "torch._check(lengths.shape[0] > 0)",
    "x = torch.cond(lengths.shape[0] == 0, lambda v: v, lambda v: v * 2, (values,))",
])
def test_guards_dropped_by_export(guard):
    code = model(guard + "\nreturn values.sum(0) / lengths.sum()")
    assert not findings(code, "AOTI202")  # eager: effective
    assert not findings(code + "\nfast = torch.compile(M())\n", "AOTI202")
    assert not findings(code + PLAIN_EXPORT, "AOTI202")  # exported, but no AOTI package runs it
    (f,) = findings(code + EXPORT, "AOTI202")
    assert f.message.startswith(("torch.export drops `", "torch.export decides `torch.cond`"))
    assert any("before calling the package" in r.message for r in f.related)


@pytest.mark.parametrize("guard", [
    "if lengths.sum() == 0:\n    return values",  # a tensor predicate: export fails loudly instead
    "if self.weight.numel() == 0:\n    return values",
    "if values.dim() == 0:\n    return values",
])
def test_not_guards_of_inputs(guard):
    assert not findings(model(guard + "\nreturn values") + EXPORT, "AOTI202")


@pytest.mark.parametrize("guard", [
    # rbavery/satlas-aoti's Model.forward: per-head losses in a list, targets filtered into one
    "losses = []\nfor w in self.ws:\n    losses.append(values.sum() * w)\nif len(losses) > 0:\n"
    "    losses = torch.stack(losses)\nelse:\n    losses = torch.zeros((), device=lengths.device)",
    "kept = [v for v in values if v is not None]\nif len(kept) == 0:\n    return values",
    "outs, losses = [], []\nfor w in self.ws:\n    losses.append(values.sum() * w)\nif not len(losses):\n"
    "    losses = torch.zeros((), device=lengths.device)",
    "pads = [None] * lengths.dim()\nif len(pads) == 0:\n    return values",
])
def test_a_python_lists_length_is_not_an_inputs_size(guard):
    """A list's length is fixed when torch.export traces: the package never sees an input's
    emptiness through it (nothing dropped that an empty input would need)."""
    assert not findings(model(guard + "\nreturn values.sum(0) / lengths.sum()") + EXPORT, "AOTI202")


@pytest.mark.parametrize("guard", [
    "n = lengths\nif len(n) == 0:\n    return values",  # the tensor itself, under another name
    "n = lengths.view(-1)\nif n.numel() == 0:\n    return values",
])
def test_a_tensor_under_another_name_is_still_an_input(guard):
    (f,) = findings(model(guard + "\nreturn values.sum(0) / lengths.sum()") + EXPORT, "AOTI202")
    assert f.message.startswith("torch.export drops `")


def test_cross_file_needs_the_project():
    models = model("if lengths.numel() == 0:\n    return values\nreturn values.sum(0) / lengths.cumsum(0)[-1]")
    exporter = ("import torch\nfrom pkg.models import M\n\nep = torch.export.export(M(), (a, b))\n"
                "torch._inductor.aoti_compile_and_package(ep, package_path='m.pt2')\n")
    assert not findings(models, "AOTI202", path="pkg/models.py")
    project = Project()
    project.update("pkg/export.py", summarize(Source.from_text(exporter, "pkg/export.py")))
    project.update("pkg/models.py", summarize(Source.from_text(models, "pkg/models.py")))
    fs = findings(models, project=project, path="pkg/models.py")
    assert [f.code for f in fs] == ["AOTI202", "AOTI201"]
    assert fs[0].related[0].path == "pkg/export.py"
    # another module's class of the same name is not this one
    assert not findings(models, "AOTI202", project=project, path="other/models2.py")



def test_aoti202_looks_only_where_a_package_can_run_the_forward():
    """A file that exports (or loads) but compiles nothing holds no forward an AOTI package
    certainly runs: AOTI202 does not analyse it (before: every file spelling an export was)."""
    guarded = ("import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, values, lengths):\n"
               "        if lengths.numel() == 0:\n            return values\n        return values.sum(0)\n")
    exports_only = guarded + "\nep = torch.export.export(M(), (a, b))\n"
    compiler = ("import torch\nfrom pkg.models import M\n\nep = torch.export.export(M(), (a, b))\n"
                "torch._inductor.aoti_compile_and_package(ep, package_path='m.pt2')\n")
    rule = rule_by_code("AOTI202")
    project = Project()
    project.update("pkg/models.py", summarize(Source.from_text(guarded, "pkg/models.py")))
    project.update("pkg/own.py", summarize(Source.from_text(exports_only, "pkg/own.py")))
    assert not rule.relevant(Source.from_text(exports_only, "pkg/own.py"), project)
    assert not rule.relevant(Source.from_text(guarded, "pkg/models.py"), project)
    assert not findings(exports_only, "AOTI202", project=project, path="pkg/own.py")
    # another file AOT-compiles M: the file defining it is analysed, and the guard is reported
    project.update("pkg/build.py", summarize(Source.from_text(compiler, "pkg/build.py")))
    assert rule.relevant(Source.from_text(guarded, "pkg/models.py"), project)
    assert [f.code for f in findings(guarded, "AOTI202", project=project, path="pkg/models.py")] == ["AOTI202"]
    # a file that compiles its own class is analysed
    assert rule.relevant(Source.from_text(exports_only + "torch._inductor.aoti_compile_and_package(ep)\n"), project)

def test_summary_is_small_and_picklable():
    import pickle

    src = Source.from_text("import torch\nfrom .models import M\nep = torch.export.export(M(), (a,))\n"
                           "torch._inductor.aoti_compile_and_package(ep, package_path='m.pt2')\n", "pkg/x.py")
    summary = summarize(src)
    assert pickle.loads(pickle.dumps(summary)) == summary
    # one copy for both jagged rules, kept by the first enabled one
    assert summary["AOTI201"]["packages"] == [("m.pt2", "M", "models.M")] and "AOTI202" not in summary
    alone = summarize(src, Config(ignore=("AOTI201",)))
    assert alone["AOTI202"]["packages"] == [("m.pt2", "M", "models.M")] and "AOTI201" not in alone


def test_files_without_triggers_are_not_parsed():
    # a jagged name alone is not enough: no forward and nothing compiled
    src = Source.from_text("x = lengths[-1]\n")
    assert all(not r.wants(src, Config()) for r in RULES)
    assert analyze(src, Config()).findings == []
    assert src._tree is None


def test_callers_in_other_files_count():
    models = model("return values.sum(0) / lengths.cumsum(0)[-1]")
    exporter = ("import torch\nfrom models import M\n\n"
                "torch._inductor.aoti_compile_and_package(torch.export.export(M(), (a, b), " + DIMS + "), package_path='m.pt2')\n")
    checked = ("import torch\nrun = torch._inductor.aoti_load_package('m.pt2')\n\n\ndef score(v, l):\n"
               "    if l.numel() == 0:\n        return v.new_zeros(v.shape[1:])\n    return run(v, l)\n")
    unchecked = "import torch\nrun = torch._inductor.aoti_load_package('m.pt2')\nout = run(batch.values, batch.lengths)\n"

    def project(*files):
        p = Project()
        for path, text in files:
            p.update(path, summarize(Source.from_text(text, path)))
        return p

    both = project(("pkg/models.py", models), ("pkg/export.py", exporter), ("pkg/serve.py", checked))
    assert not findings(models, "AOTI201", project=both, path="pkg/models.py")
    more = project(("pkg/models.py", models), ("pkg/export.py", exporter), ("pkg/serve.py", checked),
                   ("pkg/batch.py", unchecked))
    (f,) = findings(models, "AOTI201", project=more, path="pkg/models.py")
    assert [(r.path, r.message) for r in f.related] == [
        ("pkg/export.py", "`M` exported here: torch.export drops an empty-input check inside `forward`: it belongs where the package is called"),
        ("pkg/batch.py", "a call of the package without the check")]


def test_guard_in_a_class_nobody_exports_is_not_even_parsed():
    code = "class Pool:\n    def forward(self, lengths):\n        if lengths.numel() == 0:\n            return lengths\n        return lengths.sum()\n"
    exported = ("import torch\nfrom pool import Pool\nep = torch.export.export(Pool(), (x,))\n"
                "torch._inductor.aoti_compile_and_package(ep, package_path='p.pt2')\n")
    rule = rule_by_code("AOTI202")
    project = Project()
    project.update("/ws/other.py", summarize(Source.from_text("import torch\nep = torch.export.export(Other(), (x,))\n", "/ws/other.py")))
    src = Source.from_text(code, "/ws/pool.py")
    assert rule.wants(src, Config()) and not rule.relevant(src, project)
    only = Config(select=("AOTI202",))
    assert analyze(src, only, project=project).findings == [] and src._tree is None
    project.update("/ws/export.py", summarize(Source.from_text(exported, "/ws/export.py")))
    src = Source.from_text(code, "/ws/pool.py")
    assert rule.relevant(src, project)
    assert [f.code for f in analyze(src, only, project=project).findings] == ["AOTI202"]


def test_fix_all_leaves_training_code_byte_identical():
    """The issue's regression: --fix --unsafe-fixes (run for AOTI001) rewrote training code."""
    from pathlib import Path

    folder = Path(__file__).parent / "fixtures" / "AOTI201"
    before = (folder / "training.in.py").read_text()
    after = fix_source(Source.from_text(before, str(folder / "training.in.py")), Config(), unsafe=True).data.decode()
    served = before.index("class Served")
    assert after[:served] == before[:served]  # JaggedMean (autograd) and Trained (no package)
    assert "return values.sum(0) / lengths.sum(0)" in after[served:]


# -- scope and facts of issue 20 ------------------------------------------------------------------
def test_autograd_function_and_backward_are_out_of_scope():
    code = ("import torch\n\n\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, values, offsets):\n"
            "        return values.sum(0) / offsets[-1]\n\n    @staticmethod\n    def backward(ctx, grad):\n"
            "        return grad, None\n" + EVIDENCE)
    assert not findings(code, "AOTI201")
    from_import = code.replace("import torch\n", "import torch\nfrom torch.autograd import Function\n").replace(
        "(torch.autograd.Function)", "(Function)")
    assert not findings(from_import, "AOTI201")
    # the same body in an nn.Module forward is reported
    assert findings(model("return values.sum(0) / offsets[-1]", "values, offsets"), "AOTI201")


def test_no_aoti_evidence_no_finding():
    body = "return values.sum(0) / offsets[-1]"
    assert not findings(model(body, "values, offsets", evidence=False), "AOTI201")
    assert findings(model(body, "values, offsets"), "AOTI201")


@pytest.mark.parametrize("caller,silent", [
    ("self.inner(x, torch.ops.fbgemm.asynchronous_complete_cumsum(lengths))", True),
    ("self.inner(x, offsets=torch.cat([lengths.new_zeros(1), lengths.cumsum(0)]))", True),
    ("self.inner(x, torch.nn.functional.pad(lengths.cumsum(0), (1, 0)))", True),
    ("self.inner(x, lengths.cumsum(0))", False),
    ("self.inner(x, offsets=lengths.cumsum(0))", False),
])
def test_complete_offsets_followed_from_the_callers(caller, silent):
    code = textwrap.dedent(f"""\
        import torch


        class Inner(torch.nn.Module):
            def forward(self, x, offsets):
                return x[: offsets[-1]] * (offsets[1:] - offsets[:-1]).sum()


        class Outer(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()

            def forward(self, x, lengths):
                return {caller}
        """) + EVIDENCE
    assert (not findings(code, "AOTI201")) == silent


def test_complete_offsets_from_another_file(tmp_path):
    """The callers' files hold only `offsets=` calls: summarised unparsed ("lazy_kw") and read
    when the forward's check asks (jagged.summary_from_text)."""
    inner = "import torch\n\n\nclass Inner(torch.nn.Module):\n    def forward(self, x, seq_offsets):\n        return x[: seq_offsets[-1]]\n" + EVIDENCE
    good = "import torch\nfrom inner import Inner\n\ny = Inner()(x, seq_offsets=torch.ops.fbgemm.asynchronous_complete_cumsum(l))\n"
    bad = "import torch\nfrom inner import Inner\n\ny = Inner()(x, seq_offsets=torch.cumsum(l, 0))\n"
    project = Project()

    def add(name, text, lazy=True):
        path = tmp_path / name
        path.write_text(text)
        summary = summarize(Source.from_text(text, str(path)), lazy=lazy)  # lazy: as a run's pass 1
        project.update(str(path), summary)
        return summary

    assert add("inner.py", inner)
    assert add("good.py", good) == {"AOTI201": {"complete_kw": [("seq_offsets", True)]}}  # complete_cumsum: parsed
    inner_path = str(tmp_path / "inner.py")
    assert not findings(inner, "AOTI201", project=project, path=inner_path)
    assert add("bad.py", bad) == {"AOTI201": {"lazy_kw": True}}  # only `offsets=`: not parsed
    assert findings(inner, "AOTI201", project=project, path=inner_path)
    fixed = bad.replace("torch.cumsum(l, 0)", "torch.ops.fbgemm.asynchronous_complete_cumsum(l)")
    (tmp_path / "bad.py").write_text(fixed + "\n")  # on disk only: the version moves when seen (disk_changed)
    assert project.disk_changed()
    assert not findings(inner, "AOTI201", project=project, path=inner_path)  # read again from the file
    assert add("bad.py", bad, lazy=False) == {"AOTI201": {"complete_kw": [("seq_offsets", False)]}}  # an editor's


def test_a_value_that_is_not_complete_decides_before_the_unparsed_files_are_read(tmp_path, monkeypatch):
    """`all()` of the callers' verdicts: a caller the check sees already (its own file, or a parsed
    summary) passing non-complete offsets decides, so the files summarised unparsed are not parsed
    for it (torchrec: 62 parses, 0.18 s of a 0.43 s check). Findings are the same."""
    inner = ("import torch\n\n\nclass Inner(torch.nn.Module):\n    def forward(self, x, seq_offsets):\n"
             "        return x[: seq_offsets[-1]]\n\n\ny = Inner()(x, seq_offsets=torch.cumsum(l, 0))\n" + EVIDENCE)
    lazy = "import torch\nfrom inner import Inner\n\ny = Inner()(x, seq_offsets=s)\n"
    project = Project()
    for i in range(3):
        path = tmp_path / f"caller{i}.py"
        path.write_text(lazy)
        project.update(str(path), summarize(Source.from_text(lazy, str(path)), lazy=True))
    read = []
    real = Project.from_file
    monkeypatch.setattr(Project, "from_file", lambda self, path, *a, **k: read.append(path) or real(self, path, *a, **k))
    assert findings(inner, "AOTI201", project=project, path=str(tmp_path / "inner.py"))
    assert read == []
    complete = inner.replace("torch.cumsum(l, 0)", "torch.ops.fbgemm.asynchronous_complete_cumsum(l)")
    assert findings(complete, "AOTI201", project=project, path=str(tmp_path / "inner.py"))  # `s`: unknown
    assert len(read) == 1  # the first unparsed caller decides (its `s` is not known complete)


def test_complete_offsets_by_name_and_by_docstring():
    assert not findings(model("return x[: cu_seqlens[-1]]", "x, cu_seqlens"), "AOTI201")
    documented = model('"""x_offsets: (B + 1,) offsets, leading zero."""\nreturn x[: x_offsets[-1]]', "x, x_offsets")
    assert not findings(documented, "AOTI201")
    assert findings(model("return x[: x_offsets[-1]]", "x, x_offsets"), "AOTI201")


def test_values_of_a_jagged_pair_are_jagged():
    (f,) = findings(model("return values[-1:].sum(0) * lengths.shape[0]"), "AOTI201")
    assert f.message == "`values[-1:]` slices out of bounds when jagged input `values` is empty"
    # alone (no lengths/offsets beside it) `values` is not jagged
    assert not findings(model("return values[-1:]", "values, mask"), "AOTI201")
    # a check of the lengths does not cover it: lengths [0, 0] leave no values
    assert findings(model("if lengths.numel() == 0:\n    return values\nreturn values[-1:]"), "AOTI201")


def test_jagged_tensor_taken_out_of_an_input():
    body = 'uih_lengths = features["uih.lengths"]\nreturn features["x"] * uih_lengths.max()'
    (f,) = findings(model(body, "features"), "AOTI201")
    assert "`uih_lengths.max()`" in f.message and f.fix is None  # no guard can name it at the top
    assert not findings(model('uih_lengths = self.lengths\nreturn uih_lengths.max()', "features"), "AOTI201")


def test_a_project_that_packages_programs_it_cannot_name_brings_its_forwards_in():
    models = model("return values.sum(0) / offsets[-1]", "values, offsets", evidence=False)
    helper = ("import torch\n\n\ndef package(ep, path):\n"
              "    return torch._inductor.aoti_compile_and_package(ep, package_path=path)\n")
    project = Project()
    project.update("pkg/models.py", summarize(Source.from_text(models, "pkg/models.py")))
    assert not findings(models, "AOTI201", project=project, path="pkg/models.py")
    project.update("pkg/aot.py", summarize(Source.from_text(helper, "pkg/aot.py")))
    (f,) = findings(models, "AOTI201", project=project, path="pkg/models.py")
    assert f.fix.applicability == Applicability.DISPLAY  # possible, not certain


def test_guard_forms_aoti202_knows_are_the_measured_ones():
    guards = {
        "torch._check(values.shape[0] >= lengths.shape[0])": None,  # not an emptiness test
        "torch._check(lengths.sum().item() > 0)": None,  # kept by the package (measured)
        "torch._check_is_size(lengths.shape[0])": None,
        "torch._assert_async(torch.tensor(lengths.shape[0] > 0))": "a package never runs",
        "assert lengths.shape[0] > 0": "torch.export drops",
        "torch._check(lengths.shape[0] > 0)": "torch.export drops",
    }
    for guard, said in guards.items():
        fs = findings(model(guard + "\nreturn values.sum(0)", evidence=False) + EXPORT, "AOTI202")
        assert [f.message.split(" `")[0] for f in fs] == ([said] if said else []), guard


def test_an_assert_guard_moves_to_the_callers_like_a_check():
    code = model("assert lengths.shape[0] > 0\nreturn values.sum(0)", evidence=False) + (
        "\n\nep = torch.export.export(M(), (torch.randn(4, 8), torch.tensor([1, 3])))\n"
        "torch._inductor.aoti_compile_and_package(ep, package_path='m.pt2')\n"
        "run = torch._inductor.aoti_load_package('m.pt2')\n\n\ndef serve(v, l):\n    return run(v, l)\n")
    (f,) = findings(code, "AOTI202")
    moved = apply_edits(code.encode(), f.fix.edits).decode()
    assert "    assert l.shape[0] > 0\n    return run(v, l)\n" in moved
    assert "        assert lengths" not in moved


def test_the_taken_prefilter_finds_what_its_regex_finds():
    """aoti201._taken matches only where a starting literal is found: the same answer as the
    regex's own search, for the default names and configured ones (short or wildcard-led ones
    fall back to the search)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from aoti_lsp.analysis.jagged import DEFAULT_JAGGED_NAMES
    from aoti_lsp.rules.aoti201 import _jagged_taken, _taken

    bits = ["lengths", "x_lengths", "offsets", "seq_lens", "jagged_v", "cu_seqlens", "ids", "_ids", " = ", "=",
            "batch", ".", "[", "\n", " ", "\t", "features", "2", "(", "len", "lengths=="]
    configs = [DEFAULT_JAGGED_NAMES, ("*_ids",), ("x?_len*",), ("*",), ("len",), ("cu_seq*", "*_lengths")]

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.sampled_from(bits), max_size=24), st.sampled_from(configs))
    def check(parts, patterns):
        data = "".join(parts).encode()
        assert _taken(patterns, data) == (_jagged_taken(patterns).search(data) is not None)

    check()


# -- files that only export: summarised unparsed, read when a class they may name is asked ----
MODELS = ("import torch\n\n\nclass Pool(torch.nn.Module):\n    def forward(self, values, lengths):\n"
          "        return values.sum(0) / torch.cumsum(lengths, 0)[-1]\n")


def _project_of(tmp_path, files: dict[str, str], lazy: bool) -> Project:
    project = Project()
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        project.update(str(path), summarize(Source.from_text(text, str(path)), lazy=lazy))
    return project


@pytest.mark.parametrize("spelling", [
    "from models import Pool\n\nep = torch.export.export(Pool(), (v, l))\n",
    "from models import Pool\n\nm = Pool().eval()\nep = torch.export.export(m, (v, l))\n",
    "import models\n\nm = models.Pool().eval()\nep = torch.export.export(m, (v, l))\n",  # an attribute of the module
    "from pkg import Pool\n\nep = torch.export.export(Pool(), (v, l))\n",  # the package's __init__ defines it
    "from . import Pool\n\nep = torch.export.export(Pool(), (v, l))\n",
])
def test_an_export_in_a_file_summarised_unparsed_is_found_as_a_parsed_summary_finds_it(tmp_path, spelling):
    """exporter.py only exports: pass 1 summarises it unparsed ("lazy_exports"). models.py spells
    no export, so only the exporter puts Pool's forward in scope: the finding and its note naming
    the export are the same as with the exporter's parsed summary (pytorch/ao: 1.0 MB of tests
    that export their own classes were parsed for nothing)."""
    target = "pkg/__init__.py" if "pkg" in spelling or "from ." in spelling else "models.py"
    exporter = ("pkg/exporter.py" if "from ." in spelling else "exporter.py")
    files = {target: MODELS, exporter: "import torch\n" + spelling}
    lazy = _project_of(tmp_path, files, lazy=True)
    assert lazy.summaries[str(tmp_path / exporter)] == {"AOTI201": {"lazy_exports": True}}
    parsed = _project_of(tmp_path / "parsed", files, lazy=False)
    assert parsed.summaries[str(tmp_path / "parsed" / exporter)]["AOTI201"]["exports"]

    def seen(project, root):
        rule = rule_by_code("AOTI201")
        src = Source.from_text(MODELS, str(root / target))
        assert rule.relevant(src, project)  # the file is checked at all
        return [(f.code, f.message, [(r.message, r.path and r.path.replace(str(root), "")) for r in f.related])
                for f in findings(MODELS, "AOTI201", project=project, path=str(root / target))]

    got = seen(lazy, tmp_path)
    assert got and got == seen(parsed, tmp_path / "parsed")
    assert any("exported here" in m and p.endswith("exporter.py") for _, _, rel in got for m, p in rel)


def test_a_file_exporting_its_own_class_of_the_same_name_is_not_parsed(tmp_path, monkeypatch):
    """A test file that defines and exports its own `Pool` spells the name, not models.py's module:
    its export cannot be models.py's class (Model.qualified), so it is neither parsed nor a reason
    to check models.py; only its text is read."""
    own = "import torch\n\n\nclass Pool(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n\n" \
          "ep = torch.export.export(Pool(), (x,))\n"
    project = _project_of(tmp_path, {"models.py": MODELS, "test_pool.py": own}, lazy=True)
    asked = []
    real = Project.from_file
    monkeypatch.setattr(Project, "from_file", lambda self, path, name, *a: asked.append(name) or real(self, path, name, *a))
    src = Source.from_text(MODELS, str(tmp_path / "models.py"))
    assert not rule_by_code("AOTI201").relevant(src, project)
    assert findings(MODELS + EVIDENCE, "AOTI201", project=project, path=str(tmp_path / "models.py"))  # evidence: in scope
    assert "jagged exports" not in asked and set(asked) <= {"imports", "text"}


# -- a static export: the package keeps the example's sizes -------------------------------------
STATIC = ("\n\nep = torch.export.export(M(), (torch.randn(4, 8), torch.tensor([1, 3]))){extra}\n"
          "torch._inductor.aoti_compile_and_package(ep, package_path='m.pt2')\n")


@pytest.mark.parametrize("extra", ["", ".run_decompositions()"])
def test_a_static_export_is_told_and_gets_no_rewrite(extra):
    code = model("offsets = torch.cumsum(lengths, 0)\nreturn values.sum(0) / offsets[-1]", evidence=False) + STATIC.format(extra=extra)
    (f,) = findings(code, "AOTI201")
    assert "exported without `dynamic_shapes`" in f.message
    assert f.fix is None and not f.alternatives  # no call of the package here: nothing to guard
    assert any("an empty-safe `forward` does not help" in r.message for r in f.related)


@pytest.mark.parametrize("args, static", [
    ("dynamic_shapes=None", True),
    ("strict=True", True),
    (DIMS, False),
    ("dynamic_shapes=dims", False),
    ("**options", False),
    ("constraints=[dynamic_dim(x, 0)]", False),
])
def test_what_makes_an_export_static(args, static):
    code = model("return values.sum(0) / torch.cumsum(lengths, 0)[-1]", evidence=False) + \
        f"\n\nep = torch.export.export(M(), (v, l), {args})\ntorch._inductor.aoti_compile_and_package(ep)\n"
    (f,) = findings(code, "AOTI201")
    assert ("exported without `dynamic_shapes`" in f.message) == static, f.message
    assert (f.fix is None) == static


def test_a_class_exported_both_ways_is_not_called_static():
    code = model("return values.sum(0) / torch.cumsum(lengths, 0)[-1]", evidence=False) + STATIC.format(extra="") + EXPORT
    (f,) = findings(code, "AOTI201")
    assert "exported without" not in f.message and f.fix is not None


@pytest.mark.parametrize("lazy", [True, False])
def test_a_static_export_in_another_file_is_told(tmp_path, lazy):
    exporter = "import torch\nfrom models import Pool\n\nep = torch.export.export(Pool(), (v, l))\n"
    project = _project_of(tmp_path, {"models.py": MODELS, "exporter.py": exporter}, lazy=lazy)
    (f,) = findings(MODELS, "AOTI201", project=project, path=str(tmp_path / "models.py"))
    assert "`Pool` is exported without `dynamic_shapes`" in f.message
    dynamic = exporter.replace("(v, l))", "(v, l), dynamic_shapes=dims)")
    project = _project_of(tmp_path / "d", {"models.py": MODELS, "exporter.py": dynamic}, lazy=lazy)
    (f,) = findings(MODELS, "AOTI201", project=project, path=str(tmp_path / "d" / "models.py"))
    assert "exported without" not in f.message


def test_two_classes_of_one_name_each_get_their_own_export():
    """A PyTorch issue's reproduction defines its model twice: each forward is linked to the export
    of the class bound where its model is made (before: both to the first export)."""
    body = "    def forward(self, values, lengths):\n        return values.sum(0) / torch.cumsum(lengths, 0)[-1]\n"
    code = ("import torch\n\n\nclass Pool(torch.nn.Module):\n" + body +
            "\n\nmodel = Pool()\nso = torch._export.aot_compile(model, (v, l))\n"
            "\n\nclass Pool(torch.nn.Module):\n" + body +
            f"\n\nmodel = Pool()\nep = torch.export.export(model, (v, l), {DIMS})\n")
    first, second = findings(code, "AOTI201")
    assert [r.start for r in first.related if "exported here" in r.message] == [code.index("torch._export.aot_compile")]
    assert [r.start for r in second.related if "exported here" in r.message] == [code.index("torch.export.export")]
    assert "exported without `dynamic_shapes`" in first.message and "exported without" not in second.message


def test_a_helper_packaging_its_annotated_parameter_names_that_class():
    """NVIDIA/cosmos-framework packages `wrapper: _ChunkEncodeForAOT` in a nested helper: the
    program is that (private) class's, not one this file cannot name, so the eager forwards of
    other modules stay out of scope (three false positives before). Unannotated, or annotated
    `nn.Module`, it is still unknown, and they are in."""
    vision = model("return values.sum(0) / offsets[-1]", "values, offsets", evidence=False)
    helper = ("import torch\n\n\nclass _Chunk(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
              "def build(save_dir):\n    def variant(wrapper{}, x):\n"
              "        ep = torch.export.export(wrapper, (x,))\n"
              "        return torch._inductor.aoti_compile_and_package(ep, package_path=save_dir + '/c.pt2')\n"
              "    return variant(_Chunk(), torch.randn(2))\n")
    for annotation, in_scope in ((": _Chunk", False), (": torch.nn.Module", True), ("", True)):
        project = Project()
        project.update("pkg/vision.py", summarize(Source.from_text(vision, "pkg/vision.py")))
        project.update("pkg/vae.py", summarize(Source.from_text(helper.format(annotation), "pkg/vae.py")))
        found = findings(vision, "AOTI201", project=project, path="pkg/vision.py")
        assert bool(found) == in_scope, annotation
