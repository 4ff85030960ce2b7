"""Smoke test of the exported classifier: one request, then a full queue."""
import torch

from paths import PACKAGE

runner = torch._inductor.aoti_load_package(PACKAGE)
print(tuple(runner(torch.randn(1, 8)).shape))
print(tuple(runner(torch.randn(33, 8)).shape))
