from aoti_lsp.rules._deprecated import DeprecatedCall


class DeprecatedLoad(DeprecatedCall):
    code = "AOTI002"
    name = "deprecated-aot-load"
    summary = "`torch._export.aot_load` is deprecated: use `torch._inductor.aoti_load_package`"
    triggers = ("aot_load",)
    explanation = """\
`torch._export.aot_load(so_path, device)` loads the bare `.so` written by the deprecated
`aot_compile`. Its replacement, `torch._inductor.aoti_load_package(path, device_index=-1)`,
loads a `.pt2` package and takes the device *type* from the package itself
(`wrapper_metadata.json`): only the device index can be chosen.

Device strings the old loader accepts: `"cpu"`, `"cuda"`, `"cuda:N"`, `"xpu..."`, `"mps..."`;
anything else (`"cpu:0"` included) raises `RuntimeError: Unsupported device`. A `.pt2` given to
the old loader fails with `dlopen ... invalid ELF header`; a `.so` given to the new one with
`RuntimeError: Failed to initialize zip archive`: migrate the compile and the load together
(the file's fix-all does)."""
    fix_explanation = """\
Unsafe (the loader now expects a `.pt2`): offered as a quick fix, applied by the CLI only with
`--unsafe-fixes`. `aot_load(p, "cpu")` and `aot_load(p, "cuda")` become
`torch._inductor.aoti_load_package(p)`; `aot_load(p, "cuda:1")` becomes
`aoti_load_package(p, device_index=1)`; a literal `"x.so"` path becomes `"x.pt2"`. The device
may also be a string constant of the same file. No fix when the device is computed at run time.

**One artifact, one migration, across the project.** The fix is planned on the artifact the call
writes or reads (the `.so` path, or the compile's return value), and every place that names it
changes together, in every file of the project: the compile, every loader (`aot_load` becomes
`aoti_load_package`; a new loader still given the `.so` too), and the string text the path ends
with, wherever it is spelt (a literal at the call, a constant of the file, a constant of another
module: `TOWER = os.path.join(ARTIFACT_DIR, "tower.so")` in `paths.py`), plus other strings of
those files spelt the same (`os.path.exists("out/m.so")`). The quick fix's title says what it
renames and in how many files; the editor gets one edit over all of them; `--fix` writes those
files all or none. The same fix is attached to the compile's and the loaders' findings.

No fix, with the reason in the related information, when the plan cannot be made whole: the
artifact path is computed at run time (`sys.argv[1]`); no compile of the project writes the `.so`
a loader reads (the producer is elsewhere); the compile's result is returned to code this analysis
cannot follow; the path constant is also loaded as a shared library (`ctypes.CDLL`) or taken apart
as a string (`.replace(".so", ...)`); a loader's device cannot be read. A loader that asks for
another device type than the compile used (`aot_load(p, "cpu")` of a CUDA-compiled model) is a bug
of its own (AOTI101): the migration would drop `device="cpu"` and hide it, so it is then offered
only in the editor (display-only, its title says `drops device="cpu"`), never by `--fix` or
fix-all, and AOTI101 stays reported."""
    invalid = (
        "import torch\nrunner = torch._export.aot_load(so, 'cuda:1')\n",
        "import torch._export as te\nrunner = te.aot_load('m.so', 'cpu')\n",
        "import torch\nload = torch._export.aot_load\nrunner = load(p, 'cpu')\n",
    )
    valid = (
        "import torch\nrunner = torch._inductor.aoti_load_package('m.pt2')\n",
        "try:\n    from torch._inductor import aoti_load_package as _load\nexcept ImportError:\n    from torch._export import aot_load as _load\nrunner = _load(p)\n",
        "cfg = {'aot_load': 1}\nif 'aot_load' in cfg:\n    pass\n",
    )

    def message(self, qualname, symbol):
        return f"`{qualname}` is deprecated: use `torch._inductor.aoti_load_package`"


RULE = DeprecatedLoad()
