"""The caller: asks build.py for an artifact, loads it, runs other batch sizes."""
import tempfile

import torch

from build import build_model

so = build_model(tempfile.mkdtemp())
runner = torch._export.aot_load(so, "cpu")
torch.manual_seed(1)
for n in (2, 3, 7, 16):
    y = runner(torch.randn(n, 8))
    print(n, tuple(y.shape), f"{y.sum().item():.4f}", f"{y[:, 0].sum().item():.4f}")
