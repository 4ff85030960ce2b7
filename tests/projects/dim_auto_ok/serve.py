"""Exports with an automatic batch dim, then serves one request at a time (padded to the traced minimum of 2 rows)."""
import os

import torch
from torch.export import Dim

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scorer.pt2")


class Scorer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.head(x)


def export():
    ep = torch.export.export(Scorer(), (torch.randn(4, 8),), dynamic_shapes=({0: Dim.AUTO},))
    return torch._inductor.aoti_compile_and_package(ep, package_path=PACKAGE)


def serve_one():
    runner = torch._inductor.aoti_load_package(PACKAGE)
    return runner(torch.randn(2, 8))[:1]


if __name__ == "__main__":
    export()
    print(tuple(serve_one().shape))
