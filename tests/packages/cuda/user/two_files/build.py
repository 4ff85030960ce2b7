# old_load_cuda_so_on_cpu across two files: compiled here...
import torch
from torch._export import aot_compile

model = torch.nn.Linear(10, 4).cuda().eval()
aot_compile(model, (torch.randn(2, 10, device="cuda"),), options={"aot_inductor.output_path": "lin.so"})
