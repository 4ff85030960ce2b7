"""`aoti-lsp inspect PKG`: what a `.pt2` package was compiled for and what it accepts, without torch.

Read with the bounded reader of pt2.py (no extraction, capped members, untrusted names).
"""

from __future__ import annotations

import json

from aoti_lsp.triage import generated
from aoti_lsp.analysis import pt2
from aoti_lsp.triage.explain import RUNTIME_CHECK


def inspect(path: str) -> dict:
    src = pt2.read_sources(path)
    out: dict = {"package": src.path, "error": src.error, "models": [], "members": len(src.members),
                 "unsafe_member_names": src.unsafe_names, "skipped": src.skipped}
    for name in sorted(src.models):
        m = generated.parse(src.models[name])
        meta = m.metadata
        inputs = []
        for inp in m.inputs:
            dims = []
            for d in range(max(inp.dims, default=-1) + 1):
                dim = inp.dims.get(d)
                if dim is None:
                    dims.append({"dim": d})
                    continue
                entry = {"dim": d, "size": dim.size, "symbol": dim.symbol, "min": dim.lower, "max": dim.upper}
                flags = []
                if dim.symbol and dim.lower is None:
                    flags.append("no lower check")
                elif dim.symbol and dim.lower is not None and dim.lower >= 1:
                    flags.append(f"rejects {'empty and size-1' if dim.lower >= 2 else 'empty'} inputs "
                                 f"(with {RUNTIME_CHECK}; without it they are outside what was traced)")
                entry["flags"] = flags
                dims.append(entry)
            inputs.append({"index": inp.index, "name": inp.name, "dtype": inp.dtype, "dims": dims})
        out["models"].append({
            "name": name,
            "device": m.device,
            "platform": meta.get("AOTI_PLATFORM"),
            "machine": meta.get("AOTI_MACHINE"),
            "compute_capability": meta.get("AOTI_COMPUTE_CAPABILITY"),
            "cpu_isa": meta.get("AOTI_CPU_ISA"),
            "inputs": inputs,
            "symbols": {s: {"input": a, "dim": d} for s, (a, d) in m.symbols.items()},
            "constants": [{"name": c, "shape": m.constant_shapes.get(c)} for c in m.constants],
            "kernels": sorted(m.kernels),
            "kernel_information": m.kernel_information is not None,
        })
    return out


def render_text(info: dict) -> str:
    lines = [f"package: {info['package']}"]
    if info["error"]:
        lines.append(f"error: {info['error']}")
        return "\n".join(lines)
    if not info["models"]:
        lines.append("no AOTInductor model found in this zip")
    for m in info["models"]:
        lines.append(f"model `{m['name']}`: device {m['device'] or '?'}, {m['platform'] or '?'}/{m['machine'] or '?'}"
                     + (f", compute capability {m['compute_capability']}" if m["device"] == "cuda" and m["compute_capability"] else "")
                     + (f", CPU ISA {m['cpu_isa']}" if m["cpu_isa"] else ""))
        for inp in m["inputs"]:
            shape = ", ".join(str(d.get("size") or d.get("symbol") or "?") for d in inp["dims"])
            lines.append(f"  input {inp['index']} `{inp['name']}`: {inp['dtype'] or '?'}[{shape}]")
            for d in inp["dims"]:
                if d.get("symbol"):
                    bounds = f"{d['min'] if d['min'] is not None else '?'} <= {d['symbol']}" + (
                        f" <= {d['max']}" if d["max"] is not None else "")
                    lines.append(f"    dim {d['dim']}: {bounds}" + "".join(f"; {f}" for f in d["flags"]))
        lines.append(f"  constants: {len(m['constants'])}")
        lines += [f"    {c['name']}" + (f" [{c['shape']}]" if c["shape"] is not None else "") for c in m["constants"][:50]]
        if len(m["constants"]) > 50:
            lines.append(f"    ... {len(m['constants']) - 50} more")
        lines.append(f"  kernels: {len(m['kernels'])}")
        lines += [f"    {k}" for k in m["kernels"]]
        if m["kernel_information"]:
            lines.append("  kernel_information.json: yes (kernels map to Python lines)")
    for name in info["unsafe_member_names"]:
        lines.append(f"warning: member name not trusted (ignored): {name}")
    for s in info["skipped"]:
        lines.append(f"warning: member not read: {s}")
    # names come from the package: a U+202E or a control character is shown escaped, never obeyed
    return "\n".join(pt2.printable(line) for line in lines)


def render_json(info: dict) -> str:
    return json.dumps(info, indent=2)
