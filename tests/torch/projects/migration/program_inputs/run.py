"""zhxchen17/torchnative's shape: the module of an exported program compiled with the program's
own example inputs spread in (`*ep.example_inputs`: its args and kwargs), dims dynamic."""
import torch


class Mix(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x, bias):
        return torch.tanh(self.fc(x)) + bias


torch.manual_seed(0)
model = Mix().eval()
batch = torch.export.Dim("batch", min=2, max=64)
ep = torch.export.export(model, (torch.randn(4, 8),), {"bias": torch.randn(4)},
                         dynamic_shapes={"x": {0: batch}, "bias": None})
so_path = torch._inductor.aot_compile(ep.module(), *ep.example_inputs)
runner = torch._export.aot_load(so_path, "cpu")
torch.manual_seed(1)
for n in (2, 3, 7, 16):
    y = runner(torch.randn(n, 8), bias=torch.full((4,), 0.5))
    print(n, tuple(y.shape), f"{y.sum().item():.4f}", f"{y[:, 1].sum().item():.4f}")
