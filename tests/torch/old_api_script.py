"""An old-API AOTI script: compile with kwargs, dynamic_shapes and options, load, call.
tests/torch/test_migration.py runs it, lets `aoti-lsp --fix --unsafe-fixes` migrate it,
and runs it again: it must print the same numbers."""

import os
import sys

import torch
from torch._export import aot_compile, aot_load

OUT = os.path.join(sys.argv[1], "scaled.so")


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x, *, scale):
        return {"y": self.linear(x) * scale, "norm": x.norm(dim=1)}


torch.manual_seed(0)
model = Scaled().eval()
batch = torch.export.Dim("batch", min=2, max=32)
so_path = aot_compile(
    model,
    (torch.randn(4, 8),),
    {"scale": torch.tensor(2.0)},
    dynamic_shapes={"x": {0: batch}, "scale": None},
    options={"aot_inductor.output_path": OUT, "max_autotune": False},
    remove_runtime_assertions=False,
)
assert os.path.exists(OUT)
runner = aot_load(so_path, "cpu")
out = runner(torch.arange(48, dtype=torch.float32).reshape(6, 8) / 10, scale=torch.tensor(0.5))
print(sorted(out))
print([round(v, 4) for v in out["y"].flatten().tolist()])
print([round(v, 4) for v in out["norm"].tolist()])
print(os.path.basename(so_path))
