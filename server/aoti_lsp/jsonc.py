"""Plain JSON through json's own C encoder and scanner (what json.dumps and json.loads run for
plain data), made without the json package: it imports `re`, and with it enum (~7 ms of a
~20 ms pre-commit run on a file without AOTI code, which reads and writes the cache; issue 25).
The json package where the C accelerator is missing."""

from __future__ import annotations

_CODEC: list = []
_BLANK = " \t\n\r"  # JSON's whitespace


def dumps(value) -> str:
    """json.dumps(value, separators=(",", ":")): ASCII, no NaN check; TypeError for what is not JSON."""
    encode = _codec()[0]
    if encode is None:
        import json

        return json.dumps(value, separators=(",", ":"))
    return "".join(encode(value, 0))


def loads(text: str):
    """json.loads(text) for a str; ValueError for what is not one JSON value."""
    scan = _codec()[1]
    if scan is None:
        import json

        return json.loads(text)
    try:
        value, end = scan(text, len(text) - len(text.lstrip(_BLANK)))
    except StopIteration as exc:
        raise ValueError(f"not JSON at {exc.value}") from None
    if text[end:].strip(_BLANK):
        raise ValueError(f"extra data at {end}")
    return value


def _codec() -> tuple:
    if not _CODEC:
        try:
            import _json
        except ImportError:
            _CODEC.append((None, None))
        else:
            _CODEC.append((_json.make_encoder(None, _not_plain, _json.encode_basestring_ascii, None, ":", ",",
                                              False, False, True), _json.make_scanner(_Reading())))
    return _CODEC[0]


def _not_plain(value):
    raise TypeError(f"{type(value).__qualname__} is not JSON")


class _Reading:
    """json.JSONDecoder()'s settings, as its C scanner reads them."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__
