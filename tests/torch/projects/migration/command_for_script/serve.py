"""Runs what compile.py printed: `python serve.py ENCODER HEAD`."""
import sys

import torch

assert len(sys.argv) == 3
encoder_path, head_path = sys.argv[1:]


def load_encoder():
    return torch._export.aot_load(encoder_path, "cpu")


def load_head():
    return torch._export.aot_load(head_path, "cpu")


encoder, head = load_encoder(), load_head()
torch.manual_seed(1)
with torch.no_grad():
    for n in (2, 3, 7, 16, 64):
        y = head(encoder(torch.randn(n, 8)))
        print(n, tuple(y.shape), f"{y.sum().item():.4f}", f"{y[:, 1].sum().item():.4f}")
