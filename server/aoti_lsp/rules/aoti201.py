"""AOTI201: a jagged input reaches a size-sensitive operation with no effective empty guard."""

from __future__ import annotations

import os
from functools import lru_cache

from aoti_lsp.analysis.findings import Finding, Related
from aoti_lsp.analysis.jagged import (
    summary_owner,
    jagged_patterns,
    patterns_spelt,
    DEFAULT_JAGGED_NAMES,
    Flow,
    Model,
    Site,
    known_nonempty,
    scope_names,
    lazy_calls,
    lazy_importers,
    module_stem,
    CLASS_NAME,
    text,
)
from aoti_lsp.rules._jagged import JaggedRule

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    import re

_NAMES = ", ".join(f"`{n}`" for n in DEFAULT_JAGGED_NAMES)


def short(node, limit: int = 60) -> str:
    import re  # here, not at the top: a check that finds nothing here needs no `re` (names.py)

    s = re.sub(r"\s+", " ", text(node))
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _roots(site: Site) -> str:
    return " / ".join(f"`{r}`" for r in sorted(site.roots))


# measured (torch 2.13, CPU): a static package given `lengths` of 0 / 2 / 6 entries where the example
# had 4: a segfault / garbage / the first 4 read; an empty-safe `forward` reads past the end alike
STATIC_WHY = ("its package keeps the example's sizes, so an empty-safe `forward` does not help: give "
              "`dynamic_shapes` for the jagged dims (a check where the package is called still skips empty input)")


def what_happens(site: Site, static: str | None = None) -> str:
    # short (the first line an editor shows); what torch does is on the rule page
    x, roots = short(site.node, 40), _roots(site)
    if static is not None:  # STATIC_WHY's measurement
        return (f"`{x}` reads {roots} at its example's size: `{static}` is exported without `dynamic_shapes`, "
                f"so an empty {roots} crashes the package and any other size gives wrong output")
    if site.kind == "last":
        return f"`{x}` reads out of bounds when jagged input {roots} is empty"
    if site.kind == "tail":
        return f"`{x}` slices out of bounds when jagged input {roots} is empty"
    if site.kind == "head":
        return f"`{x}` has size -1 in a package when jagged input {roots} is empty"
    if site.kind == "reduce":
        extreme = "the int64 minimum (or -inf)" if "max" in site.op else "the int64 maximum (or inf)"
        return f"`{x}` returns {extreme} when jagged input {roots} is empty"
    return f"`{x}` indexes out of bounds when jagged input {roots} has no values"


def relative(ctx, path: str) -> str:
    """`path` as seen from the folder of the file being checked."""
    here = os.path.dirname(os.path.abspath(ctx.source.path))
    try:
        return os.path.relpath(os.path.abspath(path), here)
    except ValueError:
        return path


def where(ctx, export) -> str:
    if export.path is None:
        return f"line {ctx.source.lines.line_of(export.start) + 1}"
    return f"in {relative(ctx, export.path)}"


@lru_cache(maxsize=8)
def _jagged_param(patterns: tuple[str, ...], any_def: bool) -> "re.Pattern[bytes]":
    """`def forward(... lengths ...)` (any def name when `any_def`): a parameter list (one level
    of nested brackets) naming a jagged input."""
    import re

    names = b"|".join(re.escape(p.encode()).replace(rb"\*", rb"\w*").replace(rb"\?", rb"\w") for p in patterns)
    func = rb"\w+" if any_def else rb"forward"
    # `def(?<!\wdef)`: `\bdef` with the literal first, so the search skips to each `def` (5x faster)
    return re.compile(rb"def(?<!\wdef)\s+" + func + rb"\s*\((?:[^()]|\([^()]*\))*?(?<![\w.])(?:" + names + rb")\b")


@lru_cache(maxsize=8)
def _jagged_taken(patterns: tuple[str, ...]) -> "re.Pattern[bytes]":
    """`uih_lengths = features["uih.lengths"]` / `= batch.lengths`: a jagged tensor taken out of
    an input (Flow.carried). A prefilter: a leading `*` is dropped, so the scan looks for literals."""
    import re

    names = b"|".join(re.escape(p.lstrip("*").encode()).replace(rb"\*", rb"\w*").replace(rb"\?", rb"\w") for p in patterns)
    return re.compile(rb"(?:" + names + rb")[ \t]*=[ \t]*[A-Za-z_]\w*[ \t]*[\[.]")


