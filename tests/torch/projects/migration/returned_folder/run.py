"""seantempesta/remaster's shape: a compile without an output path, its .so sized, loaded and run,
then every file of its folder copied for a C++ consumer, and its C++ source read beside it."""
import os
import shutil

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 3)

    def forward(self, x):
        return torch.tanh(self.fc(x))


torch.manual_seed(0)
model = Net().eval()
dummy = torch.randn(4, 8)
batch = torch.export.Dim("batch", min=2, max=64)
exported = torch.export.export(model, (dummy,), dynamic_shapes={"x": {0: batch}})
so_path = torch._inductor.aot_compile(exported.module(), (dummy,))
print("sized:", os.path.getsize(so_path) > 0)
runner = torch._export.aot_load(so_path, device="cpu")
torch.manual_seed(1)
for n in (2, 3, 7, 16):
    y = runner(torch.randn(n, 8))
    print(n, tuple(y.shape), f"{y.sum().item():.4f}", f"{y[:, 0].sum().item():.4f}")

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
os.makedirs(out, exist_ok=True)
so_dir = os.path.dirname(so_path)
for f in os.listdir(so_dir):
    src = os.path.join(so_dir, f)
    if os.path.isfile(src):
        shutil.copy2(src, os.path.join(out, f))
print("copied:", sorted({os.path.splitext(f)[1] for f in os.listdir(out)} & {".so", ".cpp"}))
cpp = open(os.path.splitext(so_path)[0] + ".cpp").read()
print("its C++ source beside it:", "AOTInductorModel" in cpp)
