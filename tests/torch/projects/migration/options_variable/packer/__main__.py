"""`python -m packer`: compile with an options dict built in a variable, extra inductor keys included."""
import os
import tempfile

import torch


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(6, 12)
        self.out = torch.nn.Linear(12, 3)

    def forward(self, x):
        return torch.softmax(self.out(torch.nn.functional.gelu(self.inp(x))), dim=-1)


def compile_model(model, example, out_dir):
    options = {
        "aot_inductor.output_path": os.path.join(out_dir, "mlp.so"),
        "max_autotune": False,
        "aot_inductor.debug_compile": False,
        "epilogue_fusion": True,
    }
    batch = torch.export.Dim("batch", min=2, max=128)
    with torch.no_grad():
        return torch._export.aot_compile(model, (example,), dynamic_shapes=({0: batch},), options=options)


def main():
    torch.manual_seed(0)
    so_path = compile_model(Mlp().eval(), torch.randn(5, 6), tempfile.mkdtemp())
    runner = torch._export.aot_load(so_path, "cpu")
    torch.manual_seed(1)
    for n in (2, 3, 7, 16, 100):
        y = runner(torch.randn(n, 6))
        print(n, tuple(y.shape), f"{y[:, 0].sum().item():.5f}", f"{y.max().item():.5f}")


main()
