"""Compile a small model ahead of time with the deprecated AOTI API, then load and run it.

`make demo` runs `aoti-lsp --check` on this folder; `aoti-lsp --fix --unsafe-fixes` migrates it:
the compile, the loader and the artifact path (`scale.so` -> `scale.pt2`) change together.
"""

import os

import torch

ARTIFACT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "artifacts", "scale.so")


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x, *, bias=None):
        y = self.linear(x)
        return y if bias is None else y + bias


def build():
    model = Scale().eval()
    x = torch.randn(3, 8)
    batch = torch.export.Dim("batch", min=2, max=64)
    so_path = torch._export.aot_compile(
        model,
        (x,),
        {"bias": torch.zeros(4)},
        dynamic_shapes={"x": {0: batch}, "bias": None},
        options={"aot_inductor.output_path": ARTIFACT, "max_autotune": False},
    )
    return so_path


def run():
    runner = torch._export.aot_load(ARTIFACT, "cpu")
    return runner(torch.ones(5, 8), bias=torch.ones(4))
