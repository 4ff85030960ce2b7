"""Debug environment variables of torch / AOTInductor: when each is read (measured on torch 2.13,
see the facts table on docs/rules/AOTI301.md). Used by AOTI301, hover and completion."""

from __future__ import annotations

from aoti_lsp.analysis.records import record, set_field
from aoti_lsp.analysis.treesitter import Node

COMPILE, RUN, IMPORT, CUDA, EACH_COMPILE = "compile", "run", "import", "cuda", "each-compile"


@record("name", "phase", "read", "effect", frozen=True)
class EnvVar:
    def __init__(self, name: str, phase: str, read: str, effect: str):
        set_field(self, "name", name)
        set_field(self, "phase", phase)  # when it must already be set: COMPILE / RUN / IMPORT / CUDA / EACH_COMPILE
        set_field(self, "read", read)  # when torch reads it
        set_field(self, "effect", effect)


VARIABLES = {v.name: v for v in (
    EnvVar("AOTI_RUNTIME_CHECK_INPUTS", RUN,
           "at run time, by the package's generated C++ (`getenv`, on the first call)",
           "checks every input's dtype, device, sizes and strides against what was compiled: an empty "
           "jagged input fails with `dim value is too small` instead of crashing. Setting it at compile time does nothing."),
    EnvVar("TORCHINDUCTOR_NAN_ASSERTS", COMPILE,
           "when `torch._inductor.config` is first imported (the first compile, or `import torch._inductor`)",
           "compile: NaN checks on inputs are generated into the package"),
    EnvVar("AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER", COMPILE,
           "when `torch._inductor.config` is first imported (the first compile, or `import torch._inductor`)",
           "compile: code that prints intermediate values is generated into the package"),
    EnvVar("AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT", COMPILE,
           "when `torch._inductor.config` is first imported (the first compile, or `import torch._inductor`)",
           "compile: which kernels the intermediate value printer prints"),
    EnvVar("TORCH_LOGS", IMPORT, "at `import torch`", "logging during export and compile (e.g. `+dynamo,output_code`)"),
    EnvVar("TORCH_SHOW_CPP_STACKTRACES", CUDA, "at process start / first use", "C++ frames in error messages"),
    EnvVar("CUDA_LAUNCH_BLOCKING", CUDA, "when CUDA is first used in the process",
           "kernels run synchronously: an error names the kernel that failed"),
    EnvVar("PYTORCH_NO_CUDA_MEMORY_CACHING", CUDA, "when CUDA is first used in the process",
           "no caching allocator: out-of-bounds accesses are caught by tools such as compute-sanitizer"),
    EnvVar("TORCHINDUCTOR_CACHE_DIR", EACH_COMPILE, "at each compile", "where compiled kernels are kept"),
    EnvVar("TORCH_COMPILE_DEBUG", COMPILE, "at config import / compile",
           "debug dump of each compile; the package gains `kernel_information.json`"),
)}


def string_value(node: Node) -> str | None:
    """The text of a plain string literal (no f-string, no concatenation)."""
    if node.type != "string":
        return None
    parts = [c for c in node.named_children if c.type == "string_content"]
    if any(c.type == "interpolation" for c in node.named_children) or len(parts) > 1:
        return None
    return parts[0].text.decode() if parts else ""


def hover_text(var: EnvVar) -> str:
    return f"**{var.name}**: {var.effect}.\n\nRead {var.read}."
