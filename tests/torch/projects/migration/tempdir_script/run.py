"""One script: compile into a fresh temporary folder, load the .so, serve other batch sizes."""
import os
import tempfile

import torch


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x, *, scale):
        return torch.relu(self.linear(x)) * scale


torch.manual_seed(0)
model = Scaled().eval()
x = torch.randn(4, 8)
s = torch.tensor(2.0)
out_dir = tempfile.mkdtemp()
batch = torch.export.Dim("batch", min=2, max=32)
so_path = torch._export.aot_compile(
    model,
    (x,),
    {"scale": s},
    dynamic_shapes={"x": {0: batch}, "scale": None},
    options={"aot_inductor.output_path": os.path.join(out_dir, "m.so")},
)
runner = torch._export.aot_load(so_path, "cpu")

torch.manual_seed(1)
for n in (2, 3, 7, 16, 32):
    y = runner(torch.randn(n, 8), scale=torch.tensor(0.5))
    print(n, tuple(y.shape), f"{y.sum().item():.4f}", f"{y.abs().max().item():.4f}")