@lru_cache(maxsize=8)
def _taken_starts(patterns: tuple[str, ...]) -> tuple[bytes, ...] | None:
    """The literal each of _jagged_taken's alternatives starts with (None when one is shorter than
    3 bytes, a wildcard at once included: too common to be worth finding): every match starts at one."""
    starts = tuple(p.lstrip("*").replace("?", "*").split("*", 1)[0].encode() for p in patterns)
    return None if not all(len(s) >= 3 for s in starts) else tuple(dict.fromkeys(starts))


def _taken(patterns: tuple[str, ...], data: bytes) -> bool:
    """`_jagged_taken(patterns).search(data) is not None`, matched only where one of its starting
    literals is found (when each is 3+ bytes): a pattern that starts with an alternation is tried at
    every byte (2x slower over torch's sources)."""
    rx, starts = _jagged_taken(patterns), _taken_starts(patterns)
    if starts is None:
        return rx.search(data) is not None
    for lit in starts:
        at = data.find(lit)
        while at >= 0:
            if rx.match(data, at) is not None:
                return True
            at = data.find(lit, at + 1)
    return False


class EmptyJaggedInput(JaggedRule):
    code = "AOTI201"
    name = "empty-jagged-input"
    summary = "A jagged input (lengths/offsets) reaches a size-sensitive operation with no effective empty guard"
    # checked only where a jagged name is spelt (configurable: see triggers_for) in a file
    # with a forward or an AOT-compiled function
    triggers = tuple(p.strip("*") for p in DEFAULT_JAGGED_NAMES)
    requires_any = ("def forward", "aot_compile")  # torch.compile is not AOTI: out of scope
    explanation = f"""\
Jagged batches come as flat `values` plus per-row `lengths` (or `offsets`). A request with
no rows gives a `lengths` of size 0, and a batch whose rows are all empty gives `values` with
no rows (N = 0). `torch.export` traces every dynamic dim as if it were >= 2 (even with
`Dim("B", min=0)`), so nothing in the AOTI package checks for these sizes. Measured with
torch 2.13 on CPU:

| code in `forward` | eager, empty input | AOTI package, empty input |
|---|---|---|
| `offsets = cumsum(lengths, 0); offsets[-1]` feeding a result that does not shrink with the batch | `IndexError` | **segfault** (reads `in_ptr[ks - 1]`) |
| `offsets[-1:]`, same | empty slice | **segfault** |
| `values[offsets[:-1]]` (export first asks for `Dim("B", min=3)`) | works | `RuntimeError: Trying to create tensor with negative dimension -1` |
| `lengths.max()` / `lengths.min()` | `RuntimeError` | no error: returns the int64 minimum / maximum (or -inf / inf) |
| `index_select` / `gather` / `index_copy` / `take` / `values[idx]` with indices from the lengths, N = 0 | `RuntimeError` (`IndexError` for `take` and `values[idx]`) | `RuntimeError: index out of bounds: 0 <= tmpN < ksM` |
| `lengths.sum()`, leading-zero offsets, `repeat_interleave(..., output_size=N)` + `index_add`, `segment_reduce` | works | works |

The error text names the kernel (`Exception raised from cpp_fused_... at ....kernel.cpp:<line>`),
never your line: this rule points at it before you ship.

A model exported without `dynamic_shapes` keeps every size of its example: its package reads as
many entries of `lengths` as the example had, whatever a call passes (measured: where the example
had 4, an empty `lengths` segfaults, 2 entries read garbage, 6 entries are read as their first 4).
The finding then says so and offers no empty-safe rewrite of `forward`, which cannot help there:
give `dynamic_shapes` for the jagged dims. A check where the package is called still skips an
empty input.

Jagged inputs are the parameters of a `forward` (or of a function given to `aot_compile`)
named like {_NAMES}; beside one of those, the flat data of the pair (`values`, `*_values`)
is jagged too (all rows empty: N = 0, and `values[-1:]` segfaults in the package, measured).
What is computed from them (`cumsum`, arithmetic, `clamp`, `torch.where`, slicing) is
jagged as well. Set your own list under `[tool.aoti-lsp.options]`:
`jagged-names = ["lengths", "*_lens"]` (shell-style patterns; it replaces the default list).

**Scope: code an AOTI package runs.**
- *Certain*: the class's `forward` (or the function) is AOT-compiled in the project, by the
  artifact graph: `aoti_compile_and_package(torch.export.export(Model(), ...))` or
  `torch._export.aot_compile(Model(), ...)`, in this file or another. Fixes are applied
  there (the rewrite under `--unsafe-fixes`).
- *Possible*: where no such compile is visible, an `nn.Module.forward` in a file that
  exports, AOT-compiles or loads a package (or of a class exported elsewhere). Reported, but
  every fix is display-only: the editor offers it, `--fix` never applies it.
- *Out of scope*, never reported: `autograd.Function.forward` / `backward` (a training op's
  wrapper, e.g. around Triton kernels), a file with no export/AOTI evidence, functions only
  given to `torch.compile` (it specialises sizes 0 and 1 and keeps guards: not AOTI).

Not reported: empty-safe forms (offsets with a leading zero such as
`torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, 0)])`, `lengths.sum()`,
`repeat_interleave` + `index_add`, `segment_reduce`), tensors that are not jagged
(`hidden_states[:, -1]`), indexing module weights, a read that only feeds
`torch._assert_async` (measured: the package never runs it), and code behind an effective
guard. **Complete offsets** (B + 1 entries with a leading zero) are never empty, so
`offsets[-1]`, `offsets[:-1]` and `offsets[1:] - offsets[:-1]` are safe on them: offsets
built by `torch.ops.fbgemm.asynchronous_complete_cumsum`, by a `cumsum` with a prepended
zero, named `cu_seqlens*` (flash-attn documents them as `(batch_size + 1,)`), documented so
in the docstring (`x_offsets: (B + 1,)`, "leading zero"), or passed so by every caller the
project shows (an instance of the class called in this file, or a keyword argument of that
name anywhere in the project). Where a check is effective: a check before the operation
(`if lengths.numel() == 0: return ...`, an enclosing `if`, `torch._check`, `assert`) counts
where no export is visible; for indices the check must be on the indexed tensor
(`values.numel() == 0`) or on `lengths.sum()`, since lengths of `[0, 0]` are not empty but
give N = 0. In a model that is exported (in this file or elsewhere in the workspace) such a
check inside `forward` is dropped (AOTI202): only a check around the calls of the loaded
package counts."""
    fix_explanation = """\
- **Empty-safe rewrite** (offered first where the pattern is known): `torch.cumsum(lengths,
  0)[-1]` (directly or through a variable) becomes `lengths.sum(0)`; another jagged
  `offsets[-1]` becomes `torch.cat([offsets.new_zeros(1), offsets])[-1]`, 0 on empty input.
  Both work in eager, under `torch.compile` and in an AOTI package. Unsafe (for float tensors
  the summation order changes) where the forward is certainly a package's; display-only
  elsewhere, so `--fix --unsafe-fixes` never edits code that no package is shown to run.
- **Early return when the input is empty**: around every call of the loaded package in the
  file for an exported model (safe: `out = runner(values, lengths)` becomes an
  `if lengths.numel() == 0: out = ... else: out = runner(values, lengths)`), since torch.export
  would drop it inside `forward`; at the top of `forward` where no export is visible
  (display-only: if the model is exported after all, the check is dropped). For indexing the
  check is on the indexed tensor (`values.numel() == 0`).
  The empty value matches every output of the function, in number, rank, dtype and device,
  inferred from the return expression: parameters, `index_select`, `gather`, `sum(0)`,
  `nn.Linear`/`nn.Embedding` layers of `__init__`, arithmetic; for
  `values.index_select(0, idx)` it is `values.new_zeros((lengths.shape[0], *values.shape[1:]))`.
  Where one output cannot be inferred, or the return statements differ in their number of
  outputs, no early return is offered (a guessed `torch.zeros(0)` has the wrong shape)."""

    invalid = (
        """# in a package's forward (the artifact graph: Pool is AOT-compiled): the rewrite is an unsafe fix
import torch

class Pool(torch.nn.Module):
    def forward(self, values, lengths):
        offsets = torch.cumsum(lengths, 0)
        return values.sum(0) / offsets[-1]

ep = torch.export.export(Pool(), (torch.randn(4, 8), torch.tensor([1, 3])))
torch._inductor.aoti_compile_and_package(ep, package_path="pool.pt2")
""",
        """# a forward in a file that loads AOTI packages: a package may run it (fixes display-only)
import torch

class Last(torch.nn.Module):
    def forward(self, values, lengths):
        idx = (torch.cumsum(lengths, 0) - 1).clamp(min=0)
        return values.index_select(0, idx)

runner = torch._inductor.aoti_load_package("last.pt2")
""",
        """# the values of a jagged pair are jagged too: `values[-1:]` segfaults in the package when N = 0
import torch

class BagTail(torch.nn.Module):
    def forward(self, values, lengths):
        return values[-1:].sum(0) * lengths.shape[0]

ep = torch.export.export(BagTail(), (torch.randn(5, 4), torch.tensor([2, 3])))
torch._inductor.aoti_compile_and_package(ep, package_path="bag_tail.pt2")
""",
        """# offsets that nothing shows to be complete (no caller passes them, no docstring says so)
import torch

class Starts(torch.nn.Module):
    def forward(self, values, offsets):
        return values[offsets[:-1]]

ep = torch.export.export(Starts(), (torch.randn(5, 4), torch.tensor([0, 2, 5])))
""",
    )
    valid = (
        """# empty-safe forms
import torch

class Pool(torch.nn.Module):
    def forward(self, values, lengths):
        offsets = torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, 0)])
        return values.sum(0) / lengths.sum().clamp(min=1) + offsets[-1]

runner = torch._inductor.aoti_load_package("pool.pt2")
""",
        """# a tensor that is not jagged
import torch

class Head(torch.nn.Module):
    def forward(self, hidden_states, attention_mask):
        return hidden_states[:, -1]

runner = torch._inductor.aoti_load_package("head.pt2")
""",
        """# complete offsets (B + 1 entries, a leading zero): every caller in the project passes them
import torch

class Encoder(torch.nn.Module):
    def forward(self, x, x_offsets):
        seq_lengths = x_offsets[1:] - x_offsets[:-1]
        return x * x_offsets[-1] + seq_lengths.sum()

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    def forward(self, x, lengths):
        return self.encoder(x, x_offsets=torch.ops.fbgemm.asynchronous_complete_cumsum(lengths))

runner = torch._inductor.aoti_load_package("model.pt2")
""",
        """# out of scope: an autograd.Function (a training op's wrapper), even beside an export
import torch

class JaggedSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, values, offsets):
        ctx.save_for_backward(offsets)
        return values.sum(0) / offsets[-1]

    @staticmethod
    def backward(ctx, grad):
        (offsets,) = ctx.saved_tensors
        return grad / offsets[-1], None

ep = torch.export.export(Other(), (torch.randn(4, 8),))
""",
        """# out of scope: nothing in the project exports, AOT-compiles or loads a package (torch.compile is not AOTI)
import torch

class Pool(torch.nn.Module):
    def forward(self, values, lengths):
        return values.sum(0) / torch.cumsum(lengths, 0)[-1]

fast = torch.compile(Pool())
""",
    )

    def wants(self, source, config):
        # beyond the tokens, some `def` must take a jagged-named parameter (a forward or a
        # compiled function): one regex over the text, far cheaper than parsing a big file.
        # Once parsed (the editor's incremental tree) the regex only costs: skip it.
        if not super().wants(source, config):
            return False
        if source.parsed:
            return True
        # without a compile call in the file, only a `forward` can be a target
        any_def = any(map(source.has, self.requires_any[1:]))
        patterns = jagged_patterns(config)
        if not patterns_spelt(patterns, source.data):  # then neither regex can match
            return False
        return _jagged_param(patterns, any_def).search(source.data) is not None or \
            _taken(patterns, source.data)

    def relevant(self, source, project):
        """Model.scope's reasons, read without a parse: the file spells an export, an AOT compile
        or a package load (every spelling that resolves to one holds `export` or `aot`), or
        defines a class another file exports or AOT-compiles, or another file AOT-compiles
        programs it cannot name. Without one, no forward of it is in scope: it is not parsed."""
        if project is None or source.has("export") or source.has("aot"):
            return True
        names, unknown, lazy = scope_names(project)
        if unknown or any(source.has(f"class {n}") for n in names):
            return True
        classes = [c.decode() for c in CLASS_NAME.findall(source.data)] if lazy else ()
        candidates = lazy_importers(project, module_stem(source.path)) if classes else ()
        return any(lazy_calls(project, p, c) for p in candidates for c in classes)  # lazy_may_export, asked once

    def triggers_for(self, config):
        # a pattern's literal part must be spelt somewhere; "*" alone matches anything
        parts = tuple(p.replace("*", "") for p in jagged_patterns(config))
        return parts if all(parts) else self.requires_any

    def summarize(self, ctx):
        if summary_owner(ctx.config) != self.code:
            return None  # the other jagged rule stores it: one copy per file
        return Model(ctx, self.code).summary() or None

    def check(self, ctx):
        # the fixer's module only where a finding can be made: a file summarised for the
        # project (it exports or compiles) does not import it
        from aoti_lsp.fixes.jagged import CannotFix, guard_callers, guard_top, rewrite

        model = Model(ctx, self.code)
        for target in model.targets():
            scope = model.scope(target)
            if scope is None:
                continue  # no AOTI package runs it (the scope policy on the rule page)
            flow = Flow(ctx, target, model.patterns, model.complete_params(target))
            if not flow.sites:
                continue
            exports = model.exports_of(target)
            # every export of it static: its package reads the example's sizes, whatever a call passes
            static = target.key if exports and all(e.static for e in exports) else None
            calls = model.call_sites(target) if exports else []
            external = model.external_calls(target) if exports else []
            pending: list[tuple[Site, list, list]] = []
            for site in flow.sites:
                if exports:
                    # the package's callers (this file and the workspace) are where a check works
                    open_calls = [c for c in calls if not _caller_guarded(flow, site, c)]
                    open_ext = [e for e in external if not flow.covered(site, e.facts, e.args)]
                    if (calls or external) and not open_calls and not open_ext:
                        continue
                    pending.append((site, open_calls, open_ext))
                elif not flow.guarded_here(site):
                    pending.append((site, [], []))
            if not pending:
                continue
            params = sorted({p for s, _, _ in pending for p in s.needs}, key=flow.order)
            open_calls = sorted({c.call.start_byte: c for _, cs, _ in pending for c in cs}.values(), key=lambda c: c.call.start_byte)
            guard, why = None, None
            try:
                if any(p not in flow.params for p in params):
                    raise CannotFix("the jagged tensor is taken out of an input inside the function")
                guard = guard_callers(ctx, model, flow, target, params, open_calls) if exports else guard_top(ctx, flow, target, params)
            except CannotFix as exc:
                why = str(exc)
                if exports and not open_calls:
                    why = _no_open_call(model, target, pending) or why
            for site, opened, opened_ext in pending:
                try:
                    # certain only in a package's forward: applied by --unsafe-fixes there, shown elsewhere;
                    # a static package reads the example's sizes whatever `forward` says: no help there
                    if static is not None:
                        raise CannotFix(STATIC_WHY)
                    better = rewrite(ctx, flow, site, certain=scope == "package")
                except CannotFix:
                    better = None
                message = what_happens(site, static)
                related = []
                if exports:
                    first = exports[0]
                    said = (f"`{target.key}` exported here without `dynamic_shapes`: {STATIC_WHY}" if static is not None
                            else f"`{target.key}` exported here: torch.export drops an empty-input check inside "
                            "`forward`: it belongs where the package is called")
                    related.append(Related(first.start, first.end, said, first.path))
                    related += [Related(c.call.start_byte, c.call.end_byte, "a call of the package without the check")
                                for c in opened[:3]]
                    related += [Related(e.start, e.end, "a call of the package without the check", e.path) for e in opened_ext[:3]]
                    if guard is None and better is None and why:
                        related.append(Related(site.node.start_byte, site.node.end_byte, f"no automatic fix: {why}"))
                fix = better or guard
                alternatives = (guard,) if better is not None and guard is not None else ()
                yield Finding(self.code, message, site.node.start_byte, site.node.end_byte, fix=fix,
                              related=related, alternatives=alternatives)


def _caller_guarded(flow: Flow, site: Site, call) -> bool:
    from aoti_lsp.fixes.jagged import caller_args

    args = caller_args(call) or {p: text(a) for p, a in call.args.items()}
    scope = call.call
    while scope.parent is not None and scope.type not in ("function_definition", "module"):
        scope = scope.parent
    return flow.covered(site, known_nonempty(call.call, scope, flow.block_memo), args)


RULE = EmptyJaggedInput()


def _no_open_call(model, target, pending) -> str | None:
    """Why no caller can be guarded, when it is not that the file never calls the package."""
    unmatched = [c for c in model.call_sites(target, all_calls=True) if c.args is None]
    if unmatched:
        call = unmatched[0].call.text.decode("utf-8", "replace")
        return (f"the package's calls here (`{call[:60]}`) pass arguments that cannot be matched to "
                "`forward`'s inputs: guard them by hand")
    if any(ext for _, _, ext in pending):
        return "the package's calls without the check are in other files (see the notes): guard them there"
    return None
