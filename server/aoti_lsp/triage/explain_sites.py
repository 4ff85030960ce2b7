"""`explain --source`: where the user's code sets what an error says is wrong.

The compile, load and call sites of the given files, read with the facts layer (facts.py) and
the device evaluation of AOTI101-AOTI103 (devices.py): what each site is known to use (compile
device, load device or index, the inputs' devices) and the line where that was set. Only the
sites that bear on what is wrong are listed; nothing is said where the code does not say it.
"""

from __future__ import annotations

import os

from aoti_lsp.triage.explain import Step
from aoti_lsp.triage.explain_messages import COMPILE_DEVICE, INPUT_DEVICE, LOAD_DEVICE, SHAPE

# what is wrong -> the sites that set it (and the compile, which says what the rest must match)
_KINDS = {COMPILE_DEVICE: ("compile", "call"), LOAD_DEVICE: ("compile", "load"),
          INPUT_DEVICE: ("compile", "call"), SHAPE: ("compile", "call")}
MAX_BYTES = 2_000_000


def steps(sources, wrong: str | None, texts: dict[str, bytes] | None = None) -> list[Step]:
    kinds = _KINDS.get(wrong or "")
    if not kinds:
        return []
    from aoti_lsp.project.project import Project, summarize
    from aoti_lsp.analysis.source import Source

    texts = {os.path.abspath(p): d for p, d in (texts or {}).items()}
    read = {p: d for p, d in ((os.path.abspath(p), _read(p, texts)) for p in sources) if d is not None}
    if not read:
        return []
    # the given files are the project: an artifact compiled in one and loaded in another is linked
    project = Project(root=os.path.commonpath([os.path.dirname(p) for p in read]))
    for path, data in read.items():
        project.update(path, summarize(Source(data, path)))
    out: list[Step] = []
    for path, data in read.items():
        out += _file_steps(path, data, kinds, project, wrong)
    return out


def _read(path: str, texts: dict[str, bytes]) -> bytes | None:
    from aoti_lsp.analysis.source import SourceError, decode_check

    try:
        data = texts.get(path)
        if data is None:
            with open(path, "rb") as fh:
                data = fh.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            return None
        decode_check(data)
    except (OSError, SourceError):
        return None
    return data


def _file_steps(path: str, data: bytes, kinds: tuple[str, ...], project, wrong: str) -> list[Step]:
    from aoti_lsp.analysis import devices
    from aoti_lsp.project.config import Config
    from aoti_lsp.analysis.context import Context
    from aoti_lsp.analysis.source import Source

    src = Source(data, path)
    a = devices.analysis(Context(src, Config(), project))
    out: list[Step] = []

    def line(byte: int) -> int:
        return src.lines.line_of(byte) + 1

    def code(node) -> str:
        return devices.snippet(src.node_text(node), 60)

    def evidence(dev, what: str, site) -> list[Step]:
        """The line that set a device, when it is another line of this file than the site's."""
        ev = dev.evidence[0] if dev is not None and dev.evidence else None
        if ev is None or ev.path is not None or line(ev.start) == line(site.start_byte):
            return []
        return [Step(f"{what} set here: {ev.what}", path, line(ev.start))]

    if "compile" in kinds:
        for site in a.compiles():
            dev = a.compile_device(site)
            said = f"compiled for `{dev.spelled}`" if dev else "compile device not known from the code"
            out.append(Step(f"compile: `{code(site.call)}`: {said}{_shapes(a, site)}", path, line(site.call.start_byte)))
            out += evidence(dev, "compile device", site.call)
    for load in a.loads():
        art = a.artifact(load)
        compiled = art.device if art is not None else None
        if "load" in kinds:
            out.append(Step(f"load: `{code(load.call)}`: {_load_device(a, load, compiled)}", path, line(load.call.start_byte)))
            if load.old and load.device_node is not None:
                out += evidence(a.device_value(load.device_node, load.call.start_byte), "load device", load.call)
        if "call" in kinds:
            for call in a.runner_calls(load):
                if wrong == SHAPE:
                    out.append(Step(f"call: `{code(call)}`: {_input_shapes(a, call)}", path, line(call.start_byte)))
                    continue
                out.append(Step(f"call: `{code(call)}`: {_inputs(a, call, compiled)}", path, line(call.start_byte)))
                for arg in _args(call):
                    out += evidence(a.tensor_device(arg, call.start_byte), f"device of `{code(arg)}`", call)
    return out


def _shapes(a, site) -> str:
    inputs = a.inputs(site)
    if not inputs:
        return ""
    parts = []
    for i, inp in enumerate(inputs):
        shape = "?" if inp.meta is None or inp.meta.shape is None else ", ".join(map(str, inp.meta.shape))
        dyn = "dynamic dims not known" if inp.dynamic is None else (
            f"dynamic dims {', '.join(map(str, sorted(inp.dynamic)))}" if inp.dynamic else "all dims static")
        parts.append(f"input {i} [{shape}] ({dyn})")
    return "; example " + ", ".join(parts)


def _load_device(a, load, compiled) -> str:
    at = load.call.start_byte
    of = f" (compiled for `{compiled.spelled}`)" if compiled is not None else ""
    if load.old:
        dev = a.device_value(load.device_node, at) if load.device_node is not None else None
        return (f"loads on `{dev.spelled}`" if dev else "load device not known from the code") + of
    if load.index_node is not None:
        index = a.int_value(load.index_node, at)
        return (f"device_index={index}" if index is not None else "device_index set at run time") + of
    return "device taken from the package" + of


def _args(call):
    args = call.child_by_field_name("arguments")
    if args is None:
        return []
    return [c.child_by_field_name("value") if c.type == "keyword_argument" else c
            for c in args.named_children if c.type not in ("comment", "list_splat", "dictionary_splat")]


def _inputs(a, call, compiled) -> str:
    parts = []
    for i, arg in enumerate(_args(call)):
        if arg is None:
            continue
        dev = a.tensor_device(arg, call.start_byte)
        parts.append(f"input {i} on `{dev.spelled}`" if dev else f"input {i}: device not known from the code")
    of = f" (package compiled for `{compiled.spelled}`)" if compiled is not None else ""
    return ("; ".join(parts) or "no inputs") + of


def _input_shapes(a, call) -> str:
    parts = []
    for i, arg in enumerate(_args(call)):
        meta = a.tensor_meta(arg, call.start_byte) if arg is not None else None
        shape = None if meta is None or meta.shape is None else ", ".join(map(str, meta.shape))
        parts.append(f"input {i} [{shape}]" if shape is not None else f"input {i}: shape not known from the code")
    return "; ".join(parts) or "no inputs"
