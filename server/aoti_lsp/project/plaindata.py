"""The cache's format: plain JSON, with tuples, sets, non-string dict keys, and this package's few
data classes and enums tagged by name. Decoding builds only the classes named in `_CLASSES`
(by their fields) and the enums in `_ENUMS`: unlike pickle, a crafted file cannot run code.
Lone surrogates (a string literal holding `\\ud800`) survive: json escapes them."""

from __future__ import annotations

from aoti_lsp import jsonc
from aoti_lsp.analysis.findings import Applicability, Choice, Edit, Finding, Fix, FixStub, Related, Severity

_CLASSES: dict[str, type] = {}
_ENUMS: dict[str, type[Choice]] = {"Applicability": Applicability, "Severity": Severity}


def allow(cls: type) -> type:
    """Let a data class travel in the cache (cache.Entry registers itself)."""
    _CLASSES[cls.__name__] = cls
    return cls


for _cls in (Edit, Fix, FixStub, Finding, Related):
    allow(_cls)

_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = cls.__match_args__  # a record's fields, in its __init__'s order
    return names


def _enc(v):
    t = type(v)
    if t is str or t is int or t is bool or v is None or t is float:
        return v
    if t is list:
        return [_enc(x) for x in v]
    if t is tuple:
        return {"t": [_enc(x) for x in v]}
    if t is dict:
        if all(type(k) is str for k in v):
            return {"d": {k: _enc(x) for k, x in v.items()}}
        return {"k": [[_enc(k), _enc(x)] for k, x in v.items()]}
    if t is set or t is frozenset:
        return {"s" if t is set else "f": [_enc(x) for x in v]}
    if isinstance(v, Choice) and _ENUMS.get(t.__name__) is t:
        return {"e": t.__name__, "v": v.value}
    if _CLASSES.get(t.__name__) is t:
        return {"c": t.__name__, "v": [_enc(getattr(v, n)) for n in _fields(t)]}
    raise TypeError(f"{t.__qualname__} cannot be stored in the cache")


def _dec(v):
    if type(v) is list:
        return [_dec(x) for x in v]
    if type(v) is not dict:
        return v
    if len(v) == 1:
        (tag, body), = v.items()
        if tag == "t":
            return tuple(_dec(x) for x in body)
        if tag == "d":
            return {k: _dec(x) for k, x in body.items()}
        if tag == "k":
            return {_dec(k): _dec(x) for k, x in body}
        if tag == "s":
            return {_dec(x) for x in body}
        if tag == "f":
            return frozenset(_dec(x) for x in body)
    elif len(v) == 2 and "v" in v:
        if "e" in v:
            return _ENUMS[v["e"]](v["v"])
        if "c" in v:
            cls = _CLASSES[v["c"]]
            names = _fields(cls)
            values = v["v"]
            if type(values) is not list or len(values) != len(names):
                raise ValueError(f"wrong shape for {v['c']}")
            return cls(**{n: _dec(x) for n, x in zip(names, values)})
    raise ValueError("not a tagged value")


def dumps(value) -> bytes:
    return jsonc.dumps(_enc(value)).encode("ascii")


def loads(blob: bytes):
    """Raises on anything that is not what `dumps` writes (ValueError, KeyError, TypeError,
    RecursionError): the caller treats every exception as "no cache"."""
    return _dec(jsonc.loads(blob.decode("utf-8")))
