import torch

from model import Ranker

model = Ranker().eval()
example = torch.randn(4, 8, device="cpu")
ep = torch.export.export(model, (example,))
torch._inductor.aoti_compile_and_package(ep, package_path="out/model.pt2")
