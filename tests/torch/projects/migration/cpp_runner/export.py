"""Writes a .so for the C++ server in runner.cpp, at the path given on the command line:
`python export.py /srv/models/net.so`. The C++ side loads a .so with AOTIModelContainerRunnerCpu,
so this artifact must stay a .so until both sides migrate together."""
import sys

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


torch.manual_seed(0)
model = Net().eval()
example = torch.randn(4, 8)
with torch.no_grad():
    so_path = torch._export.aot_compile(
        model,
        (example,),
        dynamic_shapes={"x": {0: torch.export.Dim("batch", min=2, max=64)}},
        options={"aot_inductor.output_path": sys.argv[1]},
    )
print("wrote", len(so_path) > 0)
