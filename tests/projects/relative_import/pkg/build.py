import torch
from .paths import TOWER


class Tower(torch.nn.Module):
    def forward(self, x):
        return x * 2


def build():
    model = Tower().cuda()
    example = torch.randn(3, 8, device="cuda")
    ep = torch.export.export(model, (example,))
    return torch._inductor.aoti_compile_and_package(ep, package_path=TOWER)
