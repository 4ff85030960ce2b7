"""Compiles the ranker on the device this host serves on."""
import torch

from serve import PACKAGE, init_distributed


class Ranker(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.head(x)


if __name__ == "__main__":
    _, device = init_distributed()
    model = Ranker().to(device)
    example = torch.randn(4, 8, device=device)
    ep = torch.export.export(model, (example,))
    print(torch._inductor.aoti_compile_and_package(ep, package_path=PACKAGE))
