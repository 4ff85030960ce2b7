"""Ranking features from jagged item histories, served by an AOTInductor package.

Every request carries its users' recent items back to back in `item_ids` and, per user,
how many of them are theirs in `lengths`. A request with no users gives an empty `lengths`;
one where no user has any history gives `lengths` of zeros and no `item_ids`. Run
`aoti-lsp check examples/jagged_serving.py` to see where the compiled package breaks on
them, and the quick fixes; `python examples/jagged_serving.py` shows it (torch 2.13, CPU).
"""

import sys

import torch
from torch.export import Dim

PACKAGE = "history_features.pt2"


class HistoryFeatures(torch.nn.Module):
    def __init__(self, num_items: int = 1000, emb_dim: int = 32, out_dim: int = 16):
        super().__init__()
        self.items = torch.nn.Embedding(num_items, emb_dim)
        self.proj = torch.nn.Linear(emb_dim, out_dim)

    def forward(self, item_ids, lengths):
        # "handle the empty request": torch.export drops this check (AOTI202)
        if lengths.numel() == 0:
            return torch.zeros(0, self.proj.out_features), torch.zeros(self.proj.out_features)
        emb = self.items(item_ids)
        offsets = torch.cumsum(lengths, 0)
        # request-wide context: the package segfaults here on an empty request (AOTI201)
        context = self.proj(emb.sum(0) / offsets[-1].clamp(min=1))
        # each user's latest item: index out of bounds when nobody has history (AOTI201)
        latest = self.proj(emb.index_select(0, (offsets - 1).clamp(min=0)))
        return latest, context


def build(path: str = PACKAGE) -> str:
    model = HistoryFeatures().eval()
    example = (torch.randint(0, 1000, (7,)), torch.tensor([3, 4]))
    dims = {"item_ids": {0: Dim("N", min=0)}, "lengths": {0: Dim("B", min=0)}}
    with torch.no_grad():
        ep = torch.export.export(model, example, dynamic_shapes=dims)
        return torch._inductor.aoti_compile_and_package(ep, package_path=path)


def serve(requests):
    runner = torch._inductor.aoti_load_package(PACKAGE)
    for item_ids, lengths in requests:
        latest, context = runner(item_ids, lengths)
        yield latest.shape, context.shape


REQUESTS = {
    "two-users": (torch.tensor([1, 2, 3]), torch.tensor([1, 2])),
    "no-history": (torch.empty(0, dtype=torch.long), torch.zeros(2, dtype=torch.long)),
    "empty": (torch.empty(0, dtype=torch.long), torch.empty(0, dtype=torch.long)),
}

if __name__ == "__main__":
    # python jagged_serving.py [build] [two-users|no-history|empty ...]
    names = sys.argv[1:] or ["build", *REQUESTS]
    if "build" in names:
        build()
    for name in names:
        if name in REQUESTS:
            print(name, *serve([REQUESTS[name]]), flush=True)
