# ...loaded on cpu here
import torch
from torch._export import aot_load

runner = aot_load("lin.so", "cpu")
print(runner(torch.randn(2, 10)))
