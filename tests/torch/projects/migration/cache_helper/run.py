"""saiprakash-c/inference-benchmarks' AOT Inductor runtime: `init` builds the cache's path (an
f-string ending in `.so`) and probes it; on a miss a module-level helper, given that path,
exports under inference_mode, sets inductor flags and restores them in a `finally`, compiles
`exported_program.module()` into it and logs where it wrote. The loader after the probe reads
either branch's value: the same file. The migration renames the `.so`, compiles the program
itself (its dynamic batch kept) and moves the loader with it. The second init takes the cache."""
import logging
from pathlib import Path

import torch
from torch.export import Dim

L = logging.getLogger(__name__)
AOT_CACHE_DIR = Path(__file__).resolve().parent / "cache"
COMPILE_OPTIONS = {"epilogue_fusion": True}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.tanh(self.fc(x)) * 2


class AOTInductorRuntime:
    def init(self, model_name: str, device: str):
        cache_path = AOT_CACHE_DIR / f"{model_name}_{device}.so"
        if cache_path.exists():
            print("cache hit")
            so_path = str(cache_path)
        else:
            print("cache miss")
            so_path = _compile_and_cache(model_name, cache_path, device, COMPILE_OPTIONS)
        return torch._export.aot_load(so_path, device)


def _compile_and_cache(model_name: str, cache_path: Path, device: str, compile_options: dict) -> str:
    import torch._inductor.config as inductor_cfg

    torch.manual_seed(0)
    model = Net().eval().to(device)
    dummy_input = torch.zeros(4, 8, device=device)
    inductor_flags = {k: v for k, v in compile_options.items() if not k.startswith("aot_inductor.")}
    aot_options = {k: v for k, v in compile_options.items() if k.startswith("aot_inductor.")}
    old_vals = {k: getattr(inductor_cfg, k) for k in inductor_flags}
    for k, v in inductor_flags.items():
        setattr(inductor_cfg, k, v)
    try:
        with torch.inference_mode():
            exported_program = torch.export.export(model, (dummy_input,),
                                                   dynamic_shapes=({0: Dim("batch", min=2, max=64)},))
            graph_module = exported_program.module()
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        so_path = torch._inductor.aot_compile(
            graph_module,
            (dummy_input,),
            options={"aot_inductor.output_path": str(cache_path), **aot_options},
        )
    finally:
        for k, v in old_vals.items():
            setattr(inductor_cfg, k, v)
    L.info("aot_inductor.cache.saved %s", so_path)
    return so_path


runtime = AOTInductorRuntime()
first = runtime.init("net", "cpu")
again = runtime.init("net", "cpu")
torch.manual_seed(1)
for n in (2, 3, 7, 16):
    x = torch.randn(n, 8)
    y, z = first(x), again(x)
    print(n, tuple(y.shape), f"{y.sum().item():.4f}", torch.equal(y, z))
