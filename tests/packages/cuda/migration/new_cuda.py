"""An old-API AOTI script on CUDA: compile, load on "cuda", call. scripts/cuda_measure.py runs it
and its migrated copy (new_cuda.py, written by `aoti-lsp --check --fix --unsafe-fixes`) on a GPU:
both must print the same."""

import os
import sys

import torch

OUT = os.path.join(sys.argv[1], "scaled.pt2")


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.linear(x) * 2


torch.manual_seed(0)
model = Scaled().to("cuda").eval()
batch = torch.export.Dim("batch", min=2, max=32)
ep = torch.export.export(
    model,
    (torch.randn(4, 8, device="cuda"),),
    dynamic_shapes={"x": {0: batch}},
    strict=True,
)
so_path = torch._inductor.aoti_compile_and_package(
    ep,
    package_path=OUT,
)
runner = torch._inductor.aoti_load_package(so_path)
out = runner(torch.arange(48, dtype=torch.float32, device="cuda").reshape(6, 8) / 10)
print(out.device, tuple(out.shape))
print([round(v, 3) for v in out.flatten().tolist()])
