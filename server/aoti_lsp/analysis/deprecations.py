"""Loads data/deprecated.toml."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from aoti_lsp.analysis.tables import read


@dataclass(frozen=True)
class Deprecated:
    name: str
    code: str
    kind: str  # compile | load
    replacement: str
    note: str
    signature: str


@lru_cache(maxsize=None)
def deprecated_symbols() -> dict[str, Deprecated]:
    return {d["name"]: Deprecated(**d) for d in read("deprecated")["symbol"]}


def for_code(code: str) -> dict[str, Deprecated]:
    return {k: v for k, v in deprecated_symbols().items() if v.code == code}
