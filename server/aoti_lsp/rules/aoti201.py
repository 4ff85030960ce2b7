"""AOTI201: a jagged input reaches a size-sensitive operation with no effective empty guard."""

from __future__ import annotations

import os
import re
from functools import lru_cache

from aoti_lsp.findings import Finding, Related
from aoti_lsp.fixes.jagged import (
    CannotFix,
    caller_args,
    guard_callers,
    guard_top,
    rewrite,
)
from aoti_lsp.jagged import (
    summary_owner,
    jagged_patterns,
    DEFAULT_JAGGED_NAMES,
    Flow,
    Model,
    Site,
    known_nonempty,
    text,
)
from aoti_lsp.rules import Rule

_NAMES = ", ".join(f"`{n}`" for n in DEFAULT_JAGGED_NAMES)


def short(node, limit: int = 60) -> str:
    s = re.sub(r"\s+", " ", text(node))
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _roots(site: Site) -> str:
    return " / ".join(f"`{r}`" for r in sorted(site.roots))


def what_happens(site: Site) -> str:
    # short (the first line an editor shows); what torch does is on the rule page
    x, roots = short(site.node, 40), _roots(site)
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
    names = b"|".join(re.escape(p.encode()).replace(rb"\*", rb"\w*").replace(rb"\?", rb"\w") for p in patterns)
    func = rb"\w+" if any_def else rb"forward"
    return re.compile(rb"\bdef\s+" + func + rb"\s*\((?:[^()]|\([^()]*\))*?(?<![\w.])(?:" + names + rb")\b")


class EmptyJaggedInput(Rule):
    code = "AOTI201"
    name = "empty-jagged-input"
    summary = "A jagged input (lengths/offsets) reaches a size-sensitive operation with no effective empty guard"
    # checked only where a jagged name is spelt (configurable: see triggers_for) in a file
    # with a forward or a compiled function
    triggers = tuple(p.strip("*") for p in DEFAULT_JAGGED_NAMES)
    requires_any = ("def forward", "torch.compile", "aot_compile", "@compile")  # not re.compile
    # files that only export a model or call a package still need a summary (cross-file)
    summary_triggers = ("export(", "export_for_training", "draft_export", "aot_compile", "aoti_compile_and_package",
                        "load_package", "aot_load")
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

Jagged inputs are the parameters of a `forward` (or of a function given to `torch.compile`
or `aot_compile`) named like {_NAMES}, and what is computed from them (`cumsum`, arithmetic,
`clamp`, `torch.where`, slicing). Set your own list under `[tool.aoti-lsp.options]`:
`jagged-names = ["lengths", "*_lens"]` (shell-style patterns; it replaces the default list).

Not reported: empty-safe forms (offsets with a leading zero such as
`torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, 0)])`, `lengths.sum()`,
`repeat_interleave` + `index_add`, `segment_reduce`), tensors that are not jagged
(`hidden_states[:, -1]`), indexing module weights, and code behind an effective guard. In
eager and `torch.compile` code a check before the operation (`if lengths.numel() == 0:
return ...`, an enclosing `if`, `torch._check`, `assert`) is effective; for indices the check
must be on the indexed tensor (`values.numel() == 0`) or on `lengths.sum()`, since lengths
of `[0, 0]` are not empty but give N = 0. In a model that is exported (`torch.export.export`,
`aot_compile`, in this file or elsewhere in the workspace) such a check inside `forward` is
dropped (AOTI202): only a check around the calls of the loaded package counts."""
    fix_explanation = """\
- **Empty-safe rewrite** (offered first where the pattern is known; unsafe: for float
  tensors the summation order changes): `torch.cumsum(lengths, 0)[-1]` (directly or through
  a variable) becomes `lengths.sum(0)`; another jagged `offsets[-1]` becomes
  `torch.cat([offsets.new_zeros(1), offsets])[-1]`, 0 on empty input. Both work in eager,
  under `torch.compile` and in an AOTI package.
