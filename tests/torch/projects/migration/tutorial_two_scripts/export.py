"""The tutorial's export step: a dynamic batch, options in a variable, the .so next to the cwd."""
import os

import torch
from torch.export import Dim


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = Net().to(device).eval()
sample = (torch.randn(4, 8, device=device),)
so_file = os.path.join(os.getcwd(), "m.so")
opts = {"aot_inductor.output_path": so_file}
with torch.no_grad():
    so_path = torch._export.aot_compile(
        model, sample, dynamic_shapes={"x": {0: Dim("batch", min=2, max=64)}}, options=opts
    )
print("exported")
