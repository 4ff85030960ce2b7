"""Compiles to the path given on the command line; run.sh chooses it and passes it to serve.py too."""
import sys

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x).sigmoid()


torch.manual_seed(0)
torch._export.aot_compile(
    Net().eval(),
    (torch.randn(4, 8),),
    dynamic_shapes={"x": {0: torch.export.Dim("batch", min=2, max=64)}},
    options={"aot_inductor.output_path": sys.argv[1]},
)
