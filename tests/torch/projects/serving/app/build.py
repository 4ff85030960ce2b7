import os

import torch

import app.paths as P
from app.paths import TOWER


class Tower(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.proj(x)) * 2


class Ranker(torch.nn.Module):
    def forward(self, scores, bias):
        return scores.sum(dim=1) + bias


def build():
    torch.manual_seed(0)
    os.makedirs(P.ARTIFACT_DIR, exist_ok=True)
    with torch.no_grad():
        tower = Tower().eval()
        x = torch.randn(3, 8)
        torch._export.aot_compile(tower, (x,), options={"aot_inductor.output_path": TOWER})
        scores, bias = torch.randn(3, 4), torch.randn(3)
        torch._export.aot_compile(Ranker(), (scores, bias), options={"aot_inductor.output_path": P.RANKER})
