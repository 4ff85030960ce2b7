"""Export with a dynamic batch first, then compile the exported module with the old inductor entry point."""
import os
import tempfile

import torch
from torch.export import Dim


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.tanh(self.fc(x)) + x[:, :4]


torch.manual_seed(0)
model = Net().eval()
example_inputs = (torch.randn(4, 8),)
ep = torch.export.export(model, example_inputs, dynamic_shapes={"x": {0: Dim("batch", min=2, max=64)}})
with tempfile.TemporaryDirectory() as tmp:
    so_path = torch._inductor.aot_compile(
        ep.module(), example_inputs, options={"aot_inductor.output_path": os.path.join(tmp, "net.so")}
    )
    runner = torch._export.aot_load(so_path, "cpu")
    torch.manual_seed(1)
    for n in (2, 3, 7, 16, 64):
        y = runner(torch.randn(n, 8))
        print(n, tuple(y.shape), f"{y.sum().item():.4f}")
