from aoti_lsp.rules._deprecated import FALLBACKS, MIGRATION_PLAN, DeprecatedCall


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
may also be a string constant of the same file. No fix when the device is computed at run time."""
    explanation += FALLBACKS
    fix_explanation += MIGRATION_PLAN
    invalid = (
        "import torch\nrunner = torch._export.aot_load(so, 'cuda:1')\n",
        "import torch._export as te\nrunner = te.aot_load('m.so', 'cpu')\n",
        "import torch\nload = torch._export.aot_load\nrunner = load(p, 'cpu')\n",
    )
    valid = (
        "def load(p):\n    try:\n        from torch._inductor import aoti_load_package\n        return aoti_load_package(p)\n    except ImportError:\n        from torch._export import aot_load\n        return aot_load(p, 'cuda')\n",
        "import torch\nrunner = torch._inductor.aoti_load_package('m.pt2')\n",
        "try:\n    from torch._inductor import aoti_load_package as _load\nexcept ImportError:\n    from torch._export import aot_load as _load\nrunner = _load(p)\n",
        "cfg = {'aot_load': 1}\nif 'aot_load' in cfg:\n    pass\n",
    )

    def message(self, qualname, symbol):
        return f"`{qualname}` is deprecated: use `torch._inductor.aoti_load_package`"


RULE = DeprecatedLoad()