- **Early return when the input is empty** (safe: nothing changes on non-empty input). In
  eager / `torch.compile` code it goes at the top of the function:
  `if lengths.numel() == 0: return <empty value>`. For an exported model it goes around every
  call of the loaded package in the file (`out = runner(values, lengths)` becomes an
  `if lengths.numel() == 0: out = ... else: out = runner(values, lengths)`), since torch.export
  would drop it inside `forward`. For indexing the check is on the indexed tensor
  (`values.numel() == 0`).
  The empty value is inferred from the return expression: parameters, `index_select`,
  `gather`, `sum(0)`, `nn.Linear`/`nn.Embedding` layers of `__init__`, arithmetic; for
  `values.index_select(0, idx)` it is `values.new_zeros((lengths.shape[0], *values.shape[1:]))`.
  Where it cannot be inferred the editor gets a snippet with a placeholder (for example
  `torch.zeros(0, self.emb_dim, device=lengths.device)` when the module has an `emb_dim`);
  the CLI does not apply snippets."""
    invalid = (
        ("import torch\n\nclass Pool(torch.nn.Module):\n    def forward(self, values, lengths):\n"
        "        offsets = torch.cumsum(lengths, 0)\n        return values.sum(0) / offsets[-1]\n"),
        ("import torch\n\nclass Last(torch.nn.Module):\n    def forward(self, values, lengths):\n"
        "        idx = (torch.cumsum(lengths, 0) - 1).clamp(min=0)\n        return values.index_select(0, idx)\n"),
        ("import torch\n\nclass Starts(torch.nn.Module):\n    def forward(self, values, offsets):\n"
        "        return values[offsets[:-1]]\n"),
    )
    valid = (
        ("import torch\n\nclass Pool(torch.nn.Module):\n    def forward(self, values, lengths):\n"
        "        return values.sum(0) / lengths.sum().clamp(min=1)\n"),
        ("import torch\n\nclass Pool(torch.nn.Module):\n    def forward(self, values, lengths):\n"
        "        offsets = torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, 0)])\n"
        "        return values.sum(0) / offsets[-1].clamp(min=1)\n"),
        ("import torch\n\nclass Head(torch.nn.Module):\n    def forward(self, hidden_states, attention_mask):\n"
        "        return hidden_states[:, -1]\n"),
        ("import torch\n\nclass Pool(torch.nn.Module):\n    def forward(self, values, lengths):\n"
        "        if lengths.numel() == 0:\n            return values.new_zeros(values.shape[1:])\n"
        "        return values.sum(0) / torch.cumsum(lengths, 0)[-1]\n"),
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
        return _jagged_param(jagged_patterns(config), any_def).search(source.data) is not None

    def triggers_for(self, config):
        # a pattern's literal part must be spelt somewhere; "*" alone matches anything
        parts = tuple(p.replace("*", "") for p in jagged_patterns(config))
        return parts if all(parts) else self.requires_any

    def summarize(self, ctx):
        if summary_owner(ctx.config) != self.code:
            return None  # the other jagged rule stores it: one copy per file
        return Model(ctx, self.code).summary() or None

    def check(self, ctx):
        model = Model(ctx, self.code)
        for target in model.targets():
            flow = Flow(ctx, target, model.patterns)
            if not flow.sites:
                continue
            exports = model.exports_of(target)
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
            params = sorted({p for s, _, _ in pending for p in s.needs}, key=flow.params.index)
            open_calls = sorted({c.call.start_byte: c for _, cs, _ in pending for c in cs}.values(), key=lambda c: c.call.start_byte)
            guard, why = None, None
            try:
                guard = guard_callers(ctx, model, flow, target, params, open_calls) if exports else guard_top(ctx, flow, target, params)
            except CannotFix as exc:
                why = str(exc)
                if exports and not open_calls:
                    why = _no_open_call(model, target, pending) or why
            for site, opened, opened_ext in pending:
                try:
                    better = rewrite(ctx, flow, site)
                except CannotFix:
                    better = None
                message = what_happens(site)
                related = []
                if exports:
                    first = exports[0]
                    related.append(Related(first.start, first.end, f"`{target.key}` exported here: torch.export "
                                           "drops an empty-input check inside `forward`: it belongs where the "
                                           "package is called", first.path))
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
