"""Hover and completion: what the diagnostic does not already say.

- On a finding: the fix's replacement code, the checklist of that site, the rule link (the
  editor already shows the diagnostic's message beside the hover, so it is not repeated).
- On an AOTI compile / load / call of the loaded model: the device / shape / empty-input
  checklist filled in with what the analysis found for that site.
- On a debug variable's name in a string: what it does and when torch reads it.
- Completion of the variable names inside `os.environ[...]`, `os.environ.get(...)`, `os.getenv(...)`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from lsprotocol import types

from aoti_lsp.analysis.devices import measured, measured_in
from aoti_lsp.analysis.findings import tier
from aoti_lsp.analysis.envvars import VARIABLES, hover_text, string_value
from aoti_lsp.rules import rule_by_code

RUNTIME_VARS = "`AOTI_RUNTIME_CHECK_INPUTS=1` (input checks), `CUDA_LAUNCH_BLOCKING=1` (CUDA: the failing kernel)"


@dataclass
class Site:
    """What the analysis knows about one compile / load / call, for the checklist."""

    kind: str  # compile | load | call
    start: int
    end: int
    device: str | None  # compile device type
    device_why: str | None
    inputs: list[str] | None  # "input 0: float32[2, 8], dynamic dims 0"
    any_dynamic: bool | None
    old_api: bool = False


def site_at(ctx, at: int) -> Site | None:
    """The one adapter over devices.analysis (being refactored): the innermost AOTI site at `at`."""
    from aoti_lsp.analysis import devices

    a = devices.analysis(ctx)
    found: list[Site] = []

    def describe(inputs):
        if inputs is None:
            return None, None
        out, dyn = [], False
        for i, inp in enumerate(inputs):
            meta = inp.meta
            shape = "?" if meta is None or meta.shape is None else ", ".join(map(str, meta.shape))
            dtype = (meta.dtype if meta is not None else None) or "?"
            bounds = {b.dim: b for b in inp.bounds}
            dims = "not known" if inp.dynamic is None else (", ".join(
                f"{d} (`{bounds[d].spelled}`: traced as {bounds[d].shown})" if d in bounds else str(d)
                for d in sorted(inp.dynamic)) or "none")
            dyn = None if inp.dynamic is None or dyn is None else (dyn or bool(inp.dynamic))
            out.append(f"input {i}: {dtype}[{shape}], dynamic dims: {dims}")
        return out, dyn

    for site in a.compiles():
        if site.call.start_byte <= at <= site.call.end_byte:
            dev = a.compile_device(site)
            inputs, dyn = describe(a.inputs(site))
            found.append(Site("compile", site.call.start_byte, site.call.end_byte, dev.spelled if dev else None,
                              f"compiled for `{dev.spelled}` ({devices.why(dev)})" if dev else None, inputs, dyn,
                              site.qualname.startswith("torch._export")))
    for load in a.loads():
        art = a.artifact(load)
        dev = art.device if art is not None else None
        inputs, dyn = describe(art.inputs if art is not None else None)
        why = art.compiled_for() if art is not None and dev is not None else None
        if load.call.start_byte <= at <= load.call.end_byte:
            found.append(Site("load", load.call.start_byte, load.call.end_byte, dev.spelled if dev else None, why,
                              inputs, dyn, load.old))
        for call in a.runner_calls(load):
            if call.start_byte <= at <= call.end_byte:
                found.append(Site("call", call.start_byte, call.end_byte, dev.spelled if dev else None, why, inputs, dyn))
    return min(found, key=lambda s: s.end - s.start) if found else None


def measured_lines(finding) -> list[str]:
    """What torch was measured to say for a device or shape finding (its message quotes a part)."""
    if finding.code in ("AOTI101", "AOTI102"):
        return measured_in(finding.message)
    if finding.code == "AOTI103":
        from aoti_lsp.rules.aoti103 import MEASURED_LINES
        return list(MEASURED_LINES)
    return []


def checklist(site: Site) -> list[str]:
    out = [f"**AOTI {site.kind} checklist**", ""]
    if site.device:
        out.append(f"- device: {site.device_why}")
        kind = site.device.split(":")[0]
        if site.kind == "load":
            # the deprecated loader is never recommended (AOTI002): the package decides the device type
            out.append("  - load with `aoti_load_package(pt2)`: it takes the device type from the package"
                       + (" (`aot_load` is deprecated: AOTI002)" if site.old_api else "")
                       + "; only `device_index` can change")
            if kind == "cpu":
                out.append(f"  - no `device_index` on a cpu package: any index fails with {measured('index_on_cpu')}")
            else:
                out.append(f"  - `device_index` past the host's GPUs: {measured('bad_ordinal')}")
                out.append(f"  - loaded on cpu instead: {measured('cuda_loaded_on_cpu')}")
            out.append(f"  - `device_index=None` (a cpu device's `.index`): {measured('index_none')}")
        if site.kind in ("load", "call"):
            other = {"cuda": "cpu_input_to_cuda", "cpu": "cuda_input_to_cpu"}.get(kind)
            effect = f" (other inputs, for a Linear: {measured(other)})" if other else ""
            out.append(f"  - every input on `{site.device}` at the call{effect}")
    else:
        out.append("- device: not known here (set by a run-time value or outside this file): inputs and loader "
                   "must use the compile device; `aoti-lsp inspect PKG` shows a package's")
    if site.inputs:
        out.append("- shapes (compile-time example):")
        out += [f"  - {line}" for line in site.inputs]
        out.append("  - static dims, dtypes and contiguity must match at every call (unchecked: silently wrong output)")
        if any("traced as" in line for line in site.inputs):
            out.append("  - dynamic dims within their traced range (unchecked: the package runs; "
                       "`AOTI_RUNTIME_CHECK_INPUTS=1` raises `dim value is too small/large`)")
    else:
        out.append("- shapes: example inputs not known here: static dims, dtypes and contiguity must match the compile")
    if site.any_dynamic is not False:
        out.append("- empty inputs: dynamic dims are traced as >= 2; a batch of 0 (or 1) rows is outside what was "
                   "traced and can crash: guard at the caller (AOTI201)")
    out.append(f"- when it crashes: run with {RUNTIME_VARS}; `aoti-lsp explain LOG --package PKG`")
    return out


def replacement(source, fix, data_of=None) -> str | None:
    """The lines each edit of a fix touches, as they read after it (not raw edit fragments);
    separate places are joined by `...`. Edits of other files (a migration's) are shown under
    their file's name, applied to that file's text (`data_of(path)`): never spliced into this one."""
    here = [e for e in fix.edits if e.path is None]
    parts = [_preview(source.data, here, fix.snippet)] if here else []
    for path in sorted({e.path for e in fix.edits if e.path is not None}):
        data = data_of(path) if data_of is not None else None
        if data is None:
            return None  # no preview rather than a wrong one
        parts.append(f"# {os.path.basename(path)}\n" + _preview(data, [e for e in fix.edits if e.path == path], False))
    text = "\n...\n".join(p for p in parts if p.strip())
    return text if text.strip() and len(text) < 4000 else None


def _preview(data: bytes, edits, snippet: bool) -> str:
    from aoti_lsp.lsp.convert import plain_text
    from aoti_lsp.analysis.positions import LineIndex

    edits = sorted(edits, key=lambda e: e.start)
    spans, shift = [], 0
    for e in edits:
        text = (plain_text(e.text) if snippet else e.text).encode("utf-8")
        spans.append((e.start + shift, e.start + shift + len(text)))
        shift += len(text) - (e.end - e.start)
    for e in reversed(edits):
        text = plain_text(e.text) if snippet else e.text
        data = data[:e.start] + text.encode("utf-8") + data[e.end:]
    lines = LineIndex(data)
    ranges: list[list[int]] = []
    for start, end in spans:
        first, last = lines.line_of(start), lines.line_of(max(start, end - 1))
        if ranges and first <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], last)
        else:
            ranges.append([first, last])
    parts = []
    for first, last in ranges:
        end = lines.starts[last + 1] if last + 1 < len(lines.starts) else len(data)
        parts.append(data[lines.starts[first]:end].decode("utf-8", "replace").rstrip("\n"))
    return "\n...\n".join(p for p in parts if p.strip())


def _markup(ls, lines: list[str]) -> types.MarkupContent:
    kind = types.MarkupKind.Markdown if ls.caps.hover_markdown else types.MarkupKind.PlainText
    return types.MarkupContent(kind, "\n".join(lines))


def hover(ls, doc, position: types.Position) -> types.Hover | None:
    from aoti_lsp.analysis.context import Context
    from aoti_lsp.lsp.convert import lsp_range

    at = doc.lines.offset(position.line, position.character, ls.encoding)
    source = doc.source()
    rng = lambda s, e: lsp_range(doc.lines, s, e, ls.encoding)  # noqa: E731
    lines: list[str] = []
    span = None
    node = source.tree.root_node.descendant_for_byte_range(at, at)
    while node is not None and node.type not in ("string", "module"):
        node = node.parent if node.type in ("string_content", "string_start", "string_end") else None
    if node is not None and node.type == "string" and string_value(node) in VARIABLES:
        lines.append(hover_text(VARIABLES[string_value(node)]))
        span = (node.start_byte, node.end_byte)
    site = None
    try:
        site = site_at(Context(source, ls.config_for(doc.path), ls.project), at)
    except Exception:  # the analysis is best effort here: a hover never fails because of it
        site = None
    finding = next((f for f in ls.result(doc).findings if f.start <= at <= f.end), None)
    if finding is not None and finding.fix is not None and getattr(ls.result(doc), "partial", False):
        # its edits are shown: a slice's lazy fixes are planned on other texts
        finding = next((f for f in ls.result(doc, full=True).findings if f.start <= at <= f.end), None)
    if finding is not None:
        f, rule = finding, rule_by_code(finding.code)
        lines += ["" if lines else None, f"**aoti-lsp {f.code}**" + (f" ({rule.name})" if rule else "")]
        said = measured_lines(f)
        if said:
            lines += ["", *said]
        replaced = replacement(source, f.fix, ls.data_of) if f.fix is not None else None
        if replaced:
            lines += ["", f"{f.fix.title} ({tier(f.fix.applicability, f.fix.snippet)}):", "```python", replaced, "```"]
        if site is not None:
            lines += ["", *checklist(site)]
        if rule is not None:
            lines += ["", f"[{f.code} documentation]({rule.url})"]
        span = span or (f.start, f.end)
    elif site is not None and not lines:
        lines += checklist(site)
        span = (site.start, site.end)
    lines = [line for line in lines if line is not None]
    return types.Hover(_markup(ls, lines), rng(*span)) if lines else None


# `os.environ["`, `os.environ.get('`, `os.getenv("`, `environ.setdefault(`, with a partial name
_ENV_PREFIX = re.compile(r"""(?:\benviron\s*(?:\[|\.(?:get|setdefault|pop)\s*\()|\bos\.(?:getenv|putenv|unsetenv)\s*\()\s*(["']?)([A-Za-z0-9_]*)$""")


def completion(ls, doc, position: types.Position) -> types.CompletionList | None:
    at = doc.lines.offset(position.line, position.character, ls.encoding) - doc.lines.starts[position.line]
    prefix = doc.lines.line_bytes(position.line)[:at].decode("utf-8", "replace")
    m = _ENV_PREFIX.search(prefix)
    if m is None:
        return None
    quote, typed = m.group(1), m.group(2)
    item_caps = getattr(getattr(getattr(ls.client_capabilities, "text_document", None), "completion", None),
                        "completion_item", None)
    markdown = types.MarkupKind.Markdown in (getattr(item_caps, "documentation_format", None) or [])
    start = types.Position(position.line, position.character - len(typed))  # ASCII: same in every encoding
    items = []
    for name, var in sorted(VARIABLES.items()):
        if not name.startswith(typed.upper()):
            continue
        text = name if quote else f'"{name}"'
        items.append(types.CompletionItem(
            label=name, kind=types.CompletionItemKind.Constant, detail=f"read {var.read}",
            documentation=types.MarkupContent(types.MarkupKind.Markdown, hover_text(var)) if markdown
            else hover_text(var).replace("**", "").replace("`", ""),
            text_edit=types.TextEdit(types.Range(start, position), text)))
    return types.CompletionList(is_incomplete=False, items=items)
