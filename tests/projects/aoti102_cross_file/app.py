# make_package.py (in scripts/) compiles out/model.pt2 for cuda: CPU inputs here are reported,
# with related information pointing into make_package.py.
import torch

runner = torch._inductor.aoti_load_package("out/model.pt2")


def predict(features):
    return runner(torch.as_tensor(features))  # no finding: features may already be on cuda


print(runner(torch.randn(4, 8)))
print(runner(torch.randn(4, 8, device="cuda")))  # no finding
