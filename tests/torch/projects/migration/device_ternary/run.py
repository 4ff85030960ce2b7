"""The device is a ternary at compile time and the same ternary, spelled inline, at load time."""
import os

import torch


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.gate = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x) * torch.sigmoid(self.gate(x))


device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = Gate().to(device).eval()
x = torch.randn(4, 8, device=device)
path = os.path.join(os.getcwd(), "gate.so")
so_path = torch._export.aot_compile(
    model, (x,), dynamic_shapes={"x": {0: torch.export.Dim("batch", min=2, max=32)}},
    options={"aot_inductor.output_path": path},
)
runner = torch._export.aot_load(so_path, "cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(1)
for n in (2, 3, 7, 16):
    y = runner(torch.randn(n, 8, device=device))
    print(n, tuple(y.shape), f"{y.sum().item():.4f}")
