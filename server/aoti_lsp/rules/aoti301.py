"""AOTI301: a debug variable set in `os.environ` where torch no longer (or never) reads it."""

from __future__ import annotations

from aoti_lsp.analysis.envvars import COMPILE, CUDA, IMPORT, RUN, VARIABLES, string_value
from aoti_lsp.analysis.findings import Finding, Related
from aoti_lsp.analysis.records import record
from aoti_lsp.analysis.treesitter import Node
from aoti_lsp.rules import Rule
from aoti_lsp.analysis.source import descendants

COMPILES = {"torch._export.aot_compile", "torch._inductor.aot_compile", "torch._inductor.aoti_compile_and_package"}
LOADS = {"torch._export.aot_load", "torch._inductor.aoti_load_package", "torch._inductor.package.load_package"}
OTHER_COMPILES = {"torch.compile", "torch._dynamo.optimize"}  # they read the compile-time variables too
WRITERS = {"os.environ.setdefault", "os.putenv", "os.environ.update"}
CUDA_QUIET = {"is_available", "device_count", "is_initialized"}  # they do not start CUDA
# a process that starts Python (or any program) afresh, with this environment: it reads the
# variable at its own import, compile or first CUDA use (pytorch/examples' rpc pipeline sets
# TORCH_LOGS after `import torch`, then mp.spawn's workers import torch with it)
SPAWNERS = {"torch.multiprocessing.spawn", "torch.multiprocessing.start_processes", "subprocess.run",
            "subprocess.Popen", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
            "os.system", "os.execv", "os.execve", "os.execvp", "os.execvpe", "os.execl", "os.execle",
            "os.execlp", "os.execlpe", "os.spawnv", "os.spawnve", "os.posix_spawn"}
READERS = {"os.environ.get", "os.getenv", "os.environ.pop"}
CHECKED = ("TORCHINDUCTOR_NAN_ASSERTS", "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER",
           "AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT", "AOTI_RUNTIME_CHECK_INPUTS", "TORCH_LOGS",
           "CUDA_LAUNCH_BLOCKING", "PYTORCH_NO_CUDA_MEMORY_CACHING")


@record("node", "what", "is_import")
class Event:
    def __init__(self, node: Node, what: str, is_import: bool = False):
        self.node = node
        self.what = what  # "the compile", "`import torch._inductor`", ...
        self.is_import = is_import


def _scope(node: Node) -> int | None:
    n = node.parent
    while n is not None:
        if n.type in ("function_definition", "lambda"):
            return n.id
        n = n.parent
    return None


def _line(ctx, node: Node) -> int:
    return ctx.source.lines.line_of(node.start_byte) + 1


