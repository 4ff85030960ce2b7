"""Serving entry point: one process per GPU, or a single process on a CPU-only host."""
import os

import torch

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ranker.pt2")


def init_distributed():
    """(rank, device) of this process; hosts without CUDA get the CPU."""
    if not torch.cuda.is_available():
        return 0, torch.device("cpu")
    rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(rank)
    return rank, torch.device("cuda", rank)


def load(path=PACKAGE):
    rank, device = init_distributed()
    runner = torch._inductor.aoti_load_package(path, device_index=device.index if device.type == "cuda" else -1)
    return runner, device


if __name__ == "__main__":
    runner, device = load()
    print(tuple(runner(torch.randn(4, 8, device=device)).shape))
