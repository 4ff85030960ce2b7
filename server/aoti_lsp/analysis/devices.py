"""Device, shape and artifact evidence for the consistency rules (AOTI101-AOTI103).

What a tensor, module or device expression is *known* to be, from tree-sitter alone:
`.cuda()`, `.cpu()`, `.to("cuda:0")`, `.to(dev)`, `.to(device=...)`, `device=` of the torch
factories, `torch.device("cuda", 1)`, module constants, simple (re)assignments in order,
`with torch.device(...)`, `torch.set_default_device(...)`, a parameter's default, a helper of
the same file whose returns agree, `device.type`. Everything else is *unknown* (`None`) and the
rules stay silent on unknowns: conditional expressions, parameters without a default,
attributes of config objects, names bound on only some paths.

Where *any* path matters (a `device_index=` that is `None` on one of them), `device_choices` /
`index_choices` list every path instead: each branch of `a if c else b`, each `return` of a
helper (also unpacked: `rank, device = setup()`), minus the paths a test of the device rules out
(`device.index if device.type == "cuda" else -1`, `if device.index is not None:`, an earlier
`if device.type == "cpu": return ...`).

The artifact links a compile site to a load site: the compile call's return value, or a path
expression (string literal, constant, f-string / `os.path.join` / `pathlib` of constants,
`__file__`-relative) given as `aot_inductor.output_path` / `package_path`, matched to the
loader's path; then other files of the project (their `summary()`), then a `.pt2` on disk.
Offsets are UTF-8 byte offsets; no torch, no libcst.
"""

from __future__ import annotations

import os
import posixpath
from functools import cached_property
from collections.abc import Iterable

from aoti_lsp import lazyre
from aoti_lsp.analysis import reads, tables
from aoti_lsp.analysis.facts import (MARK_DYNAMIC, NEW_LOAD, SET_DEFAULT, SET_DTYPE, CompileSite, LoadSite, argument_of, bind,
                            is_fstring, string_value, unwrap)
from aoti_lsp.analysis.names import DEF, positional_names
from aoti_lsp.analysis.records import record, set_field
from aoti_lsp.analysis.source import descendants, whole_words
from aoti_lsp.analysis.treesitter import Node

CODES = ("AOTI101", "AOTI102", "AOTI103")
TRIGGERS = ("aot_load", "load_package", "aot_compile", "aoti_compile_and_package")

_DEV, _SHAPES = tables.section("devices"), tables.section("shapes")
DEVICE_TYPES = set(_DEV["types"])
_ACCELERATOR = (b"cuda", b"accelerator", b"mps", b"xpu")  # _accelerated_inside: whole words
_DEVICE_PREFIX = lazyre.compile(r"^([a-z_]+):")
FACTORIES, LIKE, ALWAYS_CPU = set(_DEV["factories"]), set(_DEV["like"]), set(_DEV["always_cpu"])
KEEP_DEVICE = set(_DEV["keep_device"])
KEEP_DTYPE, KEEP_META = set(_SHAPES["keep_dtype"]), set(_SHAPES["keep_meta"])
DTYPE_METHODS, DTYPES = dict(_SHAPES["dtype_methods"]), dict(_SHAPES["dtypes"])
_FUNCTIONS = ("function_definition", "lambda")
# `torch.tensor(<this>)` is built from Python data, on the default device (of a tensor: its device)
PYTHON_DATA = {"list", "tuple", "list_comprehension", "integer", "float", "true", "false", "unary_operator"}
MAX_DEPTH = 24
# the dynamic-dim markers of torch.export, by qualified name -> how a message spells them
STATIC = object()  # an input a `dynamic_shapes` dict keyed by name leaves out (_spec_items)
_DIMS = {f"{m}{k}": k for m in ("torch.export.Dim", "torch.export.dynamic_shapes.Dim") for k in ("", ".AUTO", ".DYNAMIC")}

# What torch said in each case, measured (../shared/aoti-facts.md; the CUDA runs' raw output is in
# ../shared/fixtures/cuda/runs/): the one place messages, rule pages and hovers quote it from.
CPU_213 = "torch 2.13 (CPU)"
CUDA_211 = "torch 2.11+cu130 (H200)"
MEASURED = {  # key: (torch's text, where measured, the part a message quotes)
    "index_none": ("TypeError: __init__(): incompatible constructor arguments", CPU_213, "TypeError"),
    "index_on_cpu": ("RuntimeError: Incorrect device passed to aoti_runner_cpu", CPU_213, "Incorrect device"),
    "cuda_loaded_on_cpu": ("Mixed-device constants are only supported when the secondary device is CPU. ... In AOTI, "
                           "you must compile and load on the same device type.", CUDA_211, "Mixed-device constants"),
    "cpu_input_to_cuda": ("Expected all tensors to be on the same device, but got mat1 is on cpu, different from other "
                          "tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm_out_out)", CUDA_211,
                          "Expected all tensors to be on the same device"),
    "cuda_input_to_cpu": ("Exception in aoti_torch: Expected out tensor to have device cuda:0, but got cpu instead",
                          CUDA_211, "Expected out tensor to have device cuda:0"),
    "bad_ordinal": ("CUDA error: invalid device ordinal", CUDA_211, "invalid device ordinal"),
}


def measured(key: str) -> str:
    """`<torch's text>` (measured on torch X (device)), for a rule page or a hover."""
    text, where, _ = MEASURED[key]
    return f"`{text}` (measured on {where})"


def quote(key: str) -> str:
    """The part of torch's text a message quotes (short: the whole text is in the hover)."""
    return f"`{MEASURED[key][2]}`"


def measured_in(message: str) -> list[str]:
    """Hover lines: the whole measured text of each one a message quotes."""
    return [f"Measured on {where}: `{text}`" for text, where, short in MEASURED.values() if short in message]


# -- values ------------------------------------------------------------------------------------
@record("start", "end", "what", "path", frozen=True)
class Evidence:
    """Why a value is known: a byte range and a short description (`device="cuda"`)."""

    def __init__(self, start: int, end: int, what: str, path: str | None = None):  # path None: the file being checked
        set_field(self, "start", start)
        set_field(self, "end", end)
        set_field(self, "what", what)
        set_field(self, "path", path)

    def as_tuple(self) -> tuple:
        return (self.start, self.end, self.what)


