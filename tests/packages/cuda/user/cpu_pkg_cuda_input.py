# the measured scenario cpu_pkg_cuda_input, as a user would write it
import torch

model = torch.nn.Linear(10, 4).eval()
ep = torch.export.export(model, (torch.randn(2, 10),))
path = torch._inductor.aoti_compile_and_package(ep, package_path="lin_cpu.pt2")
runner = torch._inductor.aoti_load_package(path)
x = torch.randn(2, 10).to("cuda")
print(runner(x))
