"""The builder: compiles and returns the .so path to whoever asked."""
import os

import torch


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 2)

    def forward(self, x):
        return torch.log_softmax(self.fc(x), dim=-1)


def build_model(out_dir):
    torch.manual_seed(0)
    model = Head().eval()
    example = torch.randn(4, 8)
    so_path = torch._export.aot_compile(
        model,
        (example,),
        dynamic_shapes={"x": {0: torch.export.Dim("batch", min=2, max=64)}},
        options={"aot_inductor.output_path": os.path.join(out_dir, "head.so")},
    )
    return so_path
