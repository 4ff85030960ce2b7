import torch

from lowering.aoti import forward_call


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.tanh(self.fc(x)) + 1


torch.manual_seed(0)
forward = forward_call(Net().eval(), torch.randn(4, 8), torch.device("cpu"))
torch.manual_seed(1)
for n in (2, 3, 7, 16):
    y = forward(torch.randn(n, 8))
    print("program", n, tuple(y.shape), f"{y.sum().item():.4f}")
