"""zhxchen17/torchnative's wip/simple_aoti.py shape: a program made by torch.export's private
_export_for_training, its module compiled with its own inputs spread in, dims dynamic."""
import torch
import torch.export._trace


class Module(torch.nn.Module):
    def forward(self, x, y):
        z = (x * y).sum(dim=1)
        w = (x / (y.abs() + 1)).sum(dim=1)
        return z - w


torch.manual_seed(0)
batch = torch.export.Dim("batch", min=2, max=64)
ep = torch.export._trace._export_for_training(Module(), (torch.randn(4, 5), torch.randn(4, 5)),
                                              dynamic_shapes=({0: batch}, {0: batch}))
so_path = torch._inductor.aot_compile(ep.module(), *ep.example_inputs)
runner = torch._export.aot_load(so_path, "cpu")
torch.manual_seed(1)
for n in (2, 3, 7, 16):
    y = runner(torch.randn(n, 5), torch.randn(n, 5))
    print(n, tuple(y.shape), f"{y.sum().item():.4f}")
