import torch

from pkg.paths import TOWER


def serve(rows):
    runner = torch._export.aot_load(TOWER, "cpu")
    return runner(torch.tensor(rows))
