"""AOTI202: an empty-input guard inside an exported forward, which torch.export removes."""

from __future__ import annotations

from aoti_lsp.analysis.findings import Finding, Related
from aoti_lsp.analysis.jagged import (
    SUMMARY_CODES,
    summary_owner,
    Flow,
    Model,
    empty_tests,
    free_identifiers,
    guard_statements,
    is_check_call,
    text,
    unparen,
)
from aoti_lsp.rules._jagged import JaggedRule
from aoti_lsp.rules.aoti201 import short


class GuardDroppedByExport(JaggedRule):
    code = "AOTI202"
    name = "guard-dropped-by-export"
    summary = "An empty-input guard inside an exported forward: torch.export removes it, the package runs on empty input anyway"
    # the guard forms the rule knows, in a file with a forward or an AOT-compiled function
    # (torch.compile keeps guards: a file whose only function is compiled that way needs no look)
    triggers = ("numel", "shape[0]", "size(0)", "len(", "_check", "cond(")
    requires_any = ("def forward", "aot_compile(")
    explanation = """\
`torch.export` traces dynamic dims as if they were >= 2, even with `Dim("B", min=0)` (and it
refuses an example input of size 0 or 1 on a dynamic dim). A test of an input's *size* is
therefore decided while tracing and folded away, without a word. Measured with torch 2.13 on
CPU (export, `aoti_compile_and_package`, then the package run on an empty batch;
`tests/torch/test_jagged_checks.py`):

| in `forward` | in the AOTI package |
|---|---|
| `if lengths.numel() == 0: return ...`, `if lengths.shape[0] == 0`, `if len(lengths) == 0` | dropped: the empty input runs on (and segfaults at `offsets[-1]`) |
| `torch._check(lengths.shape[0] > 0)`, `assert lengths.shape[0] > 0` | dropped (not even in the exported graph) |
| `torch._check(values.shape[0] >= lengths.shape[0])` | dropped, and not an emptiness test: true for an empty batch (not reported) |
| `torch._assert_async(lengths.sum() > 0)` | kept in the exported graph, **never run** by the package |
| `torch.cond(lengths.shape[0] == 0, ...)` | becomes `if (false)` |
| `torch._check(n > 0)` / `assert n > 0` with `n = lengths.sum().item()` | **kept**: `RuntimeError: Expected u0 >= 1 but received 0` (not reported) |
| `torch._check_is_size(n)` | kept (`u0 >= 0`), true on empty input (not reported) |

The same guards are effective in eager code and under `torch.compile` (a real branch there):
those are not reported. Nor is the length of a Python list the forward builds (`losses = []`
appended per head, `valid = [t for t in targets if ...]`: rbavery/satlas-aoti): the trace fixes
it, no input's emptiness reaches it.

A model traced with `make_fx(Model(), tracing_mode="symbolic")` before the export (mattersim,
nequip) loses an `if` on an input's size in that trace already: its graph, run on an empty
input, gives `nan` where the model gives zeros (measured; the message names make_fx). The other
forms are not measured through make_fx and not reported there.

Scope: reported only where an AOTI package certainly runs the forward, by the artifact
graph: its class (or function) is given to `aoti_compile_and_package` (through
`torch.export.export`) or to `torch._export.aot_compile`, in the same file or anywhere in
the workspace; also through a helper that exports its parameter (`def package(model, ...)`),
where every caller in the helper's file passes that one model. A program that is only exported (`torch.export.export(...).module()`) is not
an AOTI package; `autograd.Function.forward` / `backward` and code only training reaches are
never in scope.

What works instead: the check in plain Python *around* the compiled model (the caller tests
`lengths.numel() == 0` before calling the loaded package), or branch-free empty-safe code
(`lengths.sum()` instead of `cumsum(lengths)[-1]`, offsets with a leading zero; AOTI201 offers
those rewrites). `AOTI_RUNTIME_CHECK_INPUTS=1` at run time turns the crash into
`RuntimeError: ... dim value is too small at 0, expected it to be >= 2, but got: 0` (and also
rejects a batch of 1)."""
    fix_explanation = """\
**Move the guard to the callers of the package** (unsafe: `forward` itself no longer checks,
which changes what eager callers of the model get). Offered when the guard is a statement of
its own at the top of `forward` that only returns or raises, uses only the inputs (and
`self`), and the file loads the package of this model (`aoti_load_package` of the path written
by `aoti_compile_and_package`, or of a path string that names it, also across files) and calls
it. Every call gets the check, with the parameters replaced by the arguments given:
`out = runner(values, lengths)` becomes
`if lengths.numel() == 0: out = <value> else: out = runner(values, lengths)`; a
`torch._check(...)` (or `assert ...`, `torch._assert_async(...)`) is copied before the call, where
it runs in plain Python. Where the returned value needs
`self` and no model instance is in scope at the call, the editor gets a snippet with a
placeholder. Otherwise no fix: the related information says where the check must go."""
    invalid = (
        """# the package of Pool runs on empty input anyway
import torch

class Pool(torch.nn.Module):
    def forward(self, values, lengths):
        if lengths.numel() == 0:
            return values.new_zeros(values.shape[1:])
        return values.sum(0) / lengths.sum()

ep = torch.export.export(Pool(), (torch.randn(4, 8), torch.tensor([1, 3])))
torch._inductor.aoti_compile_and_package(ep, package_path="pool.pt2")
""",
        """# kept in the exported graph, never run by the package
import torch

class Pool(torch.nn.Module):
    def forward(self, values, lengths):
        torch._assert_async(torch.tensor(lengths.shape[0] > 0))
        return values.sum(0) / lengths.sum()

ep = torch.export.export(Pool(), (torch.randn(4, 8), torch.tensor([1, 3])))
torch._inductor.aoti_compile_and_package(ep, package_path="pool.pt2")
""",
    )
    valid = (
        """# a Python list's length: fixed when torch.export traces, no input's size
import torch

class Heads(torch.nn.Module):
    def forward(self, x, targets=None):
        outputs, losses = [], []
        for head in self.heads:
            outputs.append(head(x))
            if targets:
                valid = [t for t in targets if t["valid"]]
                if len(valid) == 0:
                    continue
                losses.append(head.loss(x, valid))
        if len(losses) > 0:
            losses = torch.stack(losses)
        else:
            losses = torch.zeros((), device=x.device)
        return outputs, losses

ep = torch.export.export(Heads(), (torch.randn(4, 8),))
torch._inductor.aoti_compile_and_package(ep, package_path="heads.pt2")
""",
        """# torch.compile keeps the branch
import torch

class Pool(torch.nn.Module):
    def forward(self, values, lengths):
        if lengths.numel() == 0:
            return values.new_zeros(values.shape[1:])
        return values.sum(0) / lengths.sum()

compiled = torch.compile(Pool())
""",
        """# a fact for the shape system, true for an empty batch: not an emptiness guard
import torch

class Pool(torch.nn.Module):
    def forward(self, values, lengths):
        torch._check(values.shape[0] >= lengths.shape[0])
        return values.sum(0) / lengths.sum().clamp(min=1)

ep = torch.export.export(Pool(), (torch.randn(4, 8), torch.tensor([1, 3])))
torch._inductor.aoti_compile_and_package(ep, package_path="pool.pt2")
""",
        """# exported, not AOT-compiled: no AOTI package runs it
import torch

class Pool(torch.nn.Module):
    def forward(self, values, lengths):
        if lengths.numel() == 0:
            return values.new_zeros(values.shape[1:])
        return values.sum(0) / lengths.sum()

run = torch.export.export(Pool(), (torch.randn(4, 8), torch.tensor([1, 3]))).module()
""",
        """# out of scope: autograd.Function (training)
import torch

class GroupedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, values, group_end_offsets):
        torch._assert_async(group_end_offsets.numel() > 0)
        return values.sum(0)

ep = torch.export.export(GroupedSum(), (torch.randn(4, 8), torch.tensor([1, 3])))
torch._inductor.aoti_compile_and_package(ep, package_path="g.pt2")
""",
    )

    def relevant(self, source, project):
        """Only a forward an AOTI package certainly runs matters (Model.scope "package"): this
        file AOT-compiles (its own class or function: it spells `aot_compile` or
        `aoti_compile_and_package`), or another file AOT-compiles a class this file defines (its
        summary's "aoti"). A file that only exports, or only loads, has none (before: every file
        spelling an export was analysed, 35 of pytorch/ao's files for nothing)."""
        if project is None or source.has("aot_compile") or source.has("aoti_compile_and_package"):
            return True
        return any(source.has(f"class {name}") for name in _aoti_names(project))

    def summarize(self, ctx):
        if summary_owner(ctx.config) != self.code:
            return None  # the other jagged rule stores it: one copy per file
        return Model(ctx, self.code).summary() or None

    def check(self, ctx):
        from aoti_lsp.fixes.jagged import CannotFix, move_guard  # as AOTI201's: only where a finding can be made

        model = Model(ctx, self.code)
        for target in model.targets():
            guards = list(guard_statements(target))
            if not guards:
                continue  # most forwards test nothing: the artifact graph is never asked for them
            exports = model.exports_of(target)
            if not exports or model.scope(target) != "package":
                continue  # only an AOTI package is known to run without the guard
            flow = Flow(ctx, target, model.patterns)
            calls = None
            traced = model.traced(target)
            for node, stmt, form in guards:
                if traced and form != "if":
                    continue  # measured through make_fx only for an `if` (tests/torch/test_jagged_checks.py)
                cond = is_check_call(node) if form == "check" else unparen(node)
                tested = [t for t in empty_tests(cond) if _from_inputs(flow, t.node) and not _python_list(ctx, t.node)]
                if not tested:
                    continue
                subject = tested[0].text
                roots = flow.param_roots(tested[0].node)
                if subject not in flow.params and roots:
                    subject = roots[0]
                if calls is None:
                    calls = model.call_sites(target)
                check_here = f"check `{subject}` here, before calling the package"
                if calls:
                    there = [Related(calls[0].call.start_byte, calls[0].call.end_byte, check_here)]
                else:
                    there = [Related(e.start, e.end, check_here, e.path) for e in model.external_calls(target)[:1]]
                message = _message(form, node, target, subject, traced)
                fix = None
                try:
                    fix = move_guard(ctx, model, flow, target, stmt, form)
                except CannotFix:
                    pass
                related = [Related(e.start, e.end, f"`{target.key}` exported here: check `{subject}` before calling the package",
                                   e.path) for e in exports[:3]] + there
                yield Finding(self.code, message, node.start_byte, node.end_byte, fix=fix, related=related)


