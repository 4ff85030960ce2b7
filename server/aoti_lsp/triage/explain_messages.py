"""What `explain` recognises: each known message of torch / AOTInductor, what it means, what is
wrong (compile device, load device, input device, shape) and the fixes. The CUDA texts are quoted
as torch 2.11+cu130 printed them on an H200 (tests/packages/cuda/runs-*.json, made by
scripts/cuda_measure.py); the rest as torch 2.13 printed them on CPU (../shared/aoti-facts.md)."""

from __future__ import annotations

import re

RUNTIME_CHECK = "AOTI_RUNTIME_CHECK_INPUTS=1"
EMPTY_FIXES = [
    "guard at the caller, in plain Python outside the compiled model: `if lengths.numel() == 0: return ...` "
    "before calling the loaded package (a guard inside the exported forward is dropped by torch.export)",
    "empty-safe code in forward: `lengths.sum()` instead of `cumsum(lengths)[-1]`; offsets with a leading zero: "
    "`torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, 0)])`",
    f"set {RUNTIME_CHECK} in the environment of the process that runs the package: inputs below the traced "
    "lower bound then fail with `dim value is too small` instead of crashing (it also rejects size 1)",
]
CHECKLIST = [
    "device: the package's device (`aoti-lsp inspect PKG`) is the device of every input and of the loader",
    "shapes: every static dim matches the example used at compile time; dtypes and contiguity match",
    "empty inputs: a dynamic dim traced as >= 2 receives 0 or 1 (jagged batches with no rows)",
    f"run again with {RUNTIME_CHECK} (input checks) and CUDA_LAUNCH_BLOCKING=1 (the failing kernel on CUDA), "
    "TORCH_SHOW_CPP_STACKTRACES=1 (the C++ frames)",
]

COMPILE_DEVICE, LOAD_DEVICE, INPUT_DEVICE, SHAPE = "compile device", "load device", "input device", "shape"
# CUDA texts: as measured on an H200, torch 2.11+cu130 (tests/packages/cuda/runs-*.json)
MEASURED = "measured on torch 2.11+cu130, H200"
LOAD_FIX = ("load it on the device type it was compiled for: `torch._inductor.aoti_load_package(path)` takes the "
            "device from the package (the AOTI002 migration); with the old API, `aot_load`'s device must be that type")

