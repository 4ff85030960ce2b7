"""Smoke test of the exported classifier: the smallest and the largest batch it was exported for."""
import torch

from paths import PACKAGE

runner = torch._inductor.aoti_load_package(PACKAGE)
print(tuple(runner(torch.randn(2, 8)).shape))
print(tuple(runner(torch.randn(32, 8)).shape))
