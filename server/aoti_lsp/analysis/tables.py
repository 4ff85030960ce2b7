"""data/torch.toml: what the rules know about torch (API signatures, device-keeping methods,
size-sensitive ops), read once per process."""

from __future__ import annotations

import sys
from functools import lru_cache
from importlib import resources

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@lru_cache(maxsize=None)
def torch_table() -> dict:
    return tomllib.loads(resources.files("aoti_lsp").joinpath("data", "torch.toml").read_text("utf-8"))


def api() -> dict:
    """Signatures as tuples: {"old_load": {"torch._export.aot_load": ("so_path", "device")}, ...}."""
    return {k: ({q: tuple(p) for q, p in v.items()} if isinstance(v, dict) else tuple(v))
            for k, v in torch_table()["api"].items()}


def section(name: str) -> dict:
    return torch_table()[name]
