import os

import torch

from . import paths
from .paths import TOWER

_tower = None


def tower():
    """Loaded once, on first use."""
    global _tower
    if _tower is None:
        if not os.path.exists(TOWER):
            raise FileNotFoundError(TOWER)
        _tower = torch._export.aot_load(TOWER, "cpu")
    return _tower


class Ranker:
    def __init__(self):
        self.runner = torch._export.aot_load(paths.RANKER, "cpu")

    def __call__(self, scores, bias):
        return self.runner(scores, bias)


def predict(rows):
    x = torch.tensor(rows, dtype=torch.float32)
    scores = tower()(x)
    return Ranker()(scores, torch.ones(len(rows)))
