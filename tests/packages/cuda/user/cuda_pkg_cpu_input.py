# the measured scenario cuda_pkg_cpu_input, as a user would write it
import torch

model = torch.nn.Linear(10, 4).cuda().eval()
example = torch.randn(2, 10, device="cuda")
ep = torch.export.export(model, (example,))
path = torch._inductor.aoti_compile_and_package(ep, package_path="lin_cuda.pt2")
runner = torch._inductor.aoti_load_package(path)
x = torch.randn(2, 10)
print(runner(x))
