import torch

from pkg.paths import TOWER


class Tower(torch.nn.Module):
    def forward(self, x):
        return x * 2


def build():
    example = torch.randn(3, 8, device="cuda")
    return torch._export.aot_compile(Tower().cuda(), (example,), options={"aot_inductor.output_path": TOWER})
