"""The tutorial's serving step: another process loads what export.py wrote."""
import os

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
so_file = os.path.join(os.getcwd(), "m.so")
model = torch._export.aot_load(so_file, device)

torch.manual_seed(1)
with torch.no_grad():
    for n in (2, 3, 7, 16, 64):
        y = model(torch.randn(n, 8, device=device))
        print(n, tuple(y.shape), f"{y.sum().item():.4f}", f"{y[0].sum().item():.4f}")
