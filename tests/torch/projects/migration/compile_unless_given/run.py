"""Compiles unless a compiled model is named in the environment: the loader reads whichever it got.
Unset here, so the compile runs; `so_path` holds None or the compile's path, never another file."""
import os

import torch
from torch.export import Dim, export


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x).relu() * 2


def main():
    so_path = None
    if not os.environ.get("SKIP_COMPILE"):
        torch.manual_seed(0)
        x = torch.randn(4, 8)
        exported = export(Net().eval(), (x,), dynamic_shapes=({0: Dim("batch", min=2, max=64)},))
        so_path = torch._inductor.aot_compile(exported.module(), (x,))
    runner = torch._export.aot_load(so_path, "cpu")
    torch.manual_seed(1)
    for n in (2, 3, 7, 16):
        y = runner(torch.randn(n, 8))
        print(n, tuple(y.shape), f"{y.sum().item():.4f}")


if __name__ == "__main__":
    main()
