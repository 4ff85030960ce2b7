import torch

from pkg.paths import TOWER


class Scorer:
    def __init__(self):
        self.runner = torch._inductor.aoti_load_package(TOWER)

    def score(self, rows, batch):
        x = torch.tensor([[float(v) for v in r] for r in rows], device="cuda")
        return self.runner(x)
