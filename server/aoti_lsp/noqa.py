"""`# noqa` suppression, decided in one place (engine.analyze)."""

from __future__ import annotations

import re

# `# noqa` alone suppresses everything on the line; `# noqa: AOTI001, AOTI002` only those.
NOQA = re.compile(
    rb"""
    \#\s*noqa                              # the marker, any case
    (?::\s*(?P<codes>                      # optional ': CODE[, CODE...]'
        [A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*
    ))?
    """,
    re.IGNORECASE | re.VERBOSE,
)


def noqa_codes(line: bytes) -> set[str] | None:
    """None: no noqa comment; empty set: blanket noqa; else the listed codes."""
    m = NOQA.search(line)
    if m is None:
        return None
    codes = m.group("codes")
    if codes is None:
        return set()
    return {c.decode().upper() for c in re.split(rb"[\s,]+", codes) if c}


def is_suppressed(line: bytes, code: str) -> bool:
    codes = noqa_codes(line)
    return codes is not None and (not codes or code in codes)


def add_code(line: str, code: str) -> str:
    """The line with `code` added to its noqa comment (or a new `  # noqa: CODE`)."""
    m = NOQA.search(line.encode())
    if m is None:
        return f"{line.rstrip()}  # noqa: {code}"
    raw = line.encode()
    codes = m.group("codes")
    if codes is None:
        return line  # blanket noqa already covers it
    listed = [c.decode() for c in re.split(rb"[\s,]+", codes) if c]
    if code in listed:
        return line
    new = f"# noqa: {', '.join([*listed, code])}".encode()
    return (raw[: m.start()] + new + raw[m.end():]).decode()