# (kind, pattern, what is wrong, cause, fixes)
SIMPLE = [
    ("dim-too-small", re.compile(r"input_handles\[(\d+)\]: dim value is too small at (\d+), expected it to be >= (\d+), but got: (\d+)"),
     SHAPE, "input {0}, dimension {1} is {3}, below the lower bound {2} the package was traced with; "
     "without {rc} this input crashes or reads out of bounds", EMPTY_FIXES[:2]),
    ("dim-too-large", re.compile(r"input_handles\[(\d+)\]: dim value is too large at (\d+), expected to be <= (\d+), but got: (\d+)"),
     SHAPE, "input {0}, dimension {1} is {3}, above the upper bound {2} of the package", ["recompile with a larger `Dim(max=...)`"]),
    ("unmatched-dim", re.compile(r"input_handles\[(\d+)\]: unmatched dim value at (\d+), expected: (\d+), but got: (\d+)"),
     SHAPE, "input {0}, dimension {1} is {3}; the package was compiled with the static size {2} "
     f"(without {{rc}} a CUDA package runs on and returns a result of the wrong size: {MEASURED})",
     ["mark the dim dynamic at export (`dynamic_shapes`) or pass inputs of the compiled shape"]),
    ("unmatched-device", re.compile(r"input_handles\[(\d+)\]: unmatched device type, expected: (\d+(?:\(\w+\))?), but got: (\d+(?:\(\w+\))?)"),
     INPUT_DEVICE, "input {0} is on device type {2}, the package was compiled for {1}",
     ["move the input to the package's device before the call (AOTI102; `aoti-lsp inspect PKG` shows it)"]),
    ("unmatched-device", re.compile(r"input_handles\[(\d+)\]: unmatched device type"),
     INPUT_DEVICE, "input {0} is on another device type than the package", ["move the input to the package's device (`aoti-lsp inspect PKG`)"]),
    ("unmatched-dtype", re.compile(r"input_handles\[(\d+)\]: unmatched dtype"),
     SHAPE, "input {0} has another dtype than at compile time (without {rc}: silently wrong output)",
     ["convert the input to the compiled dtype"]),
    ("unmatched-stride", re.compile(r"input_handles\[(\d+)\]: unmatched stride"),
     SHAPE, "input {0} has other strides than at compile time (without {rc}: silently wrong output)",
     ["pass a contiguous input (`.contiguous()`)"]),
    ("same-device", re.compile(r"Expected all tensors to be on the same device, but got (\w+) is on (\S+?), different from "
                               r"other tensors on (\S+?) \(when checking argument in method (\w+)\)"),
     INPUT_DEVICE, "an input on `{1}` reached a model compiled for `{2}`: `{0}` of `{3}` is on `{1}`, the package's "
     f"weights on `{{2}}` (a CUDA package given CPU inputs: {MEASURED})",
     ["move every input to `{2}` before the call: `x.to(\"{2}\")` (AOTI102)"]),
    ("same-device", re.compile(r"Expected all tensors to be on the same device, but found at least two devices, (\S+?) and (\S+?)[!,]"),
     INPUT_DEVICE, "inputs and the model are on two devices, `{0}` and `{1}`",
     ["move every input to the package's device before the call (AOTI102)"]),
    ("out-device", re.compile(r"Expected out tensor to have device (\S+?), but got (\S+?) instead"),
     INPUT_DEVICE, "an input on `{0}` reached a package compiled for `{1}`: the output it allocates is on `{1}` "
     f"(a CPU package given CUDA inputs: {MEASURED})",
     ["move the inputs to `{1}` before the call (AOTI102)",
      "or, to run on `{0}`, compile for it: model and example inputs on `{0}` at export (AOTI101 then checks the load)"]),
    ("host-pointer", re.compile(r"The specified pointer resides on host memory"),
     INPUT_DEVICE, "a CPU tensor was given to a CUDA-compiled model", ["move the inputs to the package's CUDA device (AOTI102)"]),
    ("mixed-device-constants", re.compile(r"Mixed-device constants are only supported when the secondary device is CPU\. "
                                          r"Constant '([^']{1,200})' was compiled for a non-CPU device"),
     LOAD_DEVICE, "a model compiled for CUDA (its constant `{0}` lives on the GPU) was loaded on `cpu`: AOTI loads "
     f"only on the device type it compiled for (an old `.so` given `aot_load(so, \"cpu\")`: {MEASURED})",
     [LOAD_FIX, "or, to run on cpu, compile for cpu: model and example inputs on cpu (AOTI101)"]),
    ("invalid-device-ordinal", re.compile(r"CUDA error: invalid device ordinal"),
     LOAD_DEVICE, "the package was loaded on a CUDA device index this machine does not have "
     f"(`device_index=N` of `aoti_load_package`, `\"cuda:N\"` of `aot_load`; it fails at load: {MEASURED})",
     ["use an index below `torch.cuda.device_count()`, or leave `device_index` out (device 0)"]),
    ("no-cuda", re.compile(r"Torch not compiled with CUDA enabled"),
     LOAD_DEVICE, "a CUDA package was loaded by a CPU-only torch", ["load it where CUDA is available, or compile the model for cpu (AOTI101)"]),
    ("not-a-package", re.compile(r"Failed to initialize zip archive"), None,
     "`aoti_load_package` was given something that is not a .pt2 zip (e.g. a `.so` from the old `aot_compile`)",
     ["give it the `.pt2` written by `aoti_compile_and_package`, or migrate the compile too (AOTI001)"]),
    ("so-not-found", re.compile(r"Error in dlopen: ([^\s:]{1,300}): cannot open shared object file: No such file or directory"), None,
     "the old `aot_load` could not open `{0}`: dlopen looks for a name without a folder (`lin.so`) on the library "
     "path, not in the current folder; a path with a folder is opened as given (is the file there?) "
     f"(`aot_load(\"lin.so\", ...)` from the folder holding it: {MEASURED})",
     ["give `aot_load` a path with a folder: `os.path.abspath(\"{0}\")` or `./{0}`",
      "or migrate to `aoti_load_package` (AOTI002): it opens a relative path from the current folder"]),
    ("elf-header", re.compile(r"invalid ELF header"), None,
     "the old `aot_load` was given a `.pt2` package", ["load a `.pt2` with `torch._inductor.aoti_load_package` (AOTI002)"]),
    ("illegal-memory-access", re.compile(r"an illegal memory access was encountered"),
     SHAPE, "a kernel read or wrote outside a buffer: on AOTI, typically an input smaller than the package was traced "
     f"for, e.g. an empty jagged batch reaching `offsets[-1]` (no assertion guards such a read: {MEASURED})",
     EMPTY_FIXES),
    ("negative-size", re.compile(r"Trying to create tensor with negative dimension (-\d+): \[([^\]\n]{0,200})\]"),
     SHAPE, "the package computed a negative size ({0}, shape [{1}]) from an input's size: an empty or too-small "
     f"dynamic dim, e.g. `offsets[:-1]` of an empty batch ({MEASURED})", EMPTY_FIXES),
    ("device-assert", re.compile(r"device-side assert triggered"),
     SHAPE, "a kernel's device assertion failed (on AOTI, usually the index check of a gather on a too-small input)",
     ["the assertion's text is printed before this error (with CUDA_LAUNCH_BLOCKING=1 at the failing kernel): "
      "give that part of the log to `aoti-lsp explain`"]),
    ("incorrect-device", re.compile(r"Incorrect device passed to aoti_runner_cpu"),
     LOAD_DEVICE, "a cpu package was loaded with a `device_index`", ["drop `device_index` (AOTI101)"]),
]
# the wrappers torch raises after the error itself: they say at which step it failed
_PHASE = re.compile(r"\b(create|run)_func_\(")
_WHEN_LOAD = "at load: the model container could not be created (`create_func_`)"
_WHEN_CALL = "at the call, while the model ran (`run_func_`)"
_EVENT = re.compile(r"Failed to destroy CUDA event in AOTInductor model: ([^\n]{1,200})")
_INDEX = re.compile(r"index out of bounds: 0 <= (tmp\d+) < (ks\d+)")
_CPU_FROM = re.compile(r"Exception raised from (\w+) at (\S+?\.kernel\.cpp):(\d+)")
_CUDA_ASSERT = re.compile(r"(\S+\.py):(\d+): \S+: block: \[([\d,]+)\], thread: \[([\d,]+)\] Assertion `(index out of bounds: 0 <= tmp\d+ < ks\d+)` failed")
_SEGV = re.compile(r"Segmentation fault|SIGSEGV|core dumped|signal 11\b|exit code -11|exit status 139")
