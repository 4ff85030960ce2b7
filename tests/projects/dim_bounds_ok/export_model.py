"""Exports the classifier for batches of 2 to 32 rows."""
import torch
from torch.export import Dim

from paths import PACKAGE


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.head(x)


if __name__ == "__main__":
    batch = Dim("batch", min=2, max=32)
    ep = torch.export.export(Classifier(), (torch.randn(4, 8),), dynamic_shapes=({0: batch},))
    print(torch._inductor.aoti_compile_and_package(ep, package_path=PACKAGE))
