import torch

from .paths import TOWER


def serve(batch):
    runner = torch._inductor.aoti_load_package(TOWER)
    return runner(torch.ones(3, 8))
