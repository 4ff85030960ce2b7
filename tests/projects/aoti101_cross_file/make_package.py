import torch

from model import Ranker

ep = torch.export.export(Ranker(), (torch.randn(4, 8),))
torch._inductor.aoti_compile_and_package(ep, package_path="out/model.pt2")
