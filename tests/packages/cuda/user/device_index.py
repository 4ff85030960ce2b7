# the measured scenario cuda_pkg_device_index_1, as a user would write it
import torch

model = torch.nn.Linear(10, 4).cuda().eval()
ep = torch.export.export(model, (torch.randn(2, 10, device="cuda"),))
path = torch._inductor.aoti_compile_and_package(ep, package_path="lin_cuda.pt2")
runner = torch._inductor.aoti_load_package(path, device_index=1)
print(runner(torch.randn(2, 10, device="cuda")))
