"""The first analysis of a large file the server opens: its relevant statements alone.

Parsing a 20k-line file costs tree-sitter ~0.1-0.2 s, about as much as analysing it, and the
findings come from a fraction of it: the statements that spell a rule's trigger token, every
other module-level statement, and, transitively, the functions and classes linked to those by
module-level names (incremental.py's relevant chunks). Here the statements are found from the
text alone (statements.py) and the links are judged on the safe side: a function reads every
name its text spells except its parameters and plain local assignments, a simple module-level
statement binds every name left of its `=` (or its imports' names), a compound one every name
it spells (statements.py). Only the statements kept are parsed and
analysed, as a compact text where they stand (lines and columns kept, offsets mapped back, as
slice.py does), with every token gate decided on the whole text.

A kept statement that need not be costs time, never a finding; tests/test_outline.py checks
that the findings equal a full analysis's on every test input, the bench file and torch's own
files. The result stands in until typing pauses (the server reads the whole file then anyway,
for the next keystroke) and is then replaced by a full analysis. None where the text does not
split cleanly, where a rule reads the whole file (AOTI301), or where most of it would be kept.
"""

from __future__ import annotations

from bisect import bisect_right

from aoti_lsp.analysis import incremental, statements
from aoti_lsp.analysis.engine import Result, analyze
from aoti_lsp.analysis.findings import Finding
from aoti_lsp.rules import all_rules, minimal
from aoti_lsp.analysis.slice import AMBIENT, _Map
from aoti_lsp.analysis.source import Source

WORD = incremental.WORD

MIN_BYTES = 64 * 1024  # below this the whole parse costs ~10 ms: not worth a second path
MAX_KEPT = 0.6  # of the text: past that, parsing the whole file costs about the same
FILE_WIDE = ("AOTI301",)  # reads imports and CUDA uses wherever they stand (slice.py refuses it too)
# names bound where this reading cannot see them: such a statement is always kept (as incremental.py)
HIDDEN = (b"import *", b"globals()", b"exec(", b"setattr(", b"__dict__")


class _Outline(Source):
    """The compact text; `has` answers for the whole text (the rules' gates as a full analysis
    decides them)."""

    def __init__(self, data: bytes, path: str, whole: Source):
        super().__init__(data, path)
        self.whole = whole

    def has(self, token: str) -> bool:
        return self.whole.has(token)


def first_result(source: Source, config, project=None, min_bytes: int = MIN_BYTES) -> Result | None:
    """The findings of `source` from its relevant statements (a `partial` result: its lazy fixes
    are built from a full analysis), or None."""
    data = source.data
    if len(data) < min_bytes or b"\r" in data:
        return None
    if any(r.code in FILE_WIDE and config.enabled(r.code, source.path) and r.wants(source, config) for r in all_rules()):
        return None
    layout = statements.read(data)
    if layout is None or not layout.starts:
        return None
    kept = _kept(layout, config)
    ends = layout.starts[1:] + [len(data)]
    if sum(ends[i] - layout.starts[i] for i in kept) > MAX_KEPT * len(data):
        return None
    # the compact text: what comes before the first statement (comments), then each kept
    # statement where it stands, only the line breaks of the others
    parts, segments, at, size = [], [], 0, 0
    spans = [(0, layout.starts[0])] + [(layout.starts[i], ends[i]) for i in kept]
    for start, end in spans:
        gap = b"\n" * data.count(b"\n", at, start)
        parts += [gap, data[start:end]]
        size += len(gap)
        segments.append((size, start, end - start))
        size += end - start
        at = end
    parts.append(b"\n" * data.count(b"\n", at))
    compact = _Outline(b"".join(parts), source.path, source)
    root = compact.tree.root_node
    if root.has_error or not _aligned(root, segments):
        return None
    part = analyze(compact, config, project=project)
    if part.errors or part.skipped:
        return None
    to_real = _Map(segments)
    findings = []
    for f in part.findings:
        g = to_real.finding(f)
        if g is None:
            return None
        findings.append(g)
    findings.sort(key=Finding.sort_key)
    result = Result(findings, [], None)
    result.partial = True  # lazy fixes planned on the compact text: built from a full analysis
    result.outlined = True
    return result


def _aligned(root, segments) -> bool:
    """Each statement of the compact text lies inside one kept statement's text."""
    starts = [c for c, _, _ in segments]
    for child in root.children:
        k = bisect_right(starts, child.start_byte) - 1
        if k < 0 or child.end_byte > starts[k] + segments[k][2]:
            return False
    return True


