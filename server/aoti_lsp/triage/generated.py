"""What AOTInductor generated, read from the package's text (no torch): inputs and their dims,
the shape symbols, the input guards, the kernels with their parameters and their call sites.

wrapper.cpp holds `inputs_info_[i].name = "argK_1";`, `int64_t sN = argK_1_size[d];`, guards
`if (argK_1_size[0] < 2) {`, and before kernel calls `// Topologically Sorted Source Nodes: [...]`.
CUDA: Triton kernels are embedded in wrapper.cpp as comments (`def triton_...(in_ptr0, ..., ks0, ...):`)
and called through `call_triton_...(args)`; CPU: kernels are `extern "C" void cpp_fused_...(...)`
in kernel.cpp, called directly from wrapper.cpp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aoti_lsp.analysis.pt2 import ModelSources

_INPUT = re.compile(r'inputs_info_\[(\d+)\]\.name = "([^"\\]{1,200})";')
_CONSTANT = re.compile(r'constants_info_\[(\d+)\]\.name = "([^"\\]{1,500})";')
_CONSTANT_SHAPE = re.compile(r"constants_info_\[(\d+)\]\.shape = \{([\d, ]*)\};")
_SYMBOL = re.compile(r"\bint64_t (s\d+) = (\w+)_size\[(\d+)\];")
_LOWER = re.compile(r"\bif \((\w+)_size\[(\d+)\] < (-?\d+)L?\) \{")
_UPPER = re.compile(r"\bif \((\w+)_size\[(\d+)\] > (-?\d+)L?\) \{")
_STATIC = re.compile(r"\bif \((-?\d+)L? != (\w+)_size\[(\d+)\]\) \{")
_DTYPE = re.compile(r"\b(\w+)_expected_dtype = aoti_torch_dtype_(\w+)\(\);")
_DEVICE = re.compile(r"\b(\w+)_expected_device_type = aoti_torch_device_type_(\w+)\(\);")
# linear on any text (issue 19 item 4): `[ \t]*`, not `\s*`, at a line start (`\s` would run on
# over every blank line after it, from each one); a parameter list stops at the next `(` too
_TRITON_DEF = re.compile(r"^[ \t]*def (triton_\w+)\(([^()]*)\):", re.M)
_CPP_DEF = re.compile(r'extern "C"\s+void\s+(\w+)\(([^(){]*)\)\s*\{')
_NODES = re.compile(r"// Topologically Sorted Source Nodes: \[([^\]]*)\], Original ATen: \[([^\]]*)\]")
_CALL = re.compile(r"^\s*(?:call_)?((?:triton|cpp)_\w+)\((.*)\);\s*$")
_ASSERT = re.compile(r'"(index out of bounds: 0 <= (tmp\d+) < (ks\d+))"')


@dataclass
class Dim:
    size: int | None = None  # static size
    symbol: str | None = None  # dynamic: its sN
    lower: int | None = None  # the guard `< L` (AOTI_RUNTIME_CHECK_INPUTS=1 only)
    upper: int | None = None


@dataclass
class Input:
    index: int
    name: str  # argK_1
    dims: dict[int, Dim] = field(default_factory=dict)
    dtype: str | None = None
    device: str | None = None


@dataclass
class Kernel:
    name: str
    params: list[str]
    member: str  # the package member holding it
    line: int  # 1-based line of its definition in that member
    text: str
    asserts: list[tuple[str, int]] = field(default_factory=list)  # (message, line in member)


@dataclass
class Call:
    kernel: str
    args: list[str]
    line: int  # in wrapper.cpp
    nodes: list[str] | None = None  # Topologically Sorted Source Nodes
    aten: list[str] | None = None


@dataclass
class Model:
    name: str
    metadata: dict
    wrapper_member: str | None
    inputs: list[Input] = field(default_factory=list)
    symbols: dict[str, tuple[str, int]] = field(default_factory=dict)  # sN -> (argK_1, dim)
    constants: list[str] = field(default_factory=list)
    constant_shapes: dict[str, str] = field(default_factory=dict)  # name -> "64, 32"
    kernels: dict[str, Kernel] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    kernel_information: dict | None = None  # kernel -> Python frames (provenance tracking)
    # (Source Nodes, the wrapper text from that comment through the call it describes)
    blocks: list[tuple[list[str], str]] = field(default_factory=list)

    @property
    def device(self) -> str | None:
        value = self.metadata.get("AOTI_DEVICE_KEY")
        return value if isinstance(value, str) else None

    def producer(self, buf: str) -> list[str] | None:
        """Source Nodes of the first described call that names `buf` (the one that writes it)."""
        pattern = re.compile(rf"\b{re.escape(buf)}(?:_handle)?\b")
        return next((nodes for nodes, text in self.blocks if pattern.search(text)), None)

    def input_named(self, name: str) -> Input | None:
        return next((i for i in self.inputs if i.name == name), None)


def split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _param_name(decl: str) -> str:
    decl = decl.split("=")[0].split(":")[0].strip()
    return re.split(r"[\s*&]+", decl)[-1] if decl else decl


def _kernels(text: str, member: str, pattern: re.Pattern, end_marker: str) -> dict[str, Kernel]:
    out = {}
    defs = list(pattern.finditer(text))
    line, counted = 1, 0  # lines counted up to `counted`: each kernel's line from the previous one's
    for i, m in enumerate(defs):
        nxt = defs[i + 1].start() if i + 1 < len(defs) else len(text)
        end = text.find(end_marker, m.end(), nxt)  # never past the next definition
        end = nxt if end < 0 else end
        body = text[m.start():end]
        line += text.count("\n", counted, m.start())
        counted = m.start()
        start_line = line
        params = [_param_name(p) for p in split_args(m.group(2))]
        k = Kernel(m.group(1), params, member, start_line, body)
        at, seen = start_line, 0
        for a in _ASSERT.finditer(body):
            at += body.count("\n", seen, a.start())
            seen = a.start()
            k.asserts.append((a.group(1), at))
        out.setdefault(k.name, k)
    return out


def parse(src: ModelSources) -> Model:
    model = Model(src.name, src.metadata, src.wrapper_name, kernel_information=src.kernel_information)
    w = src.wrapper or ""
    inputs = {int(i): name for i, name in _INPUT.findall(w)}
    model.inputs = [Input(i, inputs[i]) for i in sorted(inputs)]
    by_name = {i.name: i for i in model.inputs}
    named = {int(i): name for i, name in _CONSTANT.findall(w)}
    model.constants = [named[i] for i in sorted(named)]
    for i, shape in _CONSTANT_SHAPE.findall(w):
        if int(i) in named:
            model.constant_shapes[named[int(i)]] = shape.strip()
    for sym, arg, d in _SYMBOL.findall(w):
        model.symbols.setdefault(sym, (arg, int(d)))
        if arg in by_name:
            by_name[arg].dims.setdefault(int(d), Dim()).symbol = sym
    for arg, d, v in _LOWER.findall(w):
        if arg in by_name:
            by_name[arg].dims.setdefault(int(d), Dim()).lower = int(v)
    for arg, d, v in _UPPER.findall(w):
        if arg in by_name:
            by_name[arg].dims.setdefault(int(d), Dim()).upper = int(v)
    for v, arg, d in _STATIC.findall(w):
        if arg in by_name:
            by_name[arg].dims.setdefault(int(d), Dim()).size = int(v)
    for arg, dtype in _DTYPE.findall(w):
        if arg in by_name:
            by_name[arg].dtype = dtype
    for arg, dev in _DEVICE.findall(w):
        if arg in by_name:
            by_name[arg].device = dev
    if src.wrapper_name:
        model.kernels.update(_kernels(w, src.wrapper_name, _TRITON_DEF, "''', device_str"))
    for member, text in src.kernels:
        for name, k in _kernels(text, member, _CPP_DEF, 'extern "C"').items():
            model.kernels.setdefault(name, k)
    nodes = None
    block: list[str] | None = None
    for n, line in enumerate(w.splitlines(), 1):
        m = _NODES.search(line)
        if m:
            nodes = ([s.strip() for s in m.group(1).split(",") if s.strip()],
                     [s.strip() for s in m.group(2).split(",") if s.strip()])
            block = [line]
            model.blocks.append((nodes[0], ""))
            continue
        if block is not None:
            block.append(line)
            if _CALL.match(line) or re.search(r"aoti_torch_(?:cpu|cuda)_(?!empty_strided)", line):
                model.blocks[-1] = (model.blocks[-1][0], "\n".join(block))
                block = None
        m = _CALL.match(line)
        if m and m.group(1) in model.kernels:
            call = Call(m.group(1), split_args(m.group(2)), n)
            if nodes is not None:
                call.nodes, call.aten = nodes
            nodes = None
            model.calls.append(call)
        elif re.search(r"aoti_torch_(?:cpu|cuda)_(?!empty_strided)", line):
            nodes = None  # a fallback op (e.g. cumsum) took the comment: the next kernel has none
    return model


def symbols_in(expr: str) -> list[str]:
    return re.findall(r"\bs\d+\b", expr)


def ops_of_kernel(name: str) -> list[str]:
    """`cpp_fused__to_copy_ge_gt_index_mul_sub_..._0` -> op names (when no Source Nodes comment)."""
    m = re.match(r"(?:cpp|triton_\w+?)_fused_(.*?)(?:_\d+)?$", name) or re.match(r"triton_(?:poi|red|per|tem)_fused_(.*?)(?:_\d+)?$", name)
    if m is None:
        return []
    body = m.group(1)
    known = ["zeros_like", "ones_like", "full_like", "index_select", "index_copy", "index_add", "to_copy", "_to_copy",
             "repeat_interleave", "segment_reduce", "unsqueeze", "cumsum", "where", "index", "gather", "scatter",
             "select", "slice", "sum", "mul", "sub", "add", "div", "ge", "gt", "le", "lt", "eq", "ne", "max", "min",
             "arange", "cat", "clone", "view", "expand", "copy"]
    out, rest = [], body.strip("_")
    while rest:
        for k in sorted(known, key=len, reverse=True):
            if rest == k or rest.startswith(k + "_"):
                out.append(k.lstrip("_"))
                rest = rest[len(k):].lstrip("_")
                break
        else:
            head, _, rest = rest.partition("_")
            out.append(head)
    return out
