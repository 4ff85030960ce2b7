"""`aoti-lsp explain LOG --package PKG [--source PATH...]`: from a crash log to the line of Python.

For `index out of bounds: 0 <= tmpN < ksM` the trace follows the generated code as one would by
hand: the kernel holding that assertion -> its parameter ksM -> the argument at the kernel's call
site -> `int64_t sN = argK_1_size[d]` -> input i, dimension d (and its name in `forward`) -> the
`Topologically Sorted Source Nodes` of that call -> the Python lines with those ops. The other
known messages get their cause, what is wrong (compile / load / input device, shape) and the fixes
measured on torch 2.13 and, for the CUDA texts, on an H200 with torch 2.11+cu130
(tests/packages/cuda/runs-*.json); with sources, explain_sites.py adds the lines that set it.
No torch; the package is read with the bounded reader of pt2.py.
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import asdict, dataclass, field

from aoti_lsp.triage import generated
from aoti_lsp.analysis import pt2
from aoti_lsp.triage.explain_messages import (
    _CPU_FROM, _CUDA_ASSERT, _EVENT, _INDEX, _PHASE, _SEGV, _WHEN_CALL, _WHEN_LOAD, CHECKLIST, COMPILE_DEVICE, EMPTY_FIXES,
    INPUT_DEVICE, LOAD_DEVICE, RUNTIME_CHECK, SHAPE, SIMPLE,
)


@dataclass
class Step:
    text: str
    path: str | None = None  # a user source file or `PKG!member`
    line: int | None = None  # 1-based


@dataclass
class Explanation:
    kind: str
    message: str  # what the log said
    trace: list[Step] = field(default_factory=list)
    cause: str = ""
    fixes: list[str] = field(default_factory=list)
    wrong: str | None = None  # compile device | load device | input device | shape (what to change)


def explain(log: str, package: str | None, sources: list[str] = (), texts: dict[str, bytes] | None = None) -> list[Explanation]:
    """`texts`: path -> the text to read instead of the file (an editor's unsaved buffer)."""
    out: list[Explanation] = []
    pkg = pt2.read_sources(package) if package else None
    models = {n: generated.parse(m) for n, m in pkg.models.items()} if pkg and not pkg.error else {}
    seen_index = set()
    for m in _INDEX.finditer(log):
        key = (m.group(1), m.group(2))
        if key in seen_index:
            continue
        seen_index.add(key)
        out.append(_index(log, m, pkg, models, list(sources)))
    kinds = set()
    for kind, pattern, wrong, cause, fixes in SIMPLE:
        m = pattern.search(log)
        if m is None or kind in kinds or (kind == "device-assert" and seen_index):
            continue
        kinds.add(kind)
        args = m.groups()
        e = Explanation(kind, m.group(0), cause=cause.format(*args, rc=RUNTIME_CHECK),
                        fixes=[f.format(*args) for f in fixes], wrong=wrong)
        if kind in ("dim-too-small", "dim-too-large", "unmatched-dim") and models:
            e.trace += _input_steps(models, int(args[0]), int(args[1]), list(sources), package)
        if kind == "illegal-memory-access":
            for model in models.values():
                e.trace += _empty_risks(model, package)
        if wrong in (LOAD_DEVICE, INPUT_DEVICE, COMPILE_DEVICE):
            e.trace += [Step(f"the package was compiled for `{m.device}` (wrapper_metadata.json of `{m.name}`)")
                        for m in models.values() if m.device]
        out.append(e)
    out += _follow_ons(log, out)
    if not out and _SEGV.search(log):
        e = Explanation("crash", _SEGV.search(log).group(0), cause="a crash without a message: check, in order:",
                        fixes=list(CHECKLIST))
        for model in models.values():
            e.trace += _empty_risks(model, package)
        out.append(e)
    if pkg is not None and pkg.error:
        for e in out:
            e.trace.append(Step(f"package not read: {pkg.error}"))
    if sources:
        from aoti_lsp.triage import explain_sites

        for e in out:
            e.trace += explain_sites.steps(list(sources), e.wrong, texts)
    return out


def _follow_ons(log: str, found: list[Explanation]) -> list[Explanation]:
    """`create_func_`/`run_func_ ... API call failed` and `Failed to destroy CUDA event`: what torch
    raises after the error itself. With that error found they say only when it happened (load or
    call); alone (a log cut short), they are the explanation."""
    phase = _search_lines(_PHASE, log, "_func_(")
    event = _search_lines(_EVENT, log, "Failed to destroy CUDA event")
    when = None
    if phase:
        when = _WHEN_LOAD if phase.group(1) == "create" else _WHEN_CALL
    if found:
        for e in found[:1]:
            if when:
                e.trace.append(Step(f"it failed {when}"))
            if event:
                e.trace.append(Step(f"`Failed to destroy CUDA event ...: {event.group(1).strip()}` follows: the same "
                                    "error left the CUDA context broken (restart the process)"))
        return []
    if event:
        cause = event.group(1).strip()
        wrong = SHAPE if "assert" in cause or "illegal memory" in cause else None
        return [Explanation("cuda-event", event.group(0), [Step(f"it failed {when}")] if when else [],
                            f"a CUDA error (`{cause}`) broke the context during a package run; the error itself is printed "
                            "before this line", ["run again with CUDA_LAUNCH_BLOCKING=1 and give the whole log to `aoti-lsp explain`"],
                            wrong)]
    if phase:
        load = phase.group(1) == "create"
        return [Explanation("load-failed" if load else "run-failed", phase.group(0), [],
                            f"the package failed {when}; the reason is printed before this line (`Error: ...`, or a C++ "
                            "`Exception in aoti_torch`)",
                            ["give the whole log (stderr) to `aoti-lsp explain`; TORCH_SHOW_CPP_STACKTRACES=1 adds the C++ frames"],
                            LOAD_DEVICE if load else None)]
    return []


def _search_lines(pattern: re.Pattern, log: str, needle: str):
    """`pattern` on the (length-capped) lines holding `needle`: no regex runs over a huge blob."""
    at = log.find(needle)
    while at >= 0:
        start = log.rfind("\n", 0, at) + 1
        end = log.find("\n", at)
        line = log[start:end if end >= 0 else len(log)]
        m = pattern.search(line[:4096]) if len(line) <= 16384 else None
        if m:
            return m
        at = log.find(needle, at + 1)
    return None


def _member_path(package: str, member: str) -> str:
    return f"{package}!{member}"


def _index(log, m, pkg, models, sources) -> Explanation:
    tmp, ks = m.group(1), m.group(2)
    e = Explanation("index-out-of-bounds", m.group(0))
    cpu = _search_lines(_CPU_FROM, log, "Exception raised from ")
    cuda = _search_lines(_CUDA_ASSERT, log, f"Assertion `{m.group(0)}` failed")
    if cpu:
        e.trace.append(Step(f"raised by kernel `{cpu.group(1)}` ({os.path.basename(cpu.group(2))}:{cpu.group(3)})"))
    elif cuda:
        e.trace.append(Step(f"Triton device assert, block [{cuda.group(3)}], thread [{cuda.group(4)}] "
                            f"({os.path.basename(cuda.group(1))}:{cuda.group(2)})"))
    e.wrong = SHAPE
    # only what is known: the traced lower bound is the package's, read below when it is given
    e.cause = (f"an index computed inside the model is outside 0..{ks}-1: {ks} is a size that is 0 (or too small) "
               "for this input, typically an empty jagged batch")
    e.fixes = list(EMPTY_FIXES)
    if not models:
        e.trace.append(Step("no package given (--package): the trace stops here"))
        return e
    wanted = f"index out of bounds: 0 <= {tmp} < {ks}"
    found = []
    for model in models.values():
        for k in model.kernels.values():
            if cpu and k.name != cpu.group(1):
                continue
            for text, line in k.asserts:
                if text == wanted:
                    found.append((model, k, line))
    if not found:
        e.trace.append(Step(f"no kernel of the package asserts `{wanted}`: is it the package that crashed?"))
        return e
    if len(found) > 1:
        e.trace.append(Step(f"{len(found)} kernels assert `{wanted}`: each is traced"))
    for model, k, line in found:
        e.trace.append(Step(f"kernel `{k.name}` asserts `{wanted}`", _member_path(pkg.path, k.member), line))
        if ks not in k.params:
            continue
        pos = k.params.index(ks)
        e.trace.append(Step(f"`{ks}` is parameter {pos} of `{k.name}`", _member_path(pkg.path, k.member), k.line))
        for call in (c for c in model.calls if c.kernel == k.name):
            arg = call.args[pos] if pos < len(call.args) else "?"
            e.trace.append(Step(f"the call passes `{arg}` as `{ks}`", _member_path(pkg.path, model.wrapper_member), call.line))
            for sym in generated.symbols_in(arg):
                if sym not in model.symbols:
                    continue
                name, dim = model.symbols[sym]
                inp = model.input_named(name)
                e.trace.append(Step(f"`int64_t {sym} = {name}_size[{dim}]`", _member_path(pkg.path, model.wrapper_member),
                                    _wrapper_line(model, pkg, f"int64_t {sym} = ")))
                if inp is not None:
                    e.trace += _input_steps({model.name: model}, inp.index, dim, sources, pkg.path, detail=False)
                    lower = inp.dims.get(dim, generated.Dim()).lower
                    traced = f"the package was traced with `{name}` dimension {dim} >= {lower}"
                    if lower is not None and traced not in e.cause:
                        e.cause += f" ({traced})"
            ops = call.nodes or generated.ops_of_kernel(k.name)
            label = "Source Nodes" if call.nodes else "ops named in the kernel"
            e.trace.append(Step(f"{label}: {', '.join(ops)}"))
            lines = _python_lines(model, k.name, ops, sources)
            e.trace += lines
            e.trace += _producers(model, call, ops, sources, {(s.path, s.line) for s in lines})
    return e


def _producers(model, call, own_nodes, sources, seen) -> list[Step]:
    """The kernel's buffer inputs (`bufN`) and the ops that computed them, one level up."""
    out = []
    for arg in call.args:
        for buf in re.findall(r"\bbuf\d+\b", arg):
            nodes = model.producer(buf)
            if not nodes or nodes == own_nodes:
                continue  # written by this call: an output
            out.append(Step(f"its input `{buf}` is computed by Source Nodes: {', '.join(nodes)}"))
            for step in _python_lines(model, "", nodes, sources, quiet=True):
                if (step.path, step.line) not in seen:
                    seen.add((step.path, step.line))
                    out.append(step)
    return out


def _wrapper_line(model, pkg, needle: str) -> int | None:
    text = pkg.models[model.name].wrapper or ""
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _input_steps(models, index: int, dim: int, sources, package, detail: bool = True) -> list[Step]:
    out = []
    for model in models.values():
        inp = next((i for i in model.inputs if i.index == index), None)
        if inp is None:
            continue
        d = inp.dims.get(dim, generated.Dim())
        param = _forward_param(sources, index, package)
        where = f" (`{param[0]}` of forward)" if param else ""
        out.append(Step(f"input {index}, dimension {dim}{where}: `{inp.name}`", *(param[1:] if param else (None, None))))
        out.append(Step(f"guards generated for it: {_guards(d)}"))
    return out


def _guards(d: generated.Dim) -> str:
    if d.size is not None:
        return f"static size {d.size}"
    parts = []
    if d.lower is not None:
        parts.append(f"lower bound {d.lower}" + (" (rejects empty and size-1 inputs, only with "
                                                  f"{RUNTIME_CHECK})" if d.lower >= 2 else ""))
    else:
        parts.append("no lower check")
    parts.append(f"upper bound {d.upper}" if d.upper is not None else "no upper check")
    return ", ".join(parts)


def _empty_risks(model, package) -> list[Step]:
    out = []
    for inp in model.inputs:
        for dim, d in sorted(inp.dims.items()):
            if d.symbol and (d.lower is None or d.lower >= 2):
                out.append(Step(f"input {inp.index}, dimension {dim} (`{inp.name}`) is dynamic: {_guards(d)}; "
                                "an empty or size-1 value there is outside what was traced"))
    return out


# -- the user's source ------------------------------------------------------------------------------
def _forwards(sources) -> list[tuple[str, ast.FunctionDef, str]]:
    out = []
    for path in sources:
        try:
            with open(path, "rb") as fh:
                tree = ast.parse(fh.read(2_000_000))
        except (OSError, SyntaxError, ValueError, RecursionError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "forward":
                        out.append((node.name, item, os.path.abspath(path)))
    return out


def _pick_forward(sources, package):
    found = _forwards(sources)
    if len(found) > 1 and package:
        stem = os.path.splitext(os.path.basename(package))[0]
        named = [f for f in found if f[0] == stem]
        found = named or found
    return found[0] if len(found) == 1 else None


def _forward_param(sources, index: int, package) -> tuple[str, str, int] | None:
    picked = _pick_forward(sources, package)
    if picked is None:
        return None
    _, fn, path = picked
    params = [a for a in fn.args.posonlyargs + fn.args.args][1:]  # drop self
    if index >= len(params):
        return None
    return params[index].arg, path, params[index].lineno


# op name -> how it is spelled in Python source
_SPELLING = {
    "index": r"\w\[[^\]\d:-]",  # `values[idx]`: indexing with a tensor
    "sub": r"\s-\s|\.sub\(|torch\.sub\(",
    "add": r"\s\+\s|\.add\(|torch\.add\(",
    "mul": r"\s\*\s|\.mul\(|torch\.mul\(",
    "gt": r"\s>\s|\.gt\(", "ge": r"\s>=\s|\.ge\(", "lt": r"\s<\s|\.lt\(", "le": r"\s<=\s|\.le\(",
    "select": r"\[-?\d+\]", "slice": r"\[-?\d*:-?\d*\]", "to": r"\.to\(", "to_copy": r"\.to\(",
}


def _python_lines(model, kernel: str, ops: list[str], sources, quiet: bool = False) -> list[Step]:
    info = _from_kernel_information(model, kernel) if kernel else []
    if info:
        return info
    picked = _pick_forward(sources, None) if len(_forwards(sources)) == 1 else None
    if picked is None:
        for f in _forwards(sources):
            if f[0] == model.name:
                picked = f
    if picked is None and sources:
        found = _forwards(sources)
        picked = found[0] if found else None
    if picked is None:
        return [Step("give the model file with --source to see the Python lines of these ops")] if not sources and not quiet else []
    _, fn, path = picked
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    strong = [o for o in ops if o not in ("sub", "add", "mul", "gt", "ge", "lt", "le", "to", "to_copy", "unsqueeze")]
    out = []
    for n in range(fn.body[0].lineno, (fn.end_lineno or fn.lineno) + 1):
        text = lines[n - 1] if n - 1 < len(lines) else ""
        code = text.split("#")[0]
        hit = [o for o in strong if re.search(_SPELLING.get(o, rf"\b{re.escape(o)}\s*\("), code)]
        if hit:
            out.append(Step(f"{', '.join(hit)}: `{text.strip()}`", path, n))
    return out


def _from_kernel_information(model, kernel: str) -> list[Step]:
    """Python frames of a kernel from kernel_information.json (`trace.provenance_tracking_level: 1`):
    `{"<kernel>:<n>": {"stack_traces": ["File \"m.py\", line 10, in forward\n    code"], ...}}`."""
    info = model.kernel_information
    if not isinstance(info, dict):
        return []
    out = []
    for key, entry in info.items():
        if not isinstance(key, str) or key.rsplit(":", 1)[0] != kernel or not isinstance(entry, dict):
            continue
        for trace in entry.get("stack_traces") or []:
            m = re.match(r'File "([^"]+)", line (\d+), in (\w+)\n\s*(.*)', trace) if isinstance(trace, str) else None
            if m:
                out.append(Step(f"`{m.group(4).strip()}` (in {m.group(3)}, from kernel_information.json)",
                                m.group(1), int(m.group(2))))
    return sorted(out, key=lambda s: s.line)


# -- rendering ----------------------------------------------------------------------------------------
def render_text(items: list[Explanation]) -> str:
    if not items:
        return "No known AOTInductor error in this log.\nCheck, in order:\n" + "\n".join(f"  - {c}" for c in CHECKLIST)
    out = []
    for e in items:
        out.append(f"{e.kind}: {e.message}")
        for s in e.trace:
            loc = f"{s.path}:{s.line}: " if s.path and s.line else ""
            out.append(f"  -> {loc}{s.text}")
        if e.cause:
            out.append(f"  cause: {e.cause}")
        if e.wrong:
            out.append(f"  wrong: {e.wrong}")
        for f in e.fixes:
            out.append(f"  fix: {f}")
    return "\n".join(out)


def render_json(items: list[Explanation]) -> str:
    return json.dumps([asdict(e) for e in items], indent=2)
