"""The graph module of an export, named, then compiled with the old API (as a PyTorch issue's
reproduction does with `gm = torch.export.export(M(), args).module()`). The dynamic batch lives
in the ExportedProgram: the migration must compile it, not re-export `gm`."""
import torch
from torch.export import Dim


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x).tanh() + 1


torch.manual_seed(0)
args = (torch.randn(4, 8),)
gm = torch.export.export(Net().eval(), args, dynamic_shapes=({0: Dim("batch", min=2, max=64)},)).module()
so_path = torch._inductor.aot_compile(gm, args)
runner = torch._export.aot_load(so_path, "cpu")
torch.manual_seed(1)
for n in (2, 3, 7, 16):
    y = runner(torch.randn(n, 8))
    print(n, tuple(y.shape), f"{y.sum().item():.4f}")