@record("type", "index", "evidence", frozen=True)
class Device:
    def __init__(self, type: str, index: int | None = None, evidence: tuple[Evidence, ...] = ()):
        set_field(self, "type", type)
        set_field(self, "index", index)
        set_field(self, "evidence", evidence)

    @property
    def spelled(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def because(self, *evidence: Evidence) -> "Device":
        return Device(self.type, self.index, tuple(evidence) + self.evidence)


@record("shape", "dtype", "evidence", frozen=True)
class Meta:
    """Shape and dtype of an example or call input, as far as literals say."""

    def __init__(self, shape: tuple[int, ...] | None, dtype: str | None, evidence: Evidence):
        set_field(self, "shape", shape)
        set_field(self, "dtype", dtype)
        set_field(self, "evidence", evidence)


@record("dim", "low", "high", "spelled", "evidence", "written_min", frozen=True)
class Bound:
    """A dynamic dim's range as traced. Export traces a dynamic dim as >= 2 whatever `min` says
    (sizes 0 and 1 are specialised), so `low` is at least 2; `high` None: no maximum.
    `spelled`: `Dim("batch", min=2, max=32)`, `Dim.AUTO`; `written_min`: the `min=` given, if any."""

    def __init__(self, dim: int, low: int, high: int | None, spelled: str, evidence: Evidence,
                 written_min: int | None = None):
        set_field(self, "dim", dim)
        set_field(self, "low", low)
        set_field(self, "high", high)
        set_field(self, "spelled", spelled)
        set_field(self, "evidence", evidence)
        set_field(self, "written_min", written_min)

    def as_tuple(self) -> tuple:
        return (self.dim, self.low, self.high, self.spelled, self.evidence.as_tuple(), self.written_min)

    @property
    def shown(self) -> str:
        return f"{self.low}..{self.high if self.high is not None else 'inf'}"


@record("meta", "dynamic", "bounds", frozen=True)
class Input:
    """One compile-time example input: its metadata and its dynamic dims
    (None: not known which dims are dynamic, so shapes are never compared), with their bounds."""

    def __init__(self, meta: Meta | None, dynamic: frozenset[int] | None, bounds: tuple[Bound, ...] = ()):
        set_field(self, "meta", meta)
        set_field(self, "dynamic", dynamic)
        set_field(self, "bounds", bounds)


@record("device", "where", "site", "inputs", "origin", "subject", "reason")
class Artifact:
    """What a load call loads, as far as it is known. `where`: "line 4", "make_package.py:7", ""
    (on disk); `site`: the compile call (or the package file); `origin`: compile | project | disk;
    `subject`: or "the package `m.pt2`"; `reason`: why the device is what it is, when not the
    first evidence."""

    def __init__(self, device: Device | None, where: str, site: Evidence | None, inputs: tuple[Input, ...] | None = None,
                 origin: str = "compile", subject: str = "a model", reason: str | None = None):
        self.device = device
        self.where = where
        self.site = site
        self.inputs = inputs
        self.origin = origin
        self.subject = subject
        self.reason = reason
        self.mixed = False  # example inputs on several device types (site_artifact)

    def compiled_for(self) -> str:
        """`a model compiled for `cuda` (line 3)`: short; the evidence is related information."""
        where = f" ({self.where})" if self.where else ""
        return f"{self.subject} compiled for `{self.device.type}`{where}"


@record("device", "has_index", frozen=True)
class DeviceChoice:
    """A device an expression holds on one of its paths (a helper's `return`, a branch of `a if c
    else b`). `has_index`: its `.index` is an int (`device.index` then, or an int not known
    here); else `.index` is None (`torch.device("cpu")`, `torch.device("cuda")`)."""

    def __init__(self, device: Device, has_index: bool):
        set_field(self, "device", device)
        set_field(self, "has_index", has_index)


@record("value", "known", "evidence", frozen=True)
class IndexChoice:
    """A value a `device_index=` argument takes on one of its paths: `value` None with `known`
    is `None`; `known` False is an int not known here (always >= 0: a device's index)."""

    def __init__(self, value: int | None, known: bool, evidence: tuple[Evidence, ...] = ()):
        set_field(self, "value", value)
        set_field(self, "known", known)
        set_field(self, "evidence", evidence)


# -- helpers -------------------------------------------------------------------------------------
def snippet(text: str, limit: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def delete_argument(data: bytes, arg: Node) -> tuple[int, int]:
    """Byte range that removes one argument with its separating comma."""
    prev = arg.prev_named_sibling
    while prev is not None and prev.type == "comment":
        prev = prev.prev_named_sibling
    if prev is not None:
        return prev.end_byte, arg.end_byte
    nxt = arg.next_named_sibling
    if nxt is not None:
        return arg.start_byte, nxt.start_byte
    end = arg.end_byte
    rest = data[end:]
    stripped = rest.lstrip(b" \t")
    if stripped.startswith(b","):
        end += len(rest) - len(stripped) + 1
    return arg.start_byte, end


def split_device(text: str) -> tuple[str, str | None] | None:
    """("cuda", "1") of "cuda:1", ("cpu", None) of "cpu": a lowercase type and an optional
    index, as spelt; None for anything else. Read without `re` (names.py says why)."""
    kind, colon, index = text.partition(":")
    if not kind or kind.strip("abcdefghijklmnopqrstuvwxyz_") or (colon and not index.isdecimal()):
        return None
    return kind, index if colon else None


def parse_device(text: str) -> tuple[str, int | None] | None:
    split = split_device(text)
    if split is None or split[0] not in DEVICE_TYPES:
        return None
    return split[0], int(split[1]) if split[1] is not None else None


class Analysis:
    """Evaluations of one file, cached for all three rules (and their summaries)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.src = ctx.source
        self.names = ctx.names
        self.facts = ctx.facts
        self._device_cache: dict[tuple[int, int], Device | None] = {}
        self._lookups: dict = {}  # artifact look-ups: they depend on the project and the disk

    def new_analysis(self) -> None:
        """Another check of the same file (the engine reuses the summary pass's analysis): the
        artifact look-ups are made again, what the file's own code says is kept."""
        self._lookups = {}

    # -- what the facts layer knows (shared with the jagged rules and the fixes) ----------------
    def compiles(self) -> list[CompileSite]:
        return self.facts.compiles

    def loads(self) -> list[LoadSite]:
        return self.facts.loads

    def runner_calls(self, load: LoadSite) -> list[Node]:
        return self.facts.runner_calls(load)

    def qualname(self, call: Node) -> str | None:
        return self.facts.qualname(call)

    def int_value(self, node: Node | None, at: int) -> int | None:
        return self.facts.int_value(node, at)

    def _ev(self, node: Node, what: str | None = None) -> Evidence:
        return Evidence(node.start_byte, node.end_byte, what or f"`{snippet(self.src.node_text(node))}`")

    def _method_ev(self, call: Node) -> Evidence:
        """`.cuda()` of `model.cuda()`: from the method name to the end of the call."""
        func = call.child_by_field_name("function")
        name = func.child_by_field_name("attribute")
        return Evidence(name.start_byte, call.end_byte, f"`.{snippet(self.src.data[name.start_byte:call.end_byte].decode())}`")

    # -- integers, strings, paths ----------------------------------------------------------------
    def device_value(self, node: Node | None, at: int, depth: int = 0) -> Device | None:
        """The device a *device expression* names: "cuda:0", torch.device(...), 0, a constant."""
        node = unwrap(node)
        if node is None or depth > MAX_DEPTH:
            return None
        t = node.type
        if t == "identifier":
            found = self._values_of(node, at)
            return self._agreed([self.device_value(v, v_at, depth + 1) for v, v_at in found]) if found else None
        if t in ("string", "concatenated_string"):
            value = string_value(node)
            if value is not None:
                parsed = parse_device(value)
                return Device(*parsed, (self._ev(node),)) if parsed else None
            if is_fstring(node):  # f"cuda:{rank}": the type is known, the index is not
                full = self.facts.str_value(node, at, depth + 1)
                if full is not None:
                    parsed = parse_device(full)
                    return Device(*parsed, (self._ev(node),)) if parsed else None
                parts = [c for c in node.named_children if c.type != "string_start"]
                if parts and parts[0].type == "string_content":
                    m = _DEVICE_PREFIX.match(parts[0].text.decode())
                    if m and m.group(1) in DEVICE_TYPES:
                        return Device(m.group(1), None, (self._ev(node),))
            return None
        if t == "integer":  # `.to(0)`, `device=1`: a CUDA index
            v = self.int_value(node, at)
            return Device("cuda", v, (self._ev(node),)) if v is not None and v >= 0 else None
        if t == "call":
            q = self.qualname(node)
            if q == "torch.device":
                bound, complete = bind(node, ("type", "index"))
                if not complete or "type" not in bound:
                    return None
                base = self.device_value(bound["type"], at, depth + 1)
                if base is None:
                    return None
                if "index" in bound:
                    index = self.int_value(bound["index"], at)
                    return Device(base.type, index, (self._ev(node),))
                return Device(base.type, base.index, (self._ev(node),))
            returns = self._returned(node) if q is None else None
            if returns:  # a helper of this file that returns a device: known when every return agrees
                return self._agreed([self.device_value(r, r.start_byte, depth + 1) for r in returns])
            return None
        if t == "attribute" and node.child_by_field_name("attribute").text == b"device":
            return self.tensor_device(node.child_by_field_name("object"), at, depth + 1)
        if t == "attribute" and node.child_by_field_name("attribute").text == b"type":  # `device.type`
            dev = self.device_value(node.child_by_field_name("object"), at, depth + 1)
            return Device(dev.type, None, dev.evidence) if dev else None
        return None

    @staticmethod
    def _agreed(devices: list[Device | None]) -> Device | None:
        """One device for several paths: known when every path names the same one."""
        if not devices or any(d is None for d in devices) or len({d.spelled for d in devices}) != 1:
            return None
        return devices[0]

    # -- values on several paths: device objects, `.index`, helpers ------------------------------
    def _values_of(self, ident: Node, at: int) -> list[tuple[Node, int]] | None:
        """What a name holds at `at`, one entry per path: its one straight-line assignment, a
        parameter's default (callers that pass another value are not followed), or the element
        it receives from a helper's returned tuple (`rank, device = setup()`)."""
        found = self.facts.binding_value(ident, at)
        if found is not None:
            return [(found[0], found[1].at)]
        default = self.facts.parameter_default(ident)
        if default is not None:
            return [(default, default.start_byte)]
        return self._unpacked_from_call(ident, at)

    def _unpacked_from_call(self, ident: Node, at: int) -> list[tuple[Node, int]] | None:
        name = ident.text.decode()
        scope = self.names.scope_of(ident)
        binding = self.names.lookup(name, min(at, ident.start_byte), scope)
        if binding is None or binding.value is not None or len(scope.bindings.get(name, ())) != 1:
            return None
        node = self.src.tree.root_node.descendant_for_byte_range(binding.at, binding.at)
        while node is not None and not (node.type == "assignment" and node.start_byte == binding.at):
            node = node.parent if node.parent is not None and node.parent.start_byte == binding.at else None
        if node is None or self.facts._conditional(node, ident):
            return None
        left, right = node.child_by_field_name("left"), unwrap(node.child_by_field_name("right"))
        if left is None or right is None or right.type != "call" or left.type not in ("pattern_list", "tuple_pattern"):
            return None
        targets = [c for c in left.named_children if c.type != "comment"]
        if any(c.type != "identifier" for c in targets):
            return None
        i = next((i for i, c in enumerate(targets) if c.text.decode() == name), None)
        if i is None:
            return None
        out = []
        for r in self._returned(right) or [None]:
            r = unwrap(r)
            items = [c for c in r.named_children if c.type != "comment"] if r is not None and r.type in (
                "expression_list", "tuple") else []
            if len(items) != len(targets):
                return None
            out.append((items[i], items[i].start_byte))
        return out

    def _returned(self, call: Node) -> list[Node] | None:
        """The expressions a helper of this file returns (`def setup(): ... return torch.device(...)`),
        one per `return`; None when the callee is not a function of this file or returns nothing."""
        func = call.child_by_field_name("function")
        if func is None or func.type != "identifier":
            return None
        key = ("returns", call.id)
        if key in self._per_site:
            return self._per_site[key]
        self._per_site[key] = None  # recursion reads as unknown
        b = self.names.lookup(func.text.decode(), call.start_byte, self.names.scope_of(call))
        out = None
        if b is not None and b.kind == DEF and b.stmt is not None and b.stmt.child_by_field_name("body") is not None:
            body = b.stmt.child_by_field_name("body")
            found = [r for r in descendants(body, "return_statement", skip=_FUNCTIONS + ("class_definition",))
                     if r.named_children]
            out = [r.named_children[0] for r in sorted(found, key=lambda r: r.start_byte)] or None
        self._per_site[key] = out
        return out

    def device_choices(self, node: Node | None, at: int, depth: int = 0) -> list[DeviceChoice | None]:
        """Every device `node` can hold, one per path (None: a path not known here)."""
        node = unwrap(node)
        if node is None or depth > MAX_DEPTH:
            return [None]
        t = node.type
        if t == "conditional_expression":
            parts = [c for c in node.named_children if c.type != "comment"]
            if len(parts) != 3:
                return [None]
            return self.device_choices(parts[0], at, depth + 1) + self.device_choices(parts[2], at, depth + 1)
        if t == "identifier":
            found = self._values_of(node, at)
            return [c for v, v_at in found for c in self.device_choices(v, v_at, depth + 1)] if found else [None]
        if t == "call" and self.qualname(node) is None:
            returns = self._returned(node)
            if returns:
                return [c for r in returns for c in self.device_choices(r, r.start_byte, depth + 1)]
            return [None]
        if t == "attribute" and node.child_by_field_name("attribute").text == b"device":
            dev = self.tensor_device(node.child_by_field_name("object"), at, depth + 1)
            return [DeviceChoice(dev, dev.type != "cpu")] if dev else [None]  # a tensor's cuda device has an index
        dev = self.device_value(node, at, depth + 1)
        if dev is None:
            return [None]
        if dev.index is not None:
            return [DeviceChoice(dev, True)]
        if t == "call":  # torch.device(type) or torch.device(type, index)
            bound, _ = bind(node, ("type", "index"))
            spelled = self.facts.deref(bound.get("type"), at)
            return [DeviceChoice(dev, "index" in bound or spelled is not None and b":" in spelled.text)]
        return [DeviceChoice(dev, b":" in node.text)]  # f"cuda:{rank}": an index, not known here

    def _guards(self, node: Node) -> list[tuple[bytes, object]]:
        """Tests of a device that hold where `node` stands: the branch of `a if <test> else b` or
        of an `if <test>:` it is in, for tests `d.type == "cuda"` (`!=`), `d.index is not None` (`is`)."""
        out = []
        child, n = node, node.parent
        while n is not None and n.type not in _FUNCTIONS + ("module", "class_definition"):
            test, holds = None, True
            if n.type == "conditional_expression":
                parts = [c for c in n.named_children if c.type != "comment"]
                if len(parts) == 3 and (_same(child, parts[0]) or _same(child, parts[2])):
                    test, holds = parts[1], _same(child, parts[0])
            elif n.type == "if_statement":
                test = n.child_by_field_name("condition")
                if _same(child, n.child_by_field_name("consequence")):
                    holds = True
                elif child.type == "else_clause" and not any(c.type == "elif_clause" for c in n.named_children):
                    holds = False
                else:
                    test = None
            if n.type in ("block", "module"):  # `if <test>: return ...` before it: the test fails here
                prev = child.prev_named_sibling
                while prev is not None:
                    if prev.type == "if_statement" and _exits(prev):
                        found = self._device_test(prev.child_by_field_name("condition"))
                        if found is not None:
                            out.append((found[0], lambda c, check=found[1]: not check(c)))
                    prev = prev.prev_named_sibling
            found = self._device_test(test) if test is not None else None
            if found is not None:
                text, check = found
                out.append((text, check if holds else (lambda c, check=check: not check(c))))
            child, n = n, n.parent
        return out

    @staticmethod
    def _device_test(test: Node) -> tuple[bytes, object] | None:
        test = unwrap(test)
        if test is None or test.type != "comparison_operator" or test.named_child_count != 2:
            return None
        left, right = test.named_children
        op = " ".join(c.type for c in test.children if not c.is_named)
        if left.type != "attribute":
            return None
        obj, attr = left.child_by_field_name("object"), left.child_by_field_name("attribute").text
        if attr == b"type" and op in ("==", "!=") and string_value(right) is not None:
            want, equal = string_value(right), op == "=="
            return obj.text, lambda c: (c.device.type == want) == equal
        if attr == b"index" and op in ("is", "is not") and right.type == "none":
            return obj.text, lambda c: c.has_index == (op == "is not")
        return None

    def index_choices(self, node: Node | None, at: int, depth: int = 0) -> list[IndexChoice | None]:
        """Every value a `device_index=` expression can take, one per path (None: not known)."""
        node = unwrap(node)
        if node is None or depth > MAX_DEPTH:
            return [None]
        t = node.type
        if t == "none":
            return [IndexChoice(None, True, (self._ev(node),))]
        if t in ("integer", "unary_operator"):
            v = self.int_value(node, at)
            return [IndexChoice(v, True, (self._ev(node),)) if v is not None else None]
        if t == "conditional_expression":
            parts = [c for c in node.named_children if c.type != "comment"]
            if len(parts) != 3:
                return [None]
            return self.index_choices(parts[0], at, depth + 1) + self.index_choices(parts[2], at, depth + 1)
        if t == "identifier":
            found = self._values_of(node, at)
            return [c for v, v_at in found for c in self.index_choices(v, v_at, depth + 1)] if found else [None]
        if t == "call":
            if self.qualname(node) == "torch.cuda.current_device":
                return [IndexChoice(None, False, (self._ev(node),))]
            returns = self._returned(node) if self.qualname(node) is None else None
            return [c for r in returns for c in self.index_choices(r, r.start_byte, depth + 1)] if returns else [None]
        if t == "attribute" and node.child_by_field_name("attribute").text == b"index":
            out: list[IndexChoice | None] = []
            obj = node.child_by_field_name("object")
            tests = [test for text, test in self._guards(node) if text == obj.text]
            for c in self.device_choices(obj, at, depth + 1):
                if c is not None and not all(test(c) for test in tests):
                    continue  # `device.index if device.type == "cuda" else -1`: not on this path
                if c is None:
                    out.append(None)
                elif c.has_index:
                    out.append(IndexChoice(c.device.index, c.device.index is not None, c.device.evidence))
                else:
                    out.append(IndexChoice(None, True, c.device.evidence))
            return out
        return [None]

    def tensor_device(self, node: Node | None, at: int, depth: int = 0) -> Device | None:
        """The device of a tensor or module expression."""
        node = unwrap(node)
        if node is None or depth > MAX_DEPTH:
            return None
        key = (node.id, at)
        if key in self._device_cache:
            return self._device_cache[key]
        self._device_cache[key] = None  # cycles read as unknown
        value = self._tensor_device(node, at, depth)
        self._device_cache[key] = value
        return value

    def _tensor_device(self, node: Node, at: int, depth: int) -> Device | None:
        t = node.type
        if t == "identifier":
            found = self.facts.binding_value(node, at)
            if found is None:
                return None
            value, binding = found
            moved = self._in_place_move(node, value, binding, at, depth)
            if moved is not None:
                return moved or None
            return self.tensor_device(value, binding.at, depth + 1)
        if t == "subscript":  # a slice or an element of a tensor stays on its device
            return self.tensor_device(node.child_by_field_name("value"), at, depth + 1)
        if t != "call":
            return None
        func = node.child_by_field_name("function")
        q = self.qualname(node)
        if q is not None and q.startswith("torch."):
            short = q.rsplit(".", 1)[-1]
            if q == f"torch.{short}" and short in FACTORIES or q.startswith("torch.nn.") and short[:1].isupper():
                bound, _ = bind(node, ())  # here: most torch calls a value is followed to are neither
                if "device" in bound:
                    dev = self.device_value(bound["device"], at, depth + 1)
                    return dev.because(self._ev(argument_of(bound["device"]))) if dev else None
                if short in ("tensor", "as_tensor"):  # from a tensor: its device (as_tensor), or unknown
                    data = self.facts.deref(self._first_positional(node), at)
                    if data is None or data.type not in PYTHON_DATA:
                        return None
                return self.default_device(node)
            if q == f"torch.{short}" and short in LIKE:
                bound, _ = bind(node, ())
                if "device" in bound:
                    dev = self.device_value(bound["device"], at, depth + 1)
                    return dev.because(self._ev(argument_of(bound["device"]))) if dev else None
                first = self._first_positional(node)
                return self.tensor_device(first, at, depth + 1)
            if q == f"torch.{short}" and short in ALWAYS_CPU:
                return Device("cpu", None, (self._ev(node, f"`{snippet(self.src.node_text(node))}` (always cpu)"),))
            return None
        if func.type != "attribute":
            return None
        method = func.child_by_field_name("attribute").text.decode()
        obj = func.child_by_field_name("object")
        if method == "cuda":
            bound, complete = bind(node, ("device",))
            index = self.int_value(bound["device"], at) if "device" in bound else None
            return Device("cuda", index, (self._method_ev(node),))
        if method == "cpu":
            return Device("cpu", None, (self._method_ev(node),))
        if method == "to":
            return self._to_device(node, obj, at, depth)
        if method in KEEP_DEVICE:
            return self.tensor_device(obj, at, depth + 1)
        return None

    def _to_device(self, call: Node, obj: Node, at: int, depth: int) -> Device | None:
        bound, complete = bind(call, ())
        positional = [a for a in call.child_by_field_name("arguments").named_children
                      if a.type not in ("keyword_argument", "comment")]
        if not complete:
            return None
        if "device" in bound:
            dev = self.device_value(bound["device"], at, depth + 1)
            return dev.because(self._method_ev(call)) if dev else None
        if not positional:
            return self.tensor_device(obj, at, depth + 1)  # .to(dtype=...)
        first = positional[0]
        if self.dtype_of(first) is not None:
            return self.tensor_device(obj, at, depth + 1)
        dev = self.device_value(first, at, depth + 1)
        if dev is None:
            target = self.facts.deref(first, at)
            if target is not None and target.type in ("call", "identifier", "subscript"):
                dev = self.tensor_device(first, at, depth + 1)  # .to(other_tensor)
        return Device(dev.type, dev.index, (self._method_ev(call), *dev.evidence)) if dev else None

    def _in_place_move(self, ident: Node, value: Node, binding, at: int, depth: int) -> Device | bool | None:
        """`model = M(); model.cuda()`: nn.Module.cuda()/.to()/.cpu() move the module in place.
        Only statements of the same block, between the binding and the use, are read; not
        for tensors (their `.to()` returns a copy). None: no such statement; False: unknown."""
        if self._is_tensor_expr(unwrap(value)):
            return None
        stmt = value.parent
        while stmt is not None and stmt.type != "expression_statement":
            stmt = stmt.parent
        if stmt is None:
            return None
        name = ident.text
        found: Device | bool | None = None
        nxt = stmt.next_named_sibling
        limit = min(at, ident.start_byte)
        while nxt is not None and nxt.start_byte < limit:
            expr = nxt.named_children[0] if nxt.type == "expression_statement" and nxt.named_children else None
            expr = unwrap(expr)
            if expr is not None and expr.type == "call":
                func = expr.child_by_field_name("function")
                if func.type == "attribute" and unwrap(func.child_by_field_name("object")).text == name \
                        and func.child_by_field_name("attribute").text.decode() in ("cuda", "cpu", "to"):
                    if func.child_by_field_name("attribute").text == b"to":
                        dev = self._to_device(expr, func.child_by_field_name("object"), nxt.start_byte, depth + 1)
                    else:
                        dev = self._tensor_device(expr, nxt.start_byte, depth + 1)
                    found = dev if dev is not None else False
            nxt = nxt.next_named_sibling
        return found

    def _is_tensor_expr(self, node: Node | None, depth: int = 0) -> bool:
        node = self.facts.deref(node, node.start_byte) if node is not None else None
        if node is None or node.type != "call" or depth > MAX_DEPTH:
            return False
        q = self.qualname(node)
        if q is not None and q.startswith("torch."):
            short = q.rsplit(".", 1)[-1]
            return short in FACTORIES or short in LIKE or q == "torch.from_numpy"
        func = node.child_by_field_name("function")
        if func.type == "attribute" and func.child_by_field_name("attribute").text.decode() in (KEEP_DEVICE | {"cuda", "cpu", "to"}):
            return self._is_tensor_expr(unwrap(func.child_by_field_name("object")), depth + 1)
        return False

    def _first_positional(self, call: Node) -> Node | None:
        return next((a for a in call.child_by_field_name("arguments").named_children
                     if a.type not in ("keyword_argument", "comment", "list_splat", "dictionary_splat")), None)

    def default_device(self, node: Node) -> Device | None:
        """Where a tensor created without `device=` lives: the enclosing `with torch.device(...)`,
        else the last `torch.set_default_device` that surely ran before, else cpu."""
        n = node.parent
        while n is not None and n.type not in _FUNCTIONS:
            if n.type == "with_statement":
                body = n.child_by_field_name("body")
                if body is not None and body.start_byte <= node.start_byte:
                    for item in (c for c in n.named_children if c.type == "with_clause"):
                        for wi in item.named_children:
                            value = wi.child_by_field_name("value")
                            value = value.named_children[0] if value is not None and value.type == "as_pattern" else value
                            if value is not None and value.type == "call" and self.qualname(value) == "torch.device":
                                dev = self.device_value(value, value.start_byte)
                                return dev.because(self._ev(wi, f"`with {snippet(self.src.node_text(wi))}:`")) if dev else None
            n = n.parent
        while n is not None:  # a function defined inside `with torch.device(...)` may run inside it
            if n.type == "with_statement" and any(
                    c.type == "call" and self.qualname(c) == "torch.device"
                    for c in descendants(n.named_children[0], "call")):
                return None
            n = n.parent
        setters = self.facts.calls_of(SET_DEFAULT)
        ev = self._ev(node, f"`{snippet(self.src.node_text(node))}` has no `device=` and no default device is set")
        if not setters:
            return Device("cpu", None, (ev,))
        scope = self.names.scope_of(node)
        body = scope.node if scope is self.names.module else scope.node.child_by_field_name("body")
        own = [c for c, _ in setters if self._straight(c, body) and c.start_byte < node.start_byte]
        if own:
            return self._setter_device(own[-1])
        if scope is self.names.module:
            later = [c for c, _ in setters if self._straight(c, body) and c.start_byte > node.start_byte]
            return Device("cpu", None, (ev,)) if len(later) == len(setters) else None
        mine_later = [c for c, _ in setters if self._straight(c, body)]
        rest = [c for c, _ in setters if c not in mine_later]
        module_level = [c for c in rest if self._straight(c, self.names.module.node)]
        if len(module_level) != len(rest):
            return None
        devices = [self._setter_device(c) for c in module_level]
        if not devices:
            return Device("cpu", None, (ev,))
        if any(d is None for d in devices) or len({d.spelled for d in devices}) != 1:
            return None
        return devices[-1]

    @staticmethod
    def _straight(call: Node, body: Node | None) -> bool:
        stmt = call.parent
        return body is not None and stmt is not None and stmt.type == "expression_statement" and stmt.parent == body

    def _setter_device(self, call: Node) -> Device | None:
        if self.qualname(call) != "torch.set_default_device":
            return None
        bound, _ = bind(call, ("device",))
        dev = self.device_value(bound.get("device"), call.start_byte)
        return dev.because(self._ev(call)) if dev else None

    # -- dtypes and shapes -------------------------------------------------------------------------
    def dtype_of(self, node: Node | None) -> str | None:
        node = unwrap(node)
        if node is None or node.type != "attribute":
            return None
        q = self.names.resolve(node)
        if q is None or not q.startswith("torch."):
            return None
        return DTYPES.get(q[len("torch."):])

    def _float_default(self) -> str | None:
        return None if self.facts.calls_of(SET_DTYPE) else "float32"

    def _int_list(self, node: Node | None, at: int) -> tuple[int, ...] | None:
        node = self.facts.deref(node, at)
        if node is None:
            return None
        if node.type in ("tuple", "list"):
            values = [self.int_value(c, at) for c in node.named_children if c.type != "comment"]
            return tuple(values) if all(v is not None and v >= 0 for v in values) else None
        if node.type == "call" and self.qualname(node) == "torch.Size":
            return self._int_list(self._first_positional(node), at)
        return None

    def tensor_meta(self, node: Node | None, at: int, depth: int = 0) -> Meta | None:
        node = unwrap(node)
        if node is None or depth > MAX_DEPTH:
            return None
        if node.type == "identifier":
            found = self.facts.binding_value(node, at)
            return self.tensor_meta(found[0], found[1].at, depth + 1) if found else None
        if node.type != "call":
            return None
        ev = self._ev(node)
        q = self.qualname(node)
        bound, complete = bind(node, ())
        if not complete:
            return None
        positional = [a for a in node.child_by_field_name("arguments").named_children
                      if a.type not in ("keyword_argument", "comment")]
        if q is not None and q.startswith("torch.") and q.count(".") == 1:
            short = q[len("torch."):]
            dtype = self.dtype_of(bound["dtype"]) if "dtype" in bound else False
            if dtype is None:  # a dtype= we cannot read
                return None
            shape: tuple[int, ...] | None = None
            default = self._float_default()
            if short in ("randn", "rand", "zeros", "ones", "empty"):
                if "size" in bound:
                    shape = self._int_list(bound["size"], at)
                elif len(positional) == 1 and self.facts.deref(positional[0], at) is not None \
                        and self.facts.deref(positional[0], at).type in ("tuple", "list", "call"):
                    shape = self._int_list(positional[0], at)
                else:
                    values = [self.int_value(p, at) for p in positional]
                    shape = tuple(values) if all(v is not None and v >= 0 for v in values) else None
            elif short == "full":
                shape = self._int_list(bound.get("size", positional[0] if positional else None), at)
                fill = self.facts.deref(bound.get("fill_value", positional[1] if len(positional) > 1 else None), at)
                default = {"integer": "int64", "float": default, "true": "bool", "false": "bool"}.get(
                    fill.type if fill is not None else "", None)
            elif short == "randint":
                size = bound.get("size", positional[-1] if len(positional) >= 2 else None)
                shape = self._int_list(size, at)
                default = "int64"
            elif short == "randperm":
                n = self.int_value(positional[0], at) if positional else None
                shape = (n,) if n is not None and n >= 0 else None
                default = "int64"
            elif short == "arange":
                values = [self.int_value(p, at) for p in positional]
                if values and all(v is not None for v in values) and len(values) <= 3:
                    start, end, step = (0, values[0], 1) if len(values) == 1 else (
                        values[0], values[1], values[2] if len(values) == 3 else 1)
                    shape = (max(0, -(-(end - start) // step)),) if step else None
                    default = "int64"
                elif not any((d := self.facts.deref(p, at)) is not None and d.type == "float" for p in positional):
                    default = None  # float bounds: the default float dtype; anything else: unknown
            elif short in ("tensor", "as_tensor"):
                shape, default = self._literal_data(positional[0] if positional else None, at)
            elif short in LIKE:
                base = self.tensor_meta(positional[0] if positional else None, at, depth + 1)
                if base is None:
                    return None
                return Meta(base.shape, dtype or base.dtype, ev)
            else:
                return None
            return Meta(shape, dtype or default, ev)
        func = node.child_by_field_name("function")
        if func.type != "attribute":
            return None
        method = func.child_by_field_name("attribute").text.decode()
        base = self.tensor_meta(func.child_by_field_name("object"), at, depth + 1)
        if base is None:
            return None
        if method in KEEP_META:
            return base
        if method in DTYPE_METHODS and not positional and not bound:
            return Meta(base.shape, DTYPE_METHODS[method], base.evidence)
        if method == "to":
            dtype = self.dtype_of(bound["dtype"]) if "dtype" in bound else None
            for p in positional:
                dtype = dtype or self.dtype_of(p)
            if "dtype" in bound and dtype is None:
                return None
            if dtype is None and any(self.device_value(p, at) is None and self.dtype_of(p) is None for p in positional):
                return None  # .to(something unknown)
            return Meta(base.shape, dtype or base.dtype, base.evidence)
        if method in ("reshape", "view") and positional:
            dims = self._int_list(positional[0], at) if len(positional) == 1 and self.facts.deref(positional[0], at) is not None \
                and self.facts.deref(positional[0], at).type in ("tuple", "list") else None
            if dims is None:
                values = [self.int_value(p, at) for p in positional]
                if not all(v is not None for v in values):
                    return Meta(None, base.dtype, base.evidence)
                dims = tuple(values)
            if -1 in dims and base.shape is not None and dims.count(-1) == 1:
                total, known = _prod(base.shape), _prod(d for d in dims if d != -1)
                dims = tuple(total // known if d == -1 else d for d in dims) if known and total % known == 0 else None
            if dims is None or any(d < 0 for d in dims):
                return Meta(None, base.dtype, base.evidence)
            return Meta(dims, base.dtype, base.evidence)
        if method in KEEP_DTYPE:
            return Meta(None, base.dtype, base.evidence)
        return None

    def _literal_data(self, node: Node | None, at: int) -> tuple[tuple[int, ...] | None, str | None]:
        node = self.facts.deref(node, at)
        if node is None:
            return None, None
        kinds: set[str] = set()

        def walk(n: Node) -> tuple[int, ...] | None:
            n = unwrap(n)
            if n.type in ("list", "tuple"):
                items = [walk(c) for c in n.named_children if c.type != "comment"]
                if any(i is None for i in items) or len(set(items)) > 1:
                    return None
                return (len(items), *(items[0] if items else ()))
            if n.type == "unary_operator":
                n = n.child_by_field_name("argument")
            if n.type in ("integer", "float", "true", "false"):
                kinds.add(n.type)
                return ()
            return None

        shape = walk(node)
        if shape is None:
            return None, None
        dtype = None
        if kinds <= {"true", "false"} and kinds:
            dtype = "bool"
        elif kinds == {"integer"} or kinds <= {"integer", "true", "false"} and "integer" in kinds:
            dtype = "int64"
        elif "float" in kinds:
            dtype = self._float_default()
        return shape, dtype

    # -- compile sites ---------------------------------------------------------------------------
    def example_inputs(self, site: CompileSite) -> list[Node] | None:
        args = self.facts.deref(site.args, site.call.start_byte)
        if args is None or args.type not in ("tuple", "list"):
            return None
        items = [c for c in args.named_children if c.type != "comment"]
        if any(c.type in ("list_splat", "parenthesized_list_splat") for c in items):
            return None
        return items

    def compile_device(self, site: CompileSite) -> Device | None:
        """The compile device: the example inputs' (when they agree), else the model's. Read
        once per site: for the summary, and for every load of its artifact."""
        key = ("device", site.call.id)
        if key not in self._per_site:
            self._per_site[key] = self._compile_device(site)
        return self._per_site[key]

    @cached_property
    def _per_site(self) -> dict:
        return {}

    def _compile_device(self, site: CompileSite) -> Device | None:
        at = site.call.start_byte
        devices: list[Device] = []
        for item in self.example_inputs(site) or []:
            dev = self.tensor_device(item, item.start_byte)
            if dev is not None:
                devices.append(dev)
        kwargs = self.facts.deref(site.kwargs, at)
        if kwargs is not None and kwargs.type == "dictionary":
            for pair in kwargs.named_children:
                if pair.type == "pair":
                    dev = self.tensor_device(pair.child_by_field_name("value"), at)
                    if dev is not None:
                        devices.append(dev)
        model = self.tensor_device(site.model, site.model.start_byte) if site.model is not None else None
        if devices:
            if len({d.type for d in devices}) != 1:
                return None
            if model is not None and model.type != devices[0].type:
                return None
            if devices[0].type == "cpu" and self._accelerated_inside(site):
                return None  # CPU stand-ins for sizes; the module puts its own work on a device (measured: a CUDA package)
            indexes = {d.index for d in devices}
            index = indexes.pop() if len(indexes) == 1 else None
            return Device(devices[0].type, index, tuple(e for d in devices for e in d.evidence[:1]))
        return model

    def _accelerated_inside(self, site: CompileSite) -> bool:
        """Whether the exported module's class, defined in this file, names an accelerator itself
        (`device=torch.accelerator.current_accelerator()`, `.cuda()`, "cuda"): its tensors are
        made there whatever the example inputs' device (public code passes CPU tensors only for
        their sizes; the package then records "cuda"). Not found: the inputs decide, as before."""
        cls = self._model_class(site)
        return cls is not None and next(whole_words(cls.text, _ACCELERATOR), None) is not None

    def _model_class(self, site: CompileSite) -> Node | None:
        """The class definition, in this file, of the exported module (`Net()`, `Net().eval()`,
        a name bound to one)."""
        model = unwrap(self.facts.deref(site.model, site.model.start_byte)) if site.model is not None else None
        while model is not None and model.type == "call":  # `Net().eval()`: the class called
            func = model.child_by_field_name("function")
            if func is None or func.type != "attribute":
                break
            model = unwrap(func.child_by_field_name("object"))
        func = model.child_by_field_name("function") if model is not None and model.type == "call" else None
        if func is None or func.type != "identifier":
            return None
        b = self.names.lookup(func.text.decode(), model.start_byte, self.names.scope_of(func))
        cls = b.stmt if b is not None else None
        return cls if cls is not None and cls.type == "class_definition" else None

    def _forward_params(self, site: CompileSite) -> list[str] | None:
        """The positional parameters of the exported module's `forward` (self left out), when its
        class is in this file and defines it: what a `dynamic_shapes` dict keyed by name names."""
        cls = self._model_class(site)
        body = cls.child_by_field_name("body") if cls is not None else None
        for stmt in body.named_children if body is not None else ():
            func = stmt.child_by_field_name("definition") if stmt.type == "decorated_definition" else stmt
            name = func.child_by_field_name("name") if func is not None and func.type == "function_definition" else None
            if name is None or name.text != b"forward":
                continue
            return positional_names(func.child_by_field_name("parameters"))[1:] or None
        return None

    def _spec_items(self, site: CompileSite, n: int) -> list | None:
        """Per example input, its entry of `dynamic_shapes`: a node, or STATIC where a dict keyed
        by the forward's parameter names leaves it out (`{"x": {0: batch}}`, the form torch's
        own recipes use). None where it cannot be read."""
        at = site.call.start_byte
        spec = self.facts.deref(site.dynamic, at) if site.dynamic_known and site.dynamic is not None else None
        if spec is not None and spec.type in ("tuple", "list"):
            items = [c for c in spec.named_children if c.type != "comment"]
            return items if len(items) == n else None
        if spec is None or spec.type != "dictionary":
            return None
        names = self._forward_params(site)
        if names is None or len(names) < n:
            return None
        by_name = {}
        for pair in spec.named_children:
            if pair.type == "comment":
                continue
            key = self.facts.str_value(pair.child_by_field_name("key"), at) if pair.type == "pair" else None
            if key is None or key not in names[:n]:
                return None  # a keyword input, a name this reading does not know
            by_name[key] = pair.child_by_field_name("value")
        return [by_name.get(name, STATIC) for name in names[:n]]

    def inputs(self, site: CompileSite) -> tuple[Input, ...] | None:
        key = ("inputs", site.call.id)
        if key not in self._per_site:
            self._per_site[key] = self._inputs(site)
        return self._per_site[key]

    def _inputs(self, site: CompileSite) -> tuple[Input, ...] | None:
        items = self.example_inputs(site)
        if items is None:
            return None
        dynamic = self.dynamic_dims(site, len(items))
        marked = self._marked_dynamic
        bounds = self.dim_bounds(site, len(items))
        out = []
        for item, dyn, bound in zip(items, dynamic, bounds):
            name = unwrap(item)
            if name is not None and name.type == "identifier" and name.text.decode() in marked:
                dyn, bound = None, ()
            meta = self.tensor_meta(item, item.start_byte)
            if meta is not None and meta.shape is not None:  # Dim.AUTO on a size-0/1 example: silently static
                bound = tuple(b for b in bound if b.dim < len(meta.shape) and (
                    b.spelled != "Dim.AUTO" or meta.shape[b.dim] >= 2))
            else:
                bound = tuple(b for b in bound if b.spelled != "Dim.AUTO")
            out.append(Input(meta, dyn, bound))
        return tuple(out)

    def dim_bounds(self, site: CompileSite, n: int) -> list[tuple[Bound, ...]]:
        """Per example input, the bounds of its dims given as `Dim(...)` / `Dim.AUTO` / `Dim.DYNAMIC`
        in a dict `{0: batch}` or a tuple `(batch, None)` per input."""
        at = site.call.start_byte
        items = self._spec_items(site, n)
        if items is None:
            return [()] * n
        out = []
        for item in items:
            item = self.facts.deref(item, at) if item is not STATIC else None
            pairs: list[tuple[int | None, Node]] = []
            if item is not None and item.type == "dictionary":
                pairs = [(self.int_value(p.child_by_field_name("key"), at), p.child_by_field_name("value"))
                         for p in item.named_children if p.type == "pair"]
            elif item is not None and item.type in ("tuple", "list"):
                pairs = list(enumerate(c for c in item.named_children if c.type != "comment"))
            found = [self._bound(dim, value, at) for dim, value in pairs if dim is not None and dim >= 0]
            out.append(tuple(b for b in found if b is not None))
        return out

    def _bound(self, dim: int, value: Node, at: int) -> Bound | None:
        node = self.facts.deref(value, at)
        if node is None:
            return None
        target = node.child_by_field_name("function") if node.type == "call" else node
        q = self.names.resolve(target) if target is not None and target.type in ("identifier", "attribute") else None
        short = _DIMS.get(q or "")
        if short is None:
            return None
        low, high, written = 2, None, None
        if node.type == "call":
            bound, complete = bind(node, ("name",) if not short else ())
            if not complete:
                return None
            written = self.int_value(bound["min"], at) if "min" in bound else None
            if "min" in bound and written is None or "max" in bound and self.int_value(bound["max"], at) is None:
                return None  # a bound computed at run time: not known here
            low = max(2, written) if written is not None else 2
            high = self.int_value(bound["max"], at) if "max" in bound else None
        elif short == "":
            return None  # the class itself
        spelled = snippet(self.src.node_text(node), 60) if node.type == "call" else f"Dim{short}"
        return Bound(dim, low, high, spelled, self._ev(node), written)

    def dynamic_dims(self, site: CompileSite, n: int) -> list[frozenset[int] | None]:
        if not site.dynamic_known:
            return [None] * n
        spec = self.facts.deref(site.dynamic, site.call.start_byte)
        if site.dynamic is None or spec is not None and spec.type == "none":
            return [frozenset()] * n
        items = self._spec_items(site, n)
        if items is None:
            return [None] * n
        out: list[frozenset[int] | None] = []
        for item in items:
            if item is STATIC:  # left out of a dict keyed by name: static
                out.append(frozenset())
                continue
            item = self.facts.deref(item, site.call.start_byte)
            if item is None:
                out.append(None)
            elif item.type == "none":
                out.append(frozenset())
            elif item.type == "dictionary":
                dims: set[int] = set()
                ok = True
                for pair in item.named_children:
                    if pair.type != "pair":
                        ok = ok and pair.type == "comment"
                        continue
                    k = self.int_value(pair.child_by_field_name("key"), site.call.start_byte)
                    if k is None:
                        ok = False
                    elif unwrap(pair.child_by_field_name("value")).type != "none":
                        dims.add(k)
                out.append(frozenset(dims) if ok else None)
            elif item.type in ("tuple", "list"):
                out.append(frozenset(i for i, c in enumerate(x for x in item.named_children if x.type != "comment")
                                     if c.type != "none"))
            else:
                out.append(None)
        return out

    @cached_property
    def _marked_dynamic(self) -> frozenset[str]:
        """Names given to mark_dynamic anywhere in the file (read once, not once per compile)."""
        out = set()
        for call, _ in self.facts.calls_of(MARK_DYNAMIC):
            first = self._first_positional(call)
            if first is not None and first.type == "identifier":
                out.add(first.text.decode())
        return frozenset(out)

    def compile_where(self, site: CompileSite) -> str:
        return f"line {self.src.lines.line_of(site.call.start_byte) + 1}"

    def site_evidence(self, site: CompileSite) -> Evidence:
        func = site.call.child_by_field_name("function")
        return Evidence(func.start_byte, func.end_byte, f"compiled here (`{site.qualname}`)")

    def site_artifact(self, site: CompileSite) -> Artifact:
        found = self._artifacts.get(site.call.id)
        if found is None:
            found = self._artifacts[site.call.id] = Artifact(
                self.compile_device(site), self.compile_where(site), self.site_evidence(site), self.inputs(site), "compile")
            found.mixed = self._mixed_inputs(site)
        return found

    def _mixed_inputs(self, site: CompileSite) -> bool:
        """Its example inputs are on more than one device type (a CUDA tensor and a CPU scalar
        flag read with `.item()`): the model takes each input where it was traced, so a CPU
        input is not by itself one on the wrong device."""
        kinds = set()
        for item in self.example_inputs(site) or ():
            dev = self.tensor_device(item, item.start_byte)
            if dev is not None:
                kinds.add(dev.type)
        return len(kinds) > 1

    @cached_property
    def _artifacts(self) -> dict[int, Artifact]:
        return {}

    @property
    def _local_compiles(self) -> dict[str, list[CompileSite]]:
        """Resolved artifact key -> this file's compile sites writing it (one pass, not one per
        load; resolved through the project, so made again for each analysis)."""
        out = self._lookups.get("local")
        if out is None:
            out = {}
            for site in self.compiles():
                key = self.facts.resolve_key(self.compile_key(site))
                if key is not None:
                    out.setdefault(key, []).append(site)
            self._lookups["local"] = out  # stored whole: a cut analysis leaves no partial entry
        return out

    @cached_property
    def _compile_by_call(self) -> dict[int, CompileSite]:
        """Call id -> its compile site: each load finds its compile without a scan of them all."""
        out: dict[int, CompileSite] = {}
        for site in self.compiles():
            out.setdefault(site.call.id, site)
        return out

    def compile_at(self, start: int) -> CompileSite | None:
        """The compile site whose call starts at `start`."""
        return self._compile_by_start.get(start)

    @cached_property
    def _compile_by_start(self) -> dict[int, CompileSite]:
        out: dict[int, CompileSite] = {}
        for site in self.compiles():
            out.setdefault(site.call.start_byte, site)
        return out

    def compile_key(self, site: CompileSite) -> str | None:
        """The artifact path a compile writes, as written (it may reference other modules)."""
        return self.facts.path_key(site.path_node, site.call.start_byte) if site.path_node is not None else None

    # -- load -> artifact ------------------------------------------------------------------------
    def _compile_from(self, node: Node | None, at: int, depth: int = 0) -> CompileSite | None:
        node = unwrap(node)
        if node is None or depth > MAX_DEPTH:
            return None
        if node.type == "call":
            return self._compile_by_call.get(node.id)
        if node.type == "identifier":
            found = self.facts.binding_value(node, at)
            return self._compile_from(found[0], found[1].at, depth + 1) if found else None
        return None

    def artifact(self, load: LoadSite) -> Artifact | None:
        """What `load` loads; asked by each of AOTI101-AOTI103 (and the migration), found once."""
        key = ("artifact", load.call.id)
        if key not in self._lookups:
            self._lookups[key] = self._artifact(load)
        return self._lookups[key]

    def _artifact(self, load: LoadSite) -> Artifact | None:
        if load.path_node is None:
            return None
        at = load.call.start_byte
        site = self._compile_from(load.path_node, at)
        if site is not None:
            return self.site_artifact(site)
        key = self.facts.resolve_key(self.facts.path_key(load.path_node, at))
        if key is None:
            return None
        local = self._local_compiles.get(key)
        if local:
            arts = [self.site_artifact(s) for s in local]
            return _agree(arts)
        remote = self._project_artifacts(key)
        if remote:
            return _agree(remote)
        if load.qualname in NEW_LOAD:
            return self._disk_artifact(key, load)
        return None

    def _project_artifacts(self, key: str) -> list[Artifact]:
        project = getattr(self.ctx, "project", None)
        if project is None:
            return []
        here = os.path.abspath(self.src.path)
        return [artifact_from_summary(path, entry) for path, entry in _compile_index(project).get(key, ())
                if os.path.abspath(path) != here]

    def _disk_artifact(self, key: str, load: LoadSite) -> Artifact | None:
        if not key.endswith(".pt2"):
            return None
        memo = ("disk", key, self._model_name(load))  # several loads of one missing package: one search
        if memo not in self._lookups:
            self._lookups[memo] = self._read_disk_artifact(key, load)
        return self._lookups[memo]

    def _read_disk_artifact(self, key: str, load: LoadSite) -> Artifact | None:
        found: dict[str, tuple[str, str]] = {}
        for candidate in self._disk_candidates(key):
            if not os.path.exists(candidate):  # most are not there: pt2 (zipfile: ~12 ms) not imported
                reads.record(os.path.abspath(candidate))  # a cached result depends on its absence too
                continue
            from aoti_lsp.analysis import pt2

            info = pt2.read_package(candidate)
            if info is None:
                continue
            dev = info.device(self._model_name(load))
            if dev is not None:
                found[info.path] = dev
        if len({d[0] for d in found.values()}) != 1:
            return None
        path, (kind, entry) = next(iter(found.items()))
        parsed = parse_device(kind)
        if parsed is None:
            return None
        name = posixpath.basename(key)
        ev = Evidence(0, 0, f"`{entry}` of the package says AOTI_DEVICE_KEY \"{kind}\"", path)
        return Artifact(Device(parsed[0], None, (ev,)), "", ev, None, "disk", subject=f"the package `{name}`",
                        reason=f'its metadata says AOTI_DEVICE_KEY "{kind}"')

    def _model_name(self, load: LoadSite) -> str:
        if load.qualname == "torch._inductor.package.load_package":
            bound, _ = bind(load.call, NEW_LOAD[load.qualname])
            v = self.facts.str_value(bound.get("model_name"), load.call.start_byte)
            return v or "model"
        return "model"

    def _disk_candidates(self, key: str) -> list[str]:
        if key.startswith("/"):
            return [key]
        here = self.facts.this_file()
        if here is None:
            return []
        out, folder = [], posixpath.dirname(here)
        for _ in range(6):  # the file's folder and its parents: scripts run from the repository root
            out.append(posixpath.normpath(posixpath.join(folder, key)))
            if self._is_top(folder):
                break
            parent = posixpath.dirname(folder)
            if parent == folder:
                break
            folder = parent
        return out

    def _is_top(self, folder: str) -> bool:
        """A repository's or project's top folder (asked once per folder and analysis)."""
        key = ("top", folder)
        if key not in self._lookups:
            markers = (".git", "pyproject.toml", "setup.py")
            self._lookups[key] = any(os.path.exists(os.path.join(folder, m)) for m in markers)
        return self._lookups[key]

    # -- summary (cross-file) -----------------------------------------------------------------------
    def summary(self) -> dict | None:
        entries = []
        for site in self.compiles():
            key = self.compile_key(site)
            if key is None:
                continue
            dev = self.compile_device(site)
            inputs = self.inputs(site)
            entries.append({
                "key": key,
                "device": (dev.type, dev.index) if dev else None,
                "evidence": tuple(e.as_tuple() for e in dev.evidence) if dev else (),
                "site": self.site_evidence(site).as_tuple(),
                "line": self.src.lines.line_of(site.call.start_byte) + 1,
                "inputs": None if inputs is None else tuple(
                    (None if i.meta is None else (i.meta.shape, i.meta.dtype, i.meta.evidence.as_tuple()),
                     None if i.dynamic is None else tuple(sorted(i.dynamic)),
                     tuple(b.as_tuple() for b in i.bounds)) for i in inputs),
            })
        return {"compiles": entries} if entries else None


def flat_inputs(a: Analysis, call: Node, anywhere: bool = False):
    """(the argument, the input's expression) per input of a runner call, in order, until one
    is not known. A loaded package flattens its arguments (pytree leaves): `runner((x,))`,
    `runner([x])`, `runner(inputs)` with `inputs = (x,)` and `runner(*inputs)` pass `x` as
    input 0 (the PyTorch recipe calls `model(example_inputs)`, a one-tensor tuple).
    `anywhere` (AOTI102: a device is wrong in any place): every input known, keyword
    arguments' too, past one that is not known."""
    args = call.child_by_field_name("arguments")
    for arg in (x for x in args.named_children if x.type != "comment") if args is not None else ():
        if arg.type == "list_splat":
            leaves = _leaves(a, arg.named_children[0] if arg.named_children else None, 0, splat=True)
        elif arg.type == "keyword_argument" and anywhere:
            value = arg.child_by_field_name("value")
            leaves = _leaves(a, value, 0) if value is not None else None
        elif arg.type in ("keyword_argument", "dictionary_splat", "parenthesized_list_splat"):
            leaves = None
        else:
            leaves = _leaves(a, arg, 0)
        if leaves is None:
            if anywhere:
                continue
            return
        for leaf in leaves:
            yield arg, leaf


def _leaves(a, node, depth: int, splat: bool = False):
    """The expressions a tuple or list literal (followed through names) holds, flattened; a
    node that is no such literal is one leaf (a tensor, as before), unless it was unpacked
    (`*xs`: None when `xs` is not known)."""
    seq = a.facts.deref(node, node.start_byte) if node is not None and depth < 8 else None
    seq = unwrap(seq)
    if seq is None or seq.type not in ("tuple", "list"):
        return None if splat else ([node] if node is not None else None)
    out = []
    for item in (c for c in seq.named_children if c.type != "comment"):
        if item.type in ("list_splat", "parenthesized_list_splat", "dictionary_splat"):
            return None
        inner = _leaves(a, item, depth + 1)
        if inner is None:
            return None
        out += inner
    return out


def artifact_from_summary(path: str, entry: dict) -> Artifact:
    evidence = tuple(Evidence(s, e, w, path) for s, e, w in entry.get("evidence", ()))
    dev = entry.get("device")
    device = Device(dev[0], dev[1], evidence) if dev else None
    s, e, w = entry["site"]
    inputs = None
    if entry.get("inputs") is not None:
        inputs = tuple(
            Input(None if meta is None else Meta(meta[0], meta[1], Evidence(*meta[2], path)),
                  None if dyn is None else frozenset(dyn),
                  tuple(Bound(d, lo, hi, sp, Evidence(*ev, path), wm) for d, lo, hi, sp, ev, wm in bounds))
            for meta, dyn, *rest in entry["inputs"] for bounds in (rest[0] if rest else (),))
    name = os.path.basename(path)
    return Artifact(device, f"{name}:{entry.get('line', '?')}", Evidence(s, e, w, path), inputs, "project")


def _compile_index(project) -> dict[str, list[tuple[str, dict]]]:
    """Resolved artifact key -> (path, compile entry) of every other file's compile site."""
    def build():
        out: dict[str, list] = {}
        for code in CODES:
            for path, summary in sorted(project.of(code).items()):
                if not isinstance(summary, dict):
                    continue
                for entry in summary.get("compiles", ()):
                    key = project.resolve(entry.get("key", ""))
                    if key is not None and (path, entry) not in out.get(key, []):
                        out.setdefault(key, []).append((path, entry))
        return out
    return project.memo("devices.compiles", build)


def _exits(stmt: Node) -> bool:
    """An `if` without `elif`/`else` whose body always leaves the block (return, raise, ...)."""
    body = stmt.child_by_field_name("consequence")
    if body is None or any(c.type in ("elif_clause", "else_clause") for c in stmt.named_children):
        return False
    last = [c for c in body.named_children if c.type != "comment"]
    return bool(last) and last[-1].type in ("return_statement", "raise_statement", "continue_statement",
                                              "break_statement")


def _same(a: Node | None, b: Node | None) -> bool:
    return a is not None and b is not None and (a.start_byte, a.end_byte, a.type) == (b.start_byte, b.end_byte, b.type)


def _agree(arts: list[Artifact]) -> Artifact | None:
    """Several compile sites write the same artifact: known only when they agree."""
    if len(arts) == 1:
        return arts[0]
    devices = [a.device for a in arts]
    if any(d is None for d in devices) or len({d.type for d in devices}) != 1:
        return Artifact(None, arts[0].where, arts[0].site, None, arts[0].origin)
    first = arts[0]
    inputs = first.inputs if all(a.inputs == first.inputs for a in arts) else None
    return Artifact(first.device, first.where, first.site, inputs, first.origin, first.subject, first.reason)


def _prod(values: Iterable[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out



def analysis(ctx) -> Analysis:
    """The file's analysis, shared by AOTI101-AOTI103 through the engine's Context (kept on the
    context itself, so it is freed with it)."""
    found = ctx.shared.get("devices")
    if found is None:
        found = ctx.shared["devices"] = Analysis(ctx)
    return found


def summary_owner(config) -> str | None:
    """The one enabled rule of the three that stores the file's cross-file summary."""
    return next((c for c in CODES if config is None or config.enabled(c)), None)


# -- helpers shared by the rules --------------------------------------------------------------------
def runner_device(a: Analysis, load: LoadSite, art: Artifact | None) -> Device | None:
    """The device the loaded model runs on: the compile device; for `aot_load` with an unknown
    compile device, the device it is loaded on."""
    if art is not None and art.device is not None:
        return art.device
    if load.old and load.device_node is not None:
        return a.device_value(load.device_node, load.call.start_byte)
    return None


def target_device(a: Analysis, load: LoadSite, compiled: Device) -> str:
    """What inputs should be moved to: the load device when it names an index of the right type."""
    at = load.call.start_byte
    if load.old and load.device_node is not None:
        dev = a.device_value(load.device_node, at)
        if dev is not None and dev.type == compiled.type:
            return dev.spelled
    if not load.old and load.index_node is not None:
        index = a.int_value(load.index_node, at)
        if index is not None and index >= 0 and compiled.type != "cpu":
            return f"{compiled.type}:{index}"
    return compiled.type


def related(evidence: Iterable[Evidence], role: str, skip: tuple[int, int] | None = None) -> list:
    """Related-information entries for a finding: `role` + what the evidence shows."""
    from aoti_lsp.analysis.findings import Related

    out, seen = [], []
    for ev in evidence:
        if any(p == ev.path and s <= ev.start and ev.end <= e for p, s, e in seen) \
                or (ev.path is None and skip is not None and (ev.start, ev.end) == skip):
            continue  # the same place, or inside one already given
        seen.append((ev.path, ev.start, ev.end))
        out.append(Related(ev.start, ev.end, f"{role}: {ev.what}", path=ev.path))
    return out


def why(device: Device) -> str:
    """A short reason for a device, for messages: `device="cuda"`."""
    return device.evidence[0].what if device.evidence else "from the compile call"


class ConsistencyRule:
    """Mixin of AOTI101-AOTI103: one shared analysis, one stored summary (by the first enabled rule)."""

    triggers = TRIGGERS

    def summarize(self, ctx):
        if summary_owner(ctx.config) != self.code:
            return None
        return analysis(ctx).summary()


def artifact_related(art: Artifact) -> list:
    """Related information for the compile side: the compile call and the compile device's evidence."""
    from aoti_lsp.analysis.findings import Related

    out = []
    if art.site is not None and art.origin != "disk":
        out.append(Related(art.site.start, art.site.end, art.site.what, path=art.site.path))
    if art.device is not None:
        out += related(art.device.evidence, f"compiled for {art.device.type}")
    return out
