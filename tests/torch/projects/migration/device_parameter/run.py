"""pytorch/benchmark's AOTInductorModelCache: a class method exports with a dynamic batch, compiles
the graph module, and loads it on a device given by its caller (here from the command line, as
the benchmark's `--devices`): known only at run time, so the loader reads its index then."""
import argparse
import weakref

import torch
import torch.export._trace
from torch.export import Dim


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.sigmoid(self.fc(x)) - 0.5


class ModelCache:
    cache = weakref.WeakKeyDictionary()

    @classmethod
    def load(cls, model, example_inputs, device):
        if model not in cls.cache:
            gm = torch.export._trace._export(
                model, example_inputs, dynamic_shapes=({0: Dim("batch", min=2, max=64)},), strict=False
            ).module()
            with torch.no_grad():
                so_path = torch._inductor.aot_compile(gm, example_inputs)
            cls.cache[model] = torch._export.aot_load(so_path, device)
        return cls.cache[model]


parser = argparse.ArgumentParser()
parser.add_argument("--devices", nargs="+", default=["cpu"])
args = parser.parse_args()
torch.manual_seed(0)
model = Net().eval()
runner = ModelCache.load(model, (torch.randn(4, 8),), args.devices[0])
torch.manual_seed(1)
for n in (2, 3, 7, 16):
    y = runner(torch.randn(n, 8))
    print(n, tuple(y.shape), f"{y.sum().item():.4f}")