class DebugVariableTooLate(Rule):
    code = "AOTI301"
    name = "debug-variable-without-effect"
    summary = "A debug environment variable is set where torch does not read it (too late, or in the wrong phase)"
    # as string literals: a write names the variable so (_writes); a mention in a comment, a
    # docstring or a longer string (torch's hipify table) needs no parse
    triggers = tuple(f'{q}{name}{q}' for name in CHECKED for q in "\"'")
    requires_any = ("environ", "putenv")
    explanation = """\
Each debug variable is read once, at a fixed point; `os.environ["X"] = "1"` placed after that
point (or in a program that never reaches it) silently does nothing. Measured with torch 2.13
(CPU):

| variable | read | effect |
|---|---|---|
| `AOTI_RUNTIME_CHECK_INPUTS` | **run time**, by the package's generated C++ (`getenv`, first call) | input checks; set at compile time it does nothing |
| `TORCHINDUCTOR_NAN_ASSERTS` | when `torch._inductor.config` is first imported | compile: NaN checks on inputs |
| `AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER`, `AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT` | same | compile: printing code is generated |
| `TORCH_LOGS` | `import torch` | logging during export/compile |
| `CUDA_LAUNCH_BLOCKING`, `PYTORCH_NO_CUDA_MEMORY_CACHING` | first CUDA use | run |

Flagged:
- a compile-time variable set after the compile call, after `torch._inductor` is imported, or
  in a file that loads a package but compiles none (the package is already built);
- `AOTI_RUNTIME_CHECK_INPUTS` in a file that compiles but never loads (it is read by the
  process that runs the package);
- `TORCH_LOGS` after `import torch`;
- `CUDA_LAUNCH_BLOCKING` / `PYTORCH_NO_CUDA_MEMORY_CACHING` after CUDA is in use (`.cuda()`,
  a `"cuda"` device, a `torch.cuda` call other than `is_available` / `device_count`).

"After" means earlier in the same function (or module), or an import at module level before it.
Not flagged: a variable put back as it was (`os.environ[X] = orig` of an `orig =
os.environ.get(X)` read before: a test's cleanup), and one set before the same function starts a
process afresh (`torch.multiprocessing.spawn`, `subprocess.run`, `os.system`, `os.exec*`), which
reads it at its own import, compile or first CUDA use (pytorch/examples' rpc pipeline sets
`TORCH_LOGS` after `import torch`, for the workers `mp.spawn` starts). A `multiprocessing.Process`
started by fork (Linux's default) imports nothing again: still reported.
Set the variable in the environment of the process (`VAR=1 python app.py`), or at the top of
the entry script before `import torch`."""
    invalid = (
        'import os\nimport torch\nep = torch.export.export(m, (x,))\n'
        'pt2 = torch._inductor.aoti_compile_and_package(ep)\nos.environ["TORCHINDUCTOR_NAN_ASSERTS"] = "1"\n',
        'import os\nimport torch\nrun = torch._inductor.aoti_load_package("m.pt2")\n'
        'os.environ["AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER"] = "1"\n',
        'import os\nimport torch\nos.environ["AOTI_RUNTIME_CHECK_INPUTS"] = "1"\n'
        'torch._inductor.aoti_compile_and_package(torch.export.export(m, (x,)), package_path="m.pt2")\n',
        'import os\nimport torch\nos.environ["TORCH_LOGS"] = "+dynamo"\n',
        'import os\nimport torch\nx = torch.ones(2).cuda()\nos.environ.setdefault("CUDA_LAUNCH_BLOCKING", "1")\n',
    )
    valid = (
        'import os\nos.environ["TORCH_LOGS"] = "+dynamo"\nos.environ["TORCHINDUCTOR_NAN_ASSERTS"] = "1"\nimport torch\n'
        'pt2 = torch._inductor.aoti_compile_and_package(torch.export.export(m, (x,)))\n',
        'import os\nimport torch\nos.environ["AOTI_RUNTIME_CHECK_INPUTS"] = "1"\nrun = torch._inductor.aoti_load_package("m.pt2")\n',
        'import os\nimport torch\nif torch.cuda.is_available():\n    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
        'import os\nprint(os.environ["TORCH_LOGS"])\nimport torch\n',
        'import os\nimport torch\nos.environ["TORCHINDUCTOR_NAN_ASSERTS"] = "1"\n'
        'run = torch._inductor.aoti_load_package("m.pt2")\nfast = torch.compile(model)\n',
    )

    def check(self, ctx):
        writes = list(self._writes(ctx))
        if not writes:
            return
        compiles = [c for c, _ in ctx.calls_to(COMPILES)]
        loads = [c for c, _ in ctx.calls_to(LOADS)]
        imports = self._imports(ctx)
        spawns = [c for c, _ in ctx.calls_to(SPAWNERS)]
        for name, node in writes:
            var = VARIABLES[name]
            found = None
            if self._restores(ctx, name, node):
                continue  # the value the process had, put back (a test's cleanup): nothing to act on
            if var.phase != RUN and any(s.start_byte > node.end_byte and _scope(s) == _scope(node) for s in spawns):
                continue  # a process started after it reads it at its own start
            if var.phase == COMPILE:
                events = [Event(c, "the compile") for c in compiles] + [
                    Event(n, f"`import {text}`" if " import " not in text else f"`from {text}`", True) for n, text in imports if text.startswith(("torch._inductor", "torch import _inductor"))]
                found = self._before(node, events)
                if found is not None:
                    msg = f"`{name}` set after inductor's config is read (line {_line(ctx, found.node)}): no effect"
                elif loads and not compiles and not ctx.calls_to(OTHER_COMPILES):
                    msg = f"`{name}` only acts on a compile, and this file only loads a package"
                    found = Event(loads[0], "the load")
                else:
                    continue
            elif var.phase == RUN:
                if not compiles or loads:
                    continue
                msg = f"`{name}` is read when the package runs, and this file only compiles"
                found = Event(compiles[0], "the compile")
            elif var.phase == IMPORT:
                found = self._before(node, [Event(n, f"`import {text}`" if "import" not in text else f"`{text}`", True)
                                            for n, text in imports])
                if found is None:
                    continue
                msg = f"`{name}` set after `import torch` read it (line {_line(ctx, found.node)}): no effect"
            elif var.phase == CUDA:
                found = self._before(node, self._cuda_uses(ctx, node))
                if found is None:
                    continue
                msg = f"`{name}` set after CUDA is in use (line {_line(ctx, found.node)}): no effect"
            else:
                continue
            rel = [Related(found.node.start_byte, found.node.end_byte, f"{found.what} is here")]
            yield Finding(self.code, msg, node.start_byte, node.end_byte, related=rel, severity=self.severity)

    @staticmethod
    def _restores(ctx, name: str, string: Node) -> bool:
        """`os.environ[NAME] = orig` where `orig = os.environ.get(NAME)` (or os.getenv, a read of
        os.environ[NAME]) was read before: FBGEMM's tests restore what they changed."""
        from aoti_lsp.analysis.facts import unwrap  # only where a debug variable is written

        assignment = string.parent.parent if string.parent is not None else None
        value = unwrap(assignment.child_by_field_name("right")) if assignment is not None and assignment.type == "assignment" else None
        if value is None or value.type != "identifier":
            return False
        binding = ctx.names.lookup(value.text.decode(), value.start_byte, ctx.names.scope_of(value))
        read = binding.value if binding is not None else None
        if read is not None and read.type == "call" and ctx.names.resolve(read.child_by_field_name("function")) in READERS:
            args = read.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            return first is not None and string_value(first) == name
        if read is not None and read.type == "subscript" and ctx.names.resolve(read.child_by_field_name("value")) == "os.environ":
            key = read.child_by_field_name("subscript")
            return key is not None and string_value(key) == name
        return False

    @staticmethod
    def _before(node: Node, events: list[Event]) -> Event | None:
        scope = _scope(node)
        for e in sorted(events, key=lambda e: e.node.start_byte):
            if e.node.end_byte <= node.start_byte and (_scope(e.node) == scope or (e.is_import and _scope(e.node) is None)):
                return e
        return None

    def _writes(self, ctx):
        """(name, string node) for each `os.environ[NAME] = ...`, `os.environ.setdefault(NAME, ...)`,
        `os.putenv(NAME, ...)`, `os.environ.update({NAME: ...})`."""
        data, root = ctx.source.data, ctx.source.tree.root_node
        for name in CHECKED:
            token = name.encode()
            at = data.find(token)
            while at >= 0:
                node = root.descendant_for_byte_range(at, at + len(token))
                at = data.find(token, at + 1)
                while node is not None and node.type != "string":
                    node = node.parent if node.type in ("string_content",) else None
                if node is None or string_value(node) != name:
                    continue
                if self._is_write(ctx, node):
                    yield name, node

    @staticmethod
    def _is_write(ctx, string: Node) -> bool:
        parent = string.parent
        if parent is None:
            return False
        if parent.type == "subscript" and parent.child_by_field_name("subscript") == string:
            target = parent.parent
            return (target is not None and target.type == "assignment" and target.child_by_field_name("left") == parent
                    and ctx.names.resolve(parent.child_by_field_name("value")) == "os.environ")
        if parent.type == "pair" and parent.child_by_field_name("key") == string:
            parent = parent.parent.parent if parent.parent is not None else None  # dictionary -> argument_list
        if parent is not None and parent.type == "argument_list" and parent.named_children and \
                parent.named_children[0] in (string, getattr(string.parent, "parent", None)):
            call = parent.parent
            return call is not None and call.type == "call" and ctx.names.resolve(call.child_by_field_name("function")) in WRITERS
        return False

    @staticmethod
    def _imports(ctx) -> list[tuple[Node, str]]:
        out = []
        for node in descendants(ctx.source.tree.root_node, skip=("string",)):
            if node.type == "import_statement":
                for name in node.named_children:
                    mod = (name.child_by_field_name("name") if name.type == "aliased_import" else name)
                    if mod is not None and mod.text.decode().split(".")[0] == "torch":
                        out.append((node, mod.text.decode()))
            elif node.type == "import_from_statement":
                mod = node.child_by_field_name("module_name")
                text = mod.text.decode() if mod is not None else ""
                if text.split(".")[0] == "torch":
                    names = [n.text.decode() for n in node.children_by_field_name("name")]
                    out.append((node, "torch import _inductor" if text == "torch" and any(
                        n.split(" ")[0] == "_inductor" for n in names) else text))
        return out

    @staticmethod
    def _cuda_uses(ctx, write: Node) -> list[Event]:
        out = []
        data, root = ctx.source.data, ctx.source.tree.root_node
        for token in (b".cuda(", b"cuda"):
            at = data.find(token, 0, write.start_byte)
            while at >= 0:
                node = root.descendant_for_byte_range(at + (1 if token == b".cuda(" else 0), at + len(token) - (1 if token == b".cuda(" else 0))
                at = data.find(token, at + 1, write.start_byte)
                if node is None:
                    continue
                if token == b".cuda(" and node.type == "identifier" and node.parent is not None and node.parent.type == "attribute" \
                        and node.parent.parent is not None and node.parent.parent.type == "call":
                    out.append(Event(node.parent.parent, "`.cuda()`"))
                elif token == b"cuda" and node.type == "string_content":
                    string = node.parent
                    value = string_value(string) or ""
                    if (value == "cuda" or value.startswith("cuda:")) and string.parent is not None and \
                            string.parent.type in ("argument_list", "keyword_argument"):
                        out.append(Event(string, f'`"{value}"`'))
                elif token == b"cuda" and node.type == "identifier" and node.parent is not None and node.parent.type == "attribute":
                    call = node.parent.parent
                    if call is not None and call.type == "attribute" and call.parent is not None and call.parent.type == "call":
                        q = ctx.names.resolve(call)
                        if q and q.startswith("torch.cuda.") and q.rsplit(".", 1)[-1] not in CUDA_QUIET:
                            out.append(Event(call.parent, f"`{q}()`"))
        return out


RULE = DebugVariableTooLate()