def _kept(layout: statements.Layout, config) -> list[int]:
    """Indices of the statements to analyse: the relevant ones (incremental.py), and some more.
    Names are bytes here (no decoding: this runs before the first diagnostics)."""
    data, starts = layout.data, layout.starts
    n = len(starts)
    ends = starts[1:] + [len(data)]
    defs = [statements.definition(layout, starts[i], ends[i]) for i in range(n)]
    keep = [d is None for d in defs]  # every module-level statement: it may bind a constant
    by_name: dict[bytes, list[int]] = {}
    for i, d in enumerate(defs):
        if d is not None:
            by_name.setdefault(d[0].encode(), []).append(i)
    for token in minimal((*incremental.anchor_tokens(config), *AMBIENT, *HIDDEN)):  # "lengths" covers "seq_lengths"
        at = data.find(token)
        while at != -1:
            i = bisect_right(starts, at) - 1
            if i >= 0:
                keep[i] = True
                at = data.find(token, ends[i])
            else:
                at = data.find(token, at + 1)

    def reads(i: int) -> set[bytes]:  # a kept statement's: every name it spells (the safe side)
        return set(WORD.findall(data, starts[i], ends[i]))

    candidates: dict[int, set[bytes]] = {}

    def may_read(j: int, name: bytes) -> bool:  # a candidate's reads: less its sure locals
        found = candidates.get(j)
        if found is None:
            found = candidates[j] = _reads(layout, starts[j], ends[j], defs[j])
        return name in found

    def binds(i: int) -> set[bytes]:
        if defs[i] is not None:
            out = {defs[i][0].encode()}
        else:
            found = statements.module_binds(layout, starts[i], ends[i])
            out = {w.encode() for w in found} if found is not None else reads(i)
        for m in incremental.GLOBAL.finditer(data, starts[i], ends[i]):
            out.update(w.strip() for w in m.group(1).split(b",") if w.strip())
        return out

    # where a name is spelt outside the kept statements (the statements that may be pulled),
    # found with one scan per shared prefix: the kept ones spell the kept names thousands of times
    rest = [i for i in range(n) if not keep[i]]
    rest_at, size = [], 0
    for i in rest:
        rest_at.append(size)
        size += ends[i] - starts[i] + 1
    scan = Source(b"\n".join(data[starts[i]:ends[i]] for i in rest))
    read: set[bytes] = set()
    bound: set[bytes] = set()
    new_reads: set[bytes] = set()
    new_binds: set[bytes] = set()
    for i in range(n):
        if keep[i]:
            new_reads |= reads(i)
            new_binds |= binds(i)
    while new_reads or new_binds:
        read |= new_reads
        bound |= new_binds
        pulled: set[int] = set()
        for name in new_reads:  # a function or class a kept statement reads
            pulled.update(j for j in by_name.get(name, ()) if not keep[j])
        names = {w.decode("utf-8", "replace"): w for w in new_binds}
        scan.find_words(names)
        for text, name in names.items():  # a statement that reads a name a kept one binds
            for at in scan.word_occurrences(text):
                j = rest[bisect_right(rest_at, at) - 1]
                if not keep[j] and j not in pulled and may_read(j, name):
                    pulled.add(j)
        new_reads, new_binds = set(), set()
        for j in pulled:
            keep[j] = True
            new_reads |= reads(j) - read
            new_binds |= binds(j) - bound
    return [i for i in range(n) if keep[i]]


def _reads(layout: statements.Layout, start: int, end: int, definition) -> set[bytes]:
    """Names a statement may read at module level: every name it spells (in strings too: an
    f-string reads), less a function's surely local ones in its body. A name of its header
    (decorators, defaults, annotations) is kept unless it only names a parameter."""
    data = layout.data
    scope = statements.function_scope(layout, start, end) if definition is not None and definition[1] else None
    if scope is None:
        return set(WORD.findall(data, start, end))
    colon, params, local = scope
    counts: dict[bytes, int] = {}
    for w in WORD.findall(data, start, colon):
        counts[w] = counts.get(w, 0) + 1
    header = {w for w, c in counts.items() if not (c == 1 and w in params)}
    return header | (set(WORD.findall(data, colon, end)) - params - {w.encode() for w in local})
