"""`# noqa` suppression, decided in one place (engine.analyze)."""

from __future__ import annotations

from aoti_lsp import lazyre

# `re` is imported where a line holds a noqa comment: a check of a file without one needs none.
# `# noqa` alone suppresses everything on the line; `# noqa: AOTI001, AOTI002` only those.
NOQA = lazyre.compile(
    rb"""(?ix)                             # any case, verbose
    \#\s*noqa                              # the marker, any case
    (?::\s*(?P<codes>                      # optional ': CODE[, CODE...]'
        [A-Z][A-Z0-9]*                     # the first code, digits or not: `noqa: NOPE` is a
                                           # typo to warn about, never a blanket noqa
        (?:\s*,\s*[A-Z][A-Z0-9]*            # more codes after commas
          |\s+[A-Z]+[0-9]+\b)*              # or spaces (then digits: `noqa: AOTI001 why` is a reason)
    ))?
    """
)


def noqa_codes(line: bytes) -> set[str] | None:
    """None: no noqa comment; empty set: blanket noqa; else the listed codes."""
    m = NOQA.search(line)
    if m is None:
        return None
    codes = m.group("codes")
    if codes is None:
        return set()
    import re

    return {c.decode().upper() for c in re.split(rb"[\s,]+", codes) if c}


def unknown_noqa(source) -> list[tuple[str, int]]:
    """(code, 1-based row) of each code in a noqa comment that names no rule and is ours or no
    linter's code: `AOTI1O2`, `NOPE`. Other linters' codes (`E501`) share these comments."""
    from aoti_lsp.project.triggers import CODES  # the rules' codes, none of them imported (a test keeps it true)

    if b"noqa" not in source.data.lower():
        return []
    known = set(CODES)
    out = []
    for row, raw in enumerate(source.data.split(b"\n")):
        if b"noqa" not in raw.lower():
            continue
        m = NOQA.search(raw)
        if m is None or m.group("codes") is None:
            continue
        bad = [c for c in (noqa_codes(raw) or ()) if c not in known and looks_ours(c)]
        if not bad:
            continue
        at = source.lines.starts[row] + m.start()
        node = source.tree.root_node.descendant_for_byte_range(at, at + 1)
        if node is not None and node.type == "comment":  # not text inside a string
            out += [(c, row + 1) for c in sorted(bad)]
    return out


def looks_ours(code: str) -> bool:
    """An AOTI-looking code (`AOTI1O2`, `AOIT001`, `AOT101`): a typo of ours to warn about.
    Anything else (`E501`, `RUF`, `PLR2004`) belongs to another linter sharing the comment."""
    import re

    letters = re.match(r"[A-Z]*", code).group()
    return letters.startswith("AOTI") or _near("AOTI", letters)


def _near(a: str, b: str) -> bool:
    """Within one edit (a letter added, dropped, changed, or two swapped)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return a == b
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


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
    import re

    listed = [c.decode() for c in re.split(rb"[\s,]+", codes) if c]
    if code in listed:
        return line
    new = f"# noqa: {', '.join([*listed, code])}".encode()
    return (raw[: m.start()] + new + raw[m.end():]).decode()
