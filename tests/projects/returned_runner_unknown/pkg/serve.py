import torch

from pkg.paths import TOWER

OUT = TOWER


def load_scorer(path=OUT):
    return torch._inductor.aoti_load_package(path)


def main(batch):
    scorer = load_scorer()
    return scorer(batch)
