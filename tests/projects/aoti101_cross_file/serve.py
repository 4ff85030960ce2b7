# make_package.py compiles out/model.pt2 for cpu (its example has no device=).
import torch

runner = torch._inductor.aoti_load_package("out/model.pt2", device_index=0)
