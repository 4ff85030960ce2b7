import numpy as np
import torch

from pkg.paths import TOWER


def serve(batch):
    runner = torch._inductor.aoti_load_package(TOWER)
    return runner(batch)
