import torch

from model import Ranker

OUTPUT = "out/model.pt2"

model = Ranker().eval()
example = torch.randn(4, 8, device="cuda")
ep = torch.export.export(model, (example,))
torch._inductor.aoti_compile_and_package(ep, package_path=OUTPUT)
