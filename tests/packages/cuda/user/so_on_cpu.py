# the measured scenario old_load_cuda_so_on_cpu, as a user would write it
import torch
from torch._export import aot_compile, aot_load

DEVICE = "cuda"
model = torch.nn.Linear(10, 4).to(DEVICE).eval()
so = aot_compile(model, (torch.randn(2, 10, device=DEVICE),))
runner = aot_load(so, "cpu")
print(runner(torch.randn(2, 10)))
