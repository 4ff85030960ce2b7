"""ExecuTorch's tests compile with `aot_inductor.package` set inside `torch.no_grad()`, then
bundle the returned files with `package_aoti` in a `with tempfile.TemporaryDirectory()` body.
The migration keeps the export where the compile was and moves the compile into that body,
where it writes the package itself; the dynamic batch must survive."""
import os
import tempfile

import torch
from torch._inductor.package import load_package, package_aoti
from torch.export import Dim


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(6, 6)
        self.gate = torch.nn.Linear(6, 6)

    def forward(self, x, scale):
        return self.proj(x) * torch.sigmoid(self.gate(x)) * scale


def check():
    torch.manual_seed(0)
    model = Gate().eval()
    x, scale = torch.randn(5, 6), torch.tensor(0.5)
    with torch.no_grad():
        so = torch._export.aot_compile(
            model,
            args=(x, scale),
            options={
                "aot_inductor.package": True,
                "reorder_for_peak_memory": False,
            },
            dynamic_shapes=({0: Dim("batch", min=2, max=64)}, None),
        )
    with tempfile.TemporaryDirectory() as tempdir:
        path = package_aoti(os.path.join(tempdir, "gate.pt2"), so)
        runner = load_package(path)
        torch.manual_seed(1)
        for n in (2, 3, 7, 16):
            y = runner(torch.randn(n, 6), scale)
            print(n, tuple(y.shape), f"{y.sum().item():.4f}")


check()
