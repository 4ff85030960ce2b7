"""AOTI201 / AOTI202 without torch: rule examples, guards, configuration, snippets, fixes."""

from __future__ import annotations

import textwrap

import pytest
from aoti_lsp.config import Config
from aoti_lsp.engine import analyze
from aoti_lsp.findings import Applicability
from aoti_lsp.fixer import apply_edits, fix_source
from aoti_lsp.project import Project, summarize
from aoti_lsp.rules import rule_by_code
from aoti_lsp.source import Source

RULES = [rule_by_code("AOTI201"), rule_by_code("AOTI202")]


def findings(code: str, rule: str | None = None, config: Config | None = None, project=None, path="m.py"):
    src = Source.from_text(textwrap.dedent(code), path)
    result = analyze(src, config or Config(), project=project)
    assert result.errors == []
    return [f for f in result.findings if rule is None or f.code == rule]


def model(body: str, params: str = "values, lengths") -> str:
    return "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, " + params + "):\n" + textwrap.indent(
        textwrap.dedent(body), " " * 8)


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


def test_only_forward_and_compiled_functions():
    code = "import torch\n\ndef f(values, lengths):\n    return lengths[-1]\n"
    assert not findings(code, "AOTI201")
    assert findings(code + "g = torch.compile(f)\n", "AOTI201")
    assert findings(code.replace("def f", "@torch.compile\ndef f"), "AOTI201")
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
    assert f.fix.title.startswith("Use `lengths.sum(0)`") and f.fix.applicability == Applicability.UNSAFE
    (guard,) = f.alternatives
    assert guard.applicability == Applicability.SAFE and not guard.snippet
    fixed = apply_edits(code.encode(), guard.edits).decode()
    assert "        if lengths.numel() == 0:\n            return values.new_zeros(values.shape[1:])\n        offsets" in fixed
    assert not findings(fixed, "AOTI201")


def test_snippet_when_the_value_is_unknown_and_the_cli_never_applies_it():
    code = model("x = lengths.max()\nreturn self.head(values, x)")
    (f,) = findings(code, "AOTI201")
    assert f.fix.snippet and f.fix.applicability == Applicability.SAFE
    (edit,) = f.fix.edits
    assert edit.text == "if lengths.numel() == 0:\n            return ${1:torch.zeros(0, device=lengths.device)}\n        "
    result = fix_source(Source.from_text(code), Config(), unsafe=True)
    assert result.data.decode() == code and result.applied == 0


def test_snippet_guess_from_module_attributes_and_numbered_placeholders():
    code = textwrap.dedent("""\
        import torch


        class M(torch.nn.Module):
            def __init__(self, emb_dim):
                super().__init__()
                self.emb_dim = emb_dim

            def forward(self, values, lengths):
                return self.pool(values, lengths.max()), self.other(values, lengths.min())
        """)
    f = findings(code, "AOTI201")[0]
    (edit,) = f.fix.edits
    assert "return (${1:torch.zeros(0, self.emb_dim, device=lengths.device)}, ${2:torch.zeros(0, self.emb_dim, device=lengths.device)})" in edit.text


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
    result = fix_source(Source.from_text(code), Config())
    assert result.applied == 1 and not [f for f in result.remaining if f.code == "AOTI201"]


# -- AOTI202 -------------------------------------------------------------------------------------
EXPORT = "\n\nep = torch.export.export(M(), (torch.randn(4, 8), torch.tensor([1, 3])))\n"


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


def test_cross_file_needs_the_project():
    models = model("if lengths.numel() == 0:\n    return values\nreturn values.sum(0) / lengths.cumsum(0)[-1]")
    exporter = "import torch\nfrom pkg.models import M\n\nep = torch.export.export(M(), (a, b))\n"
    assert not findings(models, "AOTI202", path="pkg/models.py")
    project = Project()
    project.update("pkg/export.py", summarize(Source.from_text(exporter, "pkg/export.py")))
    project.update("pkg/models.py", summarize(Source.from_text(models, "pkg/models.py")))
    fs = findings(models, project=project, path="pkg/models.py")
    assert [f.code for f in fs] == ["AOTI202", "AOTI201"]
    assert fs[0].related[0].path == "pkg/export.py"
    # another module's class of the same name is not this one
    assert not findings(models, "AOTI202", project=project, path="other/models2.py")


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
                "torch._inductor.aoti_compile_and_package(torch.export.export(M(), (a, b)), package_path='m.pt2')\n")
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
    exported = "import torch\nfrom pool import Pool\nep = torch.export.export(Pool(), (x,))\n"
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
