# The package is compiled for cpu in make_package.py: CPU inputs are right, no finding.
import torch

runner = torch._inductor.aoti_load_package("out/model.pt2")
print(runner(torch.randn(4, 8)))
