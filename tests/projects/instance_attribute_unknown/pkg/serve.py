import torch

from pkg.paths import TOWER


class Scorer:
    def __init__(self):
        self.runner = torch._inductor.aoti_load_package(TOWER)

    def score(self, rows, batch):
        x = batch
        return self.runner(x)
