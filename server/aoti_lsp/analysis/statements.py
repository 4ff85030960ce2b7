"""A file's top-level statements and its functions' plain locals, read from the text alone.

Python's own layout rules, no parse: strings and comments are masked (a string keeps its first
byte, so one at a line's start still starts a statement), a line joined by a backslash or
inside brackets continues the statement before it, `else` / `elif` / `except` / `finally`
continue a compound statement, and a decorator's statement is the definition it decorates.
~10 ms for 500 KB, a tenth of tree-sitter's parse; tests/test_outline.py checks the starts
against tree-sitter's top-level statements. What outline.py builds on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aoti_lsp.analysis.incremental import WORD  # a name, not an attribute's

# strings (escapes also keep a raw string's closing quote out), comments, backslash line joins;
# string prefixes need no matching: a prefix letter is a plain byte before the quote
_MASKED = re.compile(
    rb'"""(?:[^"\\]+|\\.|"(?!""))*"""'
    rb"|'''(?:[^'\\]+|\\.|'(?!''))*'''"
    rb'|"(?:[^"\\\n]+|\\.)*"'
    rb"|'(?:[^'\\\n]+|\\.)*'"
    rb"|#[^\n]*|\\\r?\n",
    re.S,
)
_BRACKETS = bytes.maketrans(b"[{]}", b"(())")  # every opener "(", every closer ")"
_LINE_START = re.compile(rb"\n(?=\S)")
_JOIN = re.compile(rb"(?:else|elif|except|finally)\b")
_NAME = rb"[A-Za-z_\x80-\xff][\w\x80-\xff]*"
_DEF = re.compile(rb"(?m)^(async[ \t]+)?(def|class)[ \t]+(" + _NAME + rb")")
_NAMES = rb"(" + _NAME + rb"(?:[ \t]*,[ \t]*" + _NAME + rb")*)"
# a line of a function body that may matter: a nested scope, a declaration, a plain target
_BODY_LINE = re.compile(
    rb"\n([ \t]*)(?:((?:async[ \t]+)?(?:def|class)\b|@)"
    rb"|(?:global|nonlocal)[ \t]+" + _NAMES +
    rb"|(?:async[ \t]+)?for[ \t]+" + _NAMES + rb"[ \t]*,?[ \t]+in\b"
    rb"|" + _NAMES + rb"[ \t]*,?[ \t]*(?:=(?!=)|(?:\+|-|\*\*?|//?|%|@|&|\||\^|>>|<<)=|:))")
_PAREN = re.compile(rb"[()]")
_NAME_RE = re.compile(_NAME)
_ASSIGN = re.compile(rb"[()=]")
_INDENTED = re.compile(rb"\n([ \t]*)(?=\S)")
_HEAD = re.compile(rb"[():]")
_KEYWORDS = frozenset(b"""False None True and as assert async await break class continue def del elif else
    except finally for from global if import in is lambda nonlocal not or pass raise return try while
    with yield match case type print exec""".split())
_KEYWORD_NAMES = frozenset(k.decode() for k in _KEYWORDS if k not in (b"match", b"case", b"type", b"print", b"exec"))


@dataclass
class Layout:
    data: bytes
    masked: bytes  # strings and comments blanked, brackets as "(" / ")": same offsets as data
    starts: list[int]  # each top-level statement's first byte (a statement runs to the next one)


def read(data: bytes) -> Layout | None:
    """The top-level statements of `data`; None when the text does not close every bracket or
    string (a broken file: only a parse says where its statements are)."""
    parts, at, strings = [], 0, 0
    for m in _MASKED.finditer(data):
        s, e = m.span()
        parts.append(data[at:s])
        quote = data[s] in b"\"'"
        strings += quote
        parts.append((data[s:s + 1] if quote else b" ") + b" " * (e - s - 1))
        at = e
    parts.append(data[at:])
    masked = b"".join(parts).translate(_BRACKETS)
    if masked.count(b'"') + masked.count(b"'") != strings:
        return None  # a quote that opens no whole string: an unterminated one (a broken file)
    candidates = [0] if masked[:1].strip() else []
    candidates += [m.start() + 1 for m in _LINE_START.finditer(masked)]
    starts: list[int] = []
    prev, depth, decorator = 0, 0, False
    for c in candidates:
        depth += masked.count(b"(", prev, c) - masked.count(b")", prev, c)
        prev = c
        if depth < 0:
            return None
        if depth:
            continue
        decorated, decorator = decorator, data[c] == 64  # "@": the definition below is this statement
        if starts and (decorated or _JOIN.match(data, c)):
            continue
        starts.append(c)
    depth += masked.count(b"(", prev) - masked.count(b")", prev)
    if depth:
        return None
    return Layout(data, masked, starts)


def definition(layout: Layout, start: int, end: int) -> tuple[str, bool] | None:
    """(name, whether a function) of a `def` / `class` statement (decorated or not)."""
    data = layout.data
    if data[start] != 64 and not data.startswith((b"def", b"class", b"async"), start):
        return None
    m = _DEF.search(layout.masked, start, end)  # masked: a decorator's string never matches
    if m is None:
        return None
    return m.group(3).decode("utf-8", "replace"), m.group(2) == b"def"


def function_scope(layout: Layout, start: int, end: int) -> tuple[int, set[bytes], frozenset[str]] | None:
    """(where a top-level function's header ends (its `:`), its parameters, the names its body
    surely binds as locals) of the `def` statement at [start, end); None if not one. The locals:
    plain targets of assignments and `for` loops in its own scope (not in nested functions or
    classes), less what it declares `global` or `nonlocal`: never a name that is not a local,
    not every one that is (the rest counts as read: the safe side)."""
    masked = layout.masked
    m = _DEF.search(masked, start, end)
    if m is None or m.group(2) != b"def":
        return None
    open_at = masked.find(b"(", m.end(), end)
    if open_at < 0:
        return None
    depth, close = 0, -1
    for b in _PAREN.finditer(masked, open_at, end):  # the parameters' closing bracket
        depth += 1 if masked[b.start()] == 40 else -1
        if depth == 0:
            close = b.start()
            break
    colon = _header_end(masked, close, end) if close > 0 else -1
    if colon < 0:
        return None
    found: set[bytes] = set()
    declared: set[bytes] = set()
    first = _INDENTED.search(masked, colon + 1, end)
    body = len(first.group(1)) if first else 0  # the body's own indentation
    nested = None  # the indentation of a nested def / class being skipped
    depth, prev = 0, colon + 1
    for line in _BODY_LINE.finditer(masked, colon + 1, end):
        scope, names = line.group(2), line.group(3) or line.group(4) or line.group(5)
        indent = len(line.group(1))
        if indent < body:  # a dedent Python rejects (tree-sitter may not): nothing is sure
            return None
        if nested is not None:
            if indent > nested:
                continue
            nested = None
        if scope:  # (a "@" inside brackets only skips more: the safe side)
            nested = indent
        elif line.group(3):  # global / nonlocal: never inside brackets
            declared.update(n.strip() for n in names.split(b","))
        elif names:  # a target: only at the statement's own level (not `f(\n    out=1)`)
            depth += masked.count(b"(", prev, line.start()) - masked.count(b")", prev, line.start())
            prev = line.start()
            if not depth:
                found.update(n.strip() for n in names.split(b","))
    local = frozenset(n.decode("utf-8", "replace") for n in found - declared - _KEYWORDS)
    return colon, _params(masked[open_at + 1:close]), local


_COMPOUND = re.compile(rb"(?:if|for|while|with|try|match|async|def|class|@)\b|@")
_IMPORT_WORD = re.compile(rb"\bimport\b")
_IMPORT = re.compile(rb"(?:from[ \t]+\S+[ \t]+)?import\b")


def module_binds(layout: Layout, start: int, end: int) -> frozenset[str] | None:
    """Names a simple module-level statement may bind (more, never fewer): the words of its
    targets (left of each `=` outside brackets), or its imports' names. None for a compound
    statement or a `:=` (the caller takes every word it spells)."""
    masked = layout.masked[start:end]
    if _COMPOUND.match(masked) or b":=" in masked:
        return None
    for line in _INDENTED.finditer(masked):  # a second line outside brackets: Python rejects it
        if masked.count(b"(", 0, line.start()) == masked.count(b")", 0, line.start()):
            return None
    if _IMPORT.match(masked):
        text = _IMPORT_WORD.split(masked, 1)[1] if masked.startswith(b"from") else masked[len(b"import"):]
        out = set()
        for item in text.replace(b"(", b" ").replace(b")", b" ").split(b","):
            words = item.split()
            if not words:
                continue
            if len(words) >= 3 and words[-2] == b"as":
                out.add(words[-1])
            elif masked.startswith(b"from"):
                out.add(words[0])
            else:
                out.add(words[0].split(b".")[0])
        return frozenset(w.decode("utf-8", "replace") for w in out)
    targets, depth, at = [], 0, 0
    for m in _ASSIGN.finditer(masked):  # "=" at the statement's own level: an assignment's
        c, i = masked[m.start()], m.start()
        if c == 40:
            depth += 1
        elif c == 41:
            depth -= 1
        elif depth == 0 and masked[i + 1:i + 2] != b"=" and masked[i - 1:i] not in (b"=", b"!", b"<", b">"):
            targets.append(masked[at:i])
            at = i + 1
    if not targets:  # `x: int`, an annotation alone
        colon = _header_end(masked, -1, len(masked))
        if colon > 0:
            targets.append(masked[:colon])
    return frozenset(w.decode("utf-8", "replace") for t in targets for w in WORD.findall(t)) - _KEYWORD_NAMES


def _header_end(masked: bytes, close: int, end: int) -> int:
    """The `:` ending a def's header (after an annotation such as `-> Dict[str, int]`)."""
    depth = 0
    for b in _HEAD.finditer(masked, close + 1, end):
        c = masked[b.start()]
        if c == 40:
            depth += 1
        elif c == 41:
            depth -= 1
        elif depth == 0:  # ":"
            return b.start()
    return -1


def _params(text: bytes) -> set[bytes]:
    """Parameter names of a parameter list (masked; brackets inside defaults and annotations
    nested deeper are skipped)."""
    out: set[bytes] = set()
    if b"lambda" in text:  # a lambda's own parameters are no locals of the function
        return out
    if b"(" not in text:  # no default or annotation with brackets: the list as it is
        parts = text.split(b",")
    else:
        parts = _top_level(text).split(b",")
    for part in parts:
        name = part.split(b"=", 1)[0].split(b":", 1)[0].strip().lstrip(b"*").strip()
        if _NAME_RE.fullmatch(name):
            out.add(name)
    return out


def _top_level(text: bytes) -> bytes:
    """`text` with what sits inside brackets blanked (masked: every bracket is "(" or ")")."""
    depth, piece = 0, bytearray()
    for c in text:  # keep only what sits at the list's own level
        if c == 40:
            depth += 1
        elif c == 41:
            depth -= 1
        elif depth == 0:
            piece.append(c)
            continue
        piece.append(32)
    return bytes(piece)
