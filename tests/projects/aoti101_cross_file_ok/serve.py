# Negative twin of aoti101_cross_file: loaded without device_index, as a cpu package must be.
import torch

runner = torch._inductor.aoti_load_package("out/model.pt2")
