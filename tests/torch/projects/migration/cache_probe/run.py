"""DataAnalyticsEngineering/nfdi-demonstrator's model cache: try to load a compiled model from a
path built at run time (an f-string ending in `.so`); where that fails, compile it there (the
name `so_path` rebound to the compile's result) and load it. The second call takes the cache.
The migration renames both f-strings' `.so` and moves the three calls together (the cache
probe's loader reads what an earlier call's compile wrote)."""
import os

import torch
from torch.export import Dim

CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.tanh(self.fc(x)) * 2


def load_model(name, device="cpu"):
    try:
        so_path = os.path.join(CACHE, f"{name}_{device}.so")
        model = torch._export.aot_load(so_path, device)
        print("cache hit")
    except Exception:
        os.makedirs(CACHE, exist_ok=True)
        so_path = os.path.join(CACHE, f"{name}_{device}.so")
        with torch.no_grad():
            x = torch.randn(4, 8)
            so_path = torch._export.aot_compile(Net().eval(), (x,), dynamic_shapes=({0: Dim("batch", min=2, max=64)},),
                                                options={"aot_inductor.output_path": so_path})
        model = torch._export.aot_load(so_path, device)
        print("compiled")
    return model


torch.manual_seed(0)
first = load_model("net")
again = load_model("net")
torch.manual_seed(1)
for n in (2, 3, 7, 16):
    x = torch.randn(n, 8)
    y, z = first(x), again(x)
    print(n, tuple(y.shape), f"{y.sum().item():.4f}", torch.equal(y, z))
