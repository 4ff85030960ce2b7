"""A Python source buffer: bytes, its tree-sitter tree, and cheap token look-ups.

Work is bounded by where trigger tokens occur: rules query only the *chunks* (top-level
statements, or members of a top-level class) that contain one, so a keystroke far from
any AOTI code costs a reparse and a few `bytes.find` scans, whatever the file size.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from functools import cached_property, lru_cache
from collections.abc import Iterable, Iterator

from aoti_lsp import lazyre
from aoti_lsp.analysis import grammar
from aoti_lsp.analysis.positions import LineIndex
from aoti_lsp.analysis.treesitter import Language, Node, Parser, Query, QueryCursor, Tree

LANGUAGE = Language(grammar.language())
_queries: dict[str, Query] = {}


def parser() -> Parser:
    return Parser(LANGUAGE)


def absolute(path: str) -> str:
    """os.path.abspath, memoised (per working folder for a relative path): a migration plan,
    the facts and the text report ask it of the same few files once per site (~28k calls,
    ~0.1 s of a 4,000-finding file's --check)."""
    if os.path.isabs(path):
        return _absolute(path, "")
    return _absolute(path, os.getcwd())


@lru_cache(maxsize=4096)
def _absolute(path: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, path) if cwd else path)


_LONE_CR = lazyre.compile(rb"\r(?!\n)")  # a file with a lone "\r" is rare


def parse_text(data: bytes) -> bytes:
    """What tree-sitter parses: `data` with each lone "\\r" as "\\n". Python ends a line there too
    and tree-sitter would not; same length, so every byte offset still points into `data`."""
    return _LONE_CR.sub(b"\n", data) if b"\r" in data else data


def query(name: str) -> Query:
    """A compiled query from queries/python/<name>.scm (compiled once per process)."""
    if name not in _queries:
        from importlib import resources  # here: ~6 ms of a run's start, and most runs query nothing

        text = resources.files("aoti_lsp.queries").joinpath("python", f"{name}.scm").read_text("utf-8")
        _queries[name] = Query(LANGUAGE, text)
    return _queries[name]


def statement_of(node: Node) -> Node:
    """The statement holding `node`: its ancestor that stands in a block or the module."""
    while node.parent is not None and node.parent.type not in ("block", "module"):
        node = node.parent
    return node


def descendants(node: Node, type_: str | None = None, skip: tuple[str, ...] = ()):
    """`node` and the nodes below it (of `type_`, when given); a node of a `skip` type is
    yielded but not entered."""
    stack = [node]
    while stack:
        n = stack.pop()
        if type_ is None or n.type == type_:
            yield n
        if n.type not in skip:
            stack.extend(n.children)


SCANS = [0]  # passes over the whole text (bytes.find loops, find_words), for the test that they stay flat
# [A-Za-z0-9_] by byte: names are found without `re`, which costs ~5 ms to import (treesitter.py)
NAME_BYTE = [chr(b).isalnum() and b < 0x80 or b == 0x5F for b in range(256)]


def whole_words(text: bytes, words: Iterable[bytes]) -> Iterator[tuple[int, int, bytes]]:
    """(start, end, word) of each of `words` spelt in `text` as a whole word (no name byte
    beside it, as a bytes regex's word boundary), word by word."""
    for word in words:
        at = text.find(word)
        while at != -1:
            end = at + len(word)
            if not (at and NAME_BYTE[text[at - 1]]) and not (end < len(text) and NAME_BYTE[text[end]]):
                yield at, end, word
            at = text.find(word, end)


class SourceError(Exception):
    """A file that cannot be analysed (binary, not UTF-8); the message says why."""


def decode_check(data: bytes) -> None:
    if b"\x00" in data[:8192]:
        raise SourceError("binary file (contains NUL bytes), skipped")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(f"not valid UTF-8 at byte {exc.start}, skipped") from None


