"""Loads data/deprecated.toml."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


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
    text = resources.files("aoti_lsp").joinpath("data", "deprecated.toml").read_text("utf-8")
    return {d["name"]: Deprecated(**d) for d in tomllib.loads(text)["symbol"]}


def for_code(code: str) -> dict[str, Deprecated]:
    return {k: v for k, v in deprecated_symbols().items() if v.code == code}
