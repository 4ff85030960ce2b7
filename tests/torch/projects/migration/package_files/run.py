"""The old compile with `aot_inductor.package` set returns the package's files (a list), which
`package_aoti` bundles into a .pt2 (as PyTorch's and ExecuTorch's tests do). The migration passes
that path to aoti_compile_and_package and drops package_aoti; the dynamic batch must survive."""
import os
import tempfile

import torch
from torch._inductor.package import load_package, package_aoti
from torch.export import Dim


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x).sigmoid() * 2


def build(folder):
    torch.manual_seed(0)
    model = Net().eval()
    files = torch._export.aot_compile(model, (torch.randn(4, 8),), dynamic_shapes=({0: Dim("batch", min=2, max=64)},),
                                      options={"aot_inductor.package": True})
    path = package_aoti(os.path.join(folder, "net.pt2"), files)
    return load_package(path)


with tempfile.TemporaryDirectory() as folder:
    runner = build(folder)
    torch.manual_seed(1)
    for n in (2, 3, 7, 16):
        y = runner(torch.randn(n, 8))
        print(n, tuple(y.shape), f"{y.sum().item():.4f}")