class Source:
    """Immutable view of one version of a file. The server builds a new one per edit,
    handing over the incrementally reparsed tree."""

    def __init__(self, data: bytes, path: str = "<string>", tree: Tree | None = None, tree_from=None):
        self.data = data
        self.path = path
        self._tree = tree
        self._tree_from = tree_from  # where the tree comes from when asked (an editor document)
        self.context = None  # the engine's Context of the last summary or check, reused by the next
        self._occurrences: dict[str, list[int]] = {}
        self._has: dict[str, bool] = {}

    @classmethod
    def from_text(cls, text: str, path: str = "<string>") -> "Source":
        return cls(text.encode("utf-8"), path)

    @property
    def tree(self) -> Tree:
        if self._tree is None:
            self._tree = self._tree_from() if self._tree_from is not None else None
            if self._tree is None:
                self._tree = parser().parse(parse_text(self.data))
        return self._tree

    @property
    def parsed(self) -> bool:
        return self._tree is not None

    @cached_property
    def lines(self) -> LineIndex:
        return LineIndex(self.data)

    @cached_property
    def abspath(self) -> str:
        """absolute(path), once per version: a migration plan asks it of its members per site."""
        return absolute(self.path)

    def node_text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8")

    def has(self, token: str) -> bool:
        """Whether `token` is in the text; cached, as every rule asks about its triggers."""
        found = self._has.get(token)
        if found is None:
            found = self._has[token] = token.encode() in self.data
        return found

    def knows(self, seen: dict[bytes, bool]) -> None:
        """Answers of `has` already found by a scan of the same bytes (runner.passes)."""
        for token, found in seen.items():
            self._has.setdefault(token.decode(), found)

    @cached_property
    def _words(self) -> dict[str, list[int]]:
        """word -> where it stands as a whole name (a dot before it allowed)."""
        return {}

    @cached_property
    def _identifiers(self) -> dict[str, list[Node]]:
        return {}

    def word_occurrences(self, word: str, after_dot: bool = False) -> Iterator[int]:
        """Offsets where `word` stands as a whole name (not inside a longer one; after a dot only
        if `after_dot`). bytes.find plus a look at the neighbours: ~10x faster than a \\b regex."""
        found = self._words.get(word)
        if found is None:
            found = []
            for at in self.occurrences(word):
                before = self.data[at - 1 : at] if at else b""
                after = self.data[at + len(word) : at + len(word) + 1]
                if before.isalnum() or before == b"_" or after.isalnum() or after == b"_":
                    continue
                found.append(at)
            self._words[word] = found  # stored whole (a cut analysis leaves no partial entry)
        if after_dot:
            return iter(found)
        return (at for at in found if not at or self.data[at - 1 : at] != b".")

    def find_words(self, words: Iterable[str]) -> None:
        """Where each of many names stands (word_occurrences), found with one scan per prefix they
        share (`RUNNER_` for RUNNER_1 ... RUNNER_900), not one scan of the whole text per name: a
        file with twice the sites has twice the names and twice the text (quadratic)."""
        groups: dict[str, list[str]] = {}
        for w in words:
            if w not in self._words and w.isascii() and w.isidentifier():
                groups.setdefault(w[:3], []).append(w)
        data = self.data
        for group in groups.values():
            found: dict[str, list[int]] = {w: [] for w in group}
            spelt = {w.encode(): hits for w, hits in found.items()}
            lengths = sorted({len(w) for w in spelt})
            prefix = os.path.commonprefix(group).encode()
            SCANS[0] += 1
            at = data.find(prefix)
            while at != -1:
                before = data[at - 1 : at] if at else b""
                if not (before.isalnum() or before == b"_"):  # the whole name: a maximal run of name bytes
                    for n in lengths:
                        hit = spelt.get(data[at:at + n])
                        if hit is not None and not (at + n < len(data) and NAME_BYTE[data[at + n]]):
                            hit.append(at)
                            break
                at = data.find(prefix, at + len(prefix))
            self._words.update(found)

    def identifiers(self, word: str) -> Iterator[Node]:
        """Identifier nodes spelling `word` (strings and comments never yield one)."""
        found = self._identifiers.get(word)
        if found is None:
            found = []
            root, needle = self.tree.root_node, word.encode()
            for at in self.word_occurrences(word, after_dot=True):
                node = root.descendant_for_byte_range(at, at + len(needle))
                if node is not None and node.type == "identifier" and node.start_byte == at \
                        and node.end_byte == at + len(needle):
                    found.append(node)
            self._identifiers[word] = found
        return iter(found)

    def occurrences(self, token: str) -> list[int]:
        """Offsets of `token` in the text; cached, since several rules ask for the same ones."""
        found = self._occurrences.get(token)
        if found is None:
            SCANS[0] += 1
            found, needle = [], token.encode()
            at = self.data.find(needle)
            while at != -1:
                found.append(at)
                at = self.data.find(needle, at + len(needle))
            self._occurrences[token] = found
        return found

    # -- chunks ------------------------------------------------------------------------
    @cached_property
    def _chunks(self) -> list[tuple[int, int, Node]]:
        """(start, end, node) per chunk, sorted; a top-level class is split into its header
        and its members, so that editing one method never re-queries the whole class."""
        chunks: list[tuple[int, int, Node]] = []
        for child in self.tree.root_node.named_children:
            inner = child.child_by_field_name("definition") if child.type == "decorated_definition" else child
            body = inner.child_by_field_name("body") if inner is not None and inner.type == "class_definition" else None
            if body is not None and body.named_child_count:
                chunks.append((child.start_byte, body.start_byte, child))
                chunks.extend((m.start_byte, m.end_byte, m) for m in body.named_children)
            else:
                chunks.append((child.start_byte, child.end_byte, child))
        return chunks

    @cached_property
    def _chunk_starts(self) -> list[int]:
        return [c[0] for c in self._chunks]

    def chunk_at(self, offset: int) -> tuple[int, int, Node] | None:
        i = bisect_right(self._chunk_starts, offset) - 1
        if i >= 0 and offset < self._chunks[i][1]:
            return self._chunks[i]
        return None

    def chunks_with(self, tokens: Iterable[str]) -> list[tuple[int, int, Node]]:
        """Chunks holding any of `tokens`, in file order, each once."""
        seen: dict[int, tuple[int, int, Node]] = {}
        for token in tokens:
            for at in self.occurrences(token):
                chunk = self.chunk_at(at)
                if chunk is not None:
                    seen.setdefault(chunk[0], chunk)
        return [seen[k] for k in sorted(seen)]

    def matches(self, query_name: str, tokens: Iterable[str]) -> Iterator[tuple[int, dict[str, list[Node]]]]:
        """Matches of a query, searched only in the chunks that contain one of `tokens`."""
        q = query(query_name)
        for start, end, node in self.chunks_with(tokens):
            cursor = QueryCursor(q)
            cursor.set_byte_range(start, end)
            yield from cursor.matches(node)
