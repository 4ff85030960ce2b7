"""data/torch.toml: what the rules know about torch (API signatures, device-keeping methods,
size-sensitive ops), read once per process."""

from __future__ import annotations

import os
from functools import lru_cache

from aoti_lsp import jsonc

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")


@lru_cache(maxsize=None)
def read(name: str) -> dict:
    """data/<name>.toml as written beside it in JSON by scripts/gen_docs.py (a test keeps the two
    equal): no tomllib import, no TOML parse in a run; nor the json package (jsonc.py)."""
    with open(os.path.join(DATA, f"{name}.json"), encoding="utf-8") as fh:
        return jsonc.loads(fh.read())


def torch_table() -> dict:
    return read("torch")


def api() -> dict:
    """Signatures as tuples: {"old_load": {"torch._export.aot_load": ("so_path", "device")}, ...}."""
    return {k: ({q: tuple(p) for q, p in v.items()} if isinstance(v, dict) else tuple(v))
            for k, v in torch_table()["api"].items()}


def section(name: str) -> dict:
    return torch_table()[name]
