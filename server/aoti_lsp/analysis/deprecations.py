"""Loads data/deprecated.toml."""

from __future__ import annotations

from functools import lru_cache

from aoti_lsp.analysis.records import record, set_field
from aoti_lsp.analysis.tables import read


@record("name", "code", "kind", "replacement", "note", "signature", frozen=True)
class Deprecated:
    """`kind`: compile | load."""

    def __init__(self, name: str, code: str, kind: str, replacement: str, note: str, signature: str):
        set_field(self, "name", name)
        set_field(self, "code", code)
        set_field(self, "kind", kind)
        set_field(self, "replacement", replacement)
        set_field(self, "note", note)
        set_field(self, "signature", signature)


@lru_cache(maxsize=None)
def deprecated_symbols() -> dict[str, Deprecated]:
    return {d["name"]: Deprecated(**d) for d in read("deprecated")["symbol"]}


def for_code(code: str) -> dict[str, Deprecated]:
    return {k: v for k, v in deprecated_symbols().items() if v.code == code}
