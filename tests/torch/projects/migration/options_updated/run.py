"""The AOTInductor Python-runtime tutorial's shape, in our own words: an options dict that holds the
output path, given more inductor keys in the device branch; the exported program's module compiled
with the old inductor entry point; then, as a second part of the script, the path spelt again
inline and loaded on the same device choice, run at batch sizes other than the example's."""
import os

import torch


class Scorer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(10, 6)
        self.head = torch.nn.Linear(6, 2)

    def forward(self, x):
        return self.head(torch.relu(self.proj(x))) * 0.5


torch.manual_seed(0)
model = Scorer().eval()

with torch.inference_mode():
    # where the compiled library goes
    compile_options = {
        "aot_inductor.output_path": os.path.join(os.getcwd(), "scorer.so"),
    }
    if torch.cuda.is_available():
        device = "cuda"
        compile_options.update({"max_autotune": True})
    else:
        device = "cpu"
        compile_options.update(epilogue_fusion=False)
        compile_options["aot_inductor.debug_compile"] = False

    model = model.to(device=device)
    example_inputs = (torch.randn(4, 10, device=device),)
    batch = torch.export.Dim("batch", min=2, max=32)
    program = torch.export.export(model, example_inputs, dynamic_shapes={"x": {0: batch}})
    so_path = torch._inductor.aot_compile(program.module(), example_inputs, options=compile_options)


device = "cuda" if torch.cuda.is_available() else "cpu"
runner = torch._export.aot_load(os.path.join(os.getcwd(), "scorer.so"), device)
torch.manual_seed(1)
with torch.inference_mode():
    for n in (2, 3, 7, 16, 32):
        y = runner(torch.randn(n, 10, device=device))
        print(n, tuple(y.shape), f"{y.sum().item():.5f}")