def _message(form: str, node, target, subject: str, traced: bool = False) -> str:
    """What torch 2.13 was measured to do with each form (tests/torch/test_jagged_checks.py)."""
    x = short(node, 40)
    if traced:  # make_fx takes the example's branch; export never sees the test
        return f"make_fx's trace drops `{x}` in `{target.label}`: an empty `{subject}` gets through"
    if form == "check" and x.startswith(("torch._assert_async", "_assert_async")):
        # it stays in the exported graph; the AOTI package does not run it
        return f"a package never runs `{short(node, 32)}` in `{target.label}`: an empty `{subject}` gets through"
    if form == "cond":
        return f"torch.export decides `torch.cond` on `{x}` in `{target.label}`: an empty `{subject}` gets through"
    return f"torch.export drops `{x}` in `{target.label}`: an empty `{subject}` gets through"


_LISTS = ("list", "list_comprehension", "tuple", "set", "set_comprehension", "dictionary", "dictionary_comprehension")


def _python_list(ctx, node) -> bool:
    """`len(losses)` of `losses = []` (appended to in a loop over the heads), `len(valid)` of
    `valid = [t for t in targets if ...]`: a Python container, whose length torch.export fixes
    while it traces (rbavery/satlas-aoti's Model.forward). An input's emptiness at run time does
    not reach it: a list built by iterating a tensor needs that tensor's size fixed to export."""
    node = unparen(node) if node is not None else None
    if node is None or node.type != "identifier":
        return False
    found = ctx.facts.binding_value(node, node.start_byte)  # `losses = []`, or its item of `a, b = [], []`
    value = unparen(found[0]) if found is not None else None
    if value is not None and value.type == "binary_operator":  # `[None] * n`
        value = unparen(value.child_by_field_name("left"))
    return value is not None and value.type in _LISTS


def _from_inputs(flow: Flow, node) -> bool:
    """The tested tensor is (computed from) an input of the function."""
    if node is None:
        return False
    for ident in free_identifiers(node):
        name = text(ident)
        if name in flow.params or (name in flow.assigns and flow.param_roots(ident)):
            return True
    return False


RULE = GuardDroppedByExport()


def _aoti_names(project) -> frozenset[str]:
    """The class names other files AOT-compile (their summaries' "aoti" entries)."""
    def build():
        return frozenset(key.rsplit(".", 1)[-1] for code in SUMMARY_CODES for summary in project.of(code).values()
                         if isinstance(summary, dict) for key, _ in summary.get("aoti", ()))
    return project.memo("jagged aoti names", build)
