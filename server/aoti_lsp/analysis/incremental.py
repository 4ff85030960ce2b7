"""A keystroke in code no rule can see keeps the last analysis instead of redoing it.

A file is cut into its top-level statements (chunks). Findings and the file's summary come from
the *relevant* chunks: those that spell a rule's trigger token (`aot_load`, `def forward`,
`lengths`, ...), module-level statements that bind a name by assignment or import (constants
other modules read), and, transitively, every chunk that binds a name a relevant chunk spells
(a helper a forward calls, a class an export names). An edit confined to one chunk that is
irrelevant before and after, and binds no name a relevant chunk spells, cannot change a finding
nor the summary's content: the last ones are kept, their offsets shifted by the edit's length.
Any other edit gets a full analysis. tests/test_incremental.py checks, edit by random edit, that
this equals a full analysis.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, bisect_right

from aoti_lsp.analysis.findings import Edit, Fix, LazyFix, Related
from aoti_lsp.analysis.records import record, replace, set_field
from aoti_lsp.analysis.names import Scope, _read_statement, read_scope
from aoti_lsp.analysis.source import parser
from aoti_lsp.analysis.treesitter import Node

# a name a statement may read: not an attribute (`self.mean` reads no module name `mean`);
# non-ASCII bytes belong to names (`café`), as the tree's bindings spell them
WORD = re.compile(rb"(?<![.A-Za-z0-9_\x80-\xff])[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*")
GLOBAL = re.compile(rb"\bglobal\s+([A-Za-z_\x80-\xff][\w\x80-\xff \t,]*)")
DEFS = ("function_definition", "class_definition", "decorated_definition")
# AOTI202's triggers are any shape test (`len(`, `numel`): they matter only inside a forward
# or a function such a chunk calls, which the relevance closure reaches through names
GENERIC = frozenset({"numel", "shape[0]", "size(0)", "len(", "_check", "cond("})


# records (records.py), not dataclasses: the server imports this module at its start
@record("binds", "reads", "root", "sound", "guessed", frozen=True)
class Info:
    """What a top-level statement means to the relevance closure (position-free: cached by text)."""

    def __init__(self, binds: frozenset[str], reads: frozenset[str], root: bool, sound: bool = True,
                 guessed: bool = False):
        set_field(self, "binds", binds)  # module-level names the statement binds (also under `global`)
        set_field(self, "reads", reads)  # names it spells that may be module-level (a function's own locals left out)
        set_field(self, "root", root)  # relevant by itself: a trigger token, a module-level assignment or import
        # parsed without error, starting a line: its neighbours parse as they would alone
        set_field(self, "sound", sound)
        set_field(self, "guessed", guessed)  # a broken edit's statements, read from their own parse (State.provisional)


@record("data", "starts", "ends", "infos", "relevant", "reads", "binds", "tokens", "provisional")
class State:
    """What an analysis of one text leaves for the next keystroke: its chunks as parallel
    lists, so that moving them past an edit is a list of ints, not thousands of objects."""

    def __init__(self, data: bytes, starts: list[int], ends: list[int], infos: list[Info], relevant: list[bool],
                 reads: frozenset[str], binds: frozenset[str], tokens: tuple[bytes, ...], provisional: bool = False):
        self.data, self.starts, self.ends, self.infos, self.relevant = data, starts, ends, infos, relevant
        self.reads = reads  # every name the relevant chunks read
        self.binds = binds  # every name the relevant chunks bind
        self.tokens = tokens
        # an edit left a syntax error that was judged from its own statements' parse, not the
        # file's: tree-sitter's recovery may reach further. verify() settles it with the file's tree
        self.provisional = provisional


def anchor_tokens(config) -> tuple[bytes, ...]:
    from aoti_lsp.rules import all_rules

    out: set[str] = set()
    for rule in all_rules():
        out.update(rule.triggers_for(config))
        out.update(rule.requires_any)
        out.update(rule.summary_triggers or ())
    return tuple(sorted(t.encode() for t in out - GENERIC if t))


_INFO: dict[tuple, Info] = {}  # a statement's text -> its Info
_WORDS: dict[bytes, frozenset[str]] = {}
MEMO_MAX = 50_000  # entries per memo; past it the older half goes (texts of statements long gone)


def trimmed(memo: dict) -> None:
    """The older half of a memo dropped (insertion order): the recent texts, likely still in
    use, stay; the memo never grows past MEMO_MAX."""
    if len(memo) > MEMO_MAX:
        for key in list(itertools.islice(memo, len(memo) // 2)):
            del memo[key]


def forget_texts() -> None:
    """Every memo of statement texts dropped (the server, once no document is open)."""
    _INFO.clear()
    _WORDS.clear()


def info_of(data: bytes, node: Node, tokens: tuple[bytes, ...]) -> Info:
    text = data[node.start_byte:node.end_byte]
    key = (text, tokens, node.start_point.column == 0, node.has_error)
    info = _INFO.get(key)
    if info is None:
        trimmed(_INFO)
        info = _INFO[key] = _info(text, node, tokens)
    return info


def words_of(text: bytes) -> frozenset[str]:
    found = _WORDS.get(text)
    if found is None:
        trimmed(_WORDS)
        found = _WORDS[text] = frozenset(w.decode("utf-8", "replace") for w in WORD.findall(text))
    return found


def _info(text: bytes, node: Node, tokens: tuple[bytes, ...]) -> Info:
    binds: set[str] = set()
    reads = set(words_of(text))
    inner = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
    if inner is not None and inner.type in DEFS:
        name = inner.child_by_field_name("name")
        if name is not None:
            binds.add(name.text.decode())
        root = False
        if inner.type == "function_definition":
            # its own locals are not module names (a nested function's are kept: the safe side)
            scope = read_scope(inner, None)
            reads -= set(scope.bindings) - scope.globals
    else:
        scope = Scope(node, "module", None)
        _read_statement(node, scope)
        binds.update(scope.bindings)
        # names bound at module level by an assignment or import: constants other files read
        root = bool(binds) or node.type in ("import_statement", "import_from_statement")
    for m in GLOBAL.finditer(text):
        binds.update(n.strip() for n in m.group(1).decode("utf-8", "replace").split(",") if n.strip())
    if b"import *" in text or b"globals()" in text or b"exec(" in text:
        root = True  # names bound where this analysis cannot see
    sound = not node.has_error and node.type != "ERROR" and node.start_point.column == 0
    return Info(frozenset(binds), frozenset(reads), root or any(t in text for t in tokens), sound)


_LAST_STATE: list = [None]  # the last State built: the summary's and the result's trackers share it


def state_of(source, config, fresh: bool = False) -> State:
    """The chunks of `source` and which are relevant: the roots, then every chunk that binds a
    name a relevant chunk reads (a helper, a class, a constant) or reads a name a relevant chunk
    binds (the call of a runner, a use of a path), until nothing changes."""
    data, tokens = source.data, anchor_tokens(config)
    last = _LAST_STATE[0]
    if not fresh and last is not None and last.tokens == tokens and (last.data is data or last.data == data):
        return last  # never changed in place: reusable() makes a new State
    children = source.tree.root_node.named_children
    starts = [c.start_byte for c in children]
    ends = [c.end_byte for c in children]
    infos = [info_of(data, c, tokens) for c in children]
    _LAST_STATE[0] = state = state_from(data, starts, ends, infos, tokens)
    return state


def spliced(last: State | None, data: bytes, starts: list[int], ends: list[int], infos: list[Info],
            edited: tuple[int, int], old: bytes, tokens) -> State:
    """The State of `data`, whose chunks `edited` (as many as before) replaced `last`'s (of the
    text `old`): the last closure grown by what they read and bind now (~0.5 ms, not 5 for the
    whole closure). It may keep a chunk relevant that no longer is: the safe side (a keystroke
    there gets an analysis it could have skipped)."""
    if last is None or last.tokens != tokens or len(last.starts) != len(starts) or not (last.data is old or last.data == old):
        return state_from(data, starts, ends, infos, tokens)
    p, q = edited
    relevant = list(last.relevant)
    reads, binds = set(last.reads), set(last.binds)
    for i in range(p, q):
        relevant[i] = True
        reads |= infos[i].reads
        binds |= infos[i].binds
    if len(reads) != len(last.reads) or len(binds) != len(last.binds):
        _grow(infos, relevant, reads, binds)
    return State(data, starts, ends, infos, relevant, frozenset(reads), frozenset(binds), tokens)


def _grow(infos: list[Info], relevant: list[bool], reads: set[str], binds: set[str]) -> None:
    grew = True
    while grew:  # a pass per link in the longest chain (a few): set tests in C, no name index
        grew = False
        for i, info in enumerate(infos):
            if not relevant[i] and (not info.binds.isdisjoint(reads) or not info.reads.isdisjoint(binds)):
                relevant[i] = grew = True
                reads |= info.reads
                binds |= info.binds


def state_from(data: bytes, starts: list[int], ends: list[int], infos: list[Info], tokens) -> State:
    """The State of chunks already read (slice.py keeps them): their relevance closure."""
    relevant = [info.root for info in infos]
    reads: set[str] = set()
    binds: set[str] = set()
    for info, r in zip(infos, relevant):
        if r:
            reads |= info.reads
            binds |= info.binds
    _grow(infos, relevant, reads, binds)
    return State(data, starts, ends, infos, relevant, frozenset(reads), frozenset(binds), tokens)


@record("start", "old_end", "delta", "lines", "kept", "moved", frozen=True)
class Shift:
    """An edit of the text at [start, old_end) that changes nothing a rule sees: offsets at or
    after old_end move by delta."""

    def __init__(self, start: int, old_end: int, delta: int, lines: int = 0, kept: int = -1, moved: int = 1 << 62):
        set_field(self, "start", start)
        set_field(self, "old_end", old_end)
        set_field(self, "delta", delta)
        set_field(self, "lines", lines)  # lines added (or removed, < 0) by the edit
        # (0-based, in the old text) lines up to `kept` keep their number, lines from `moved` on
        # move by `lines`; those between are the edit's own (shift_of)
        set_field(self, "kept", kept)
        set_field(self, "moved", moved)

    def at(self, offset: int) -> int:
        return offset + self.delta if offset >= self.old_end else offset


def shift_of(old: bytes, new: bytes, start: int, old_end: int, new_end: int) -> Shift:
    """The Shift of the edit old[start:old_end] -> new[start:new_end], with the lines it keeps
    and moves: a line whose text after `start` is blank keeps its number (Enter at a line's
    end), and so does every line before; every line after the one `old_end` is on moves (and
    that one too when `old_end` starts it)."""
    lines = new.count(b"\n", start, new_end) - old.count(b"\n", start, old_end)
    first = old.count(b"\n", 0, start)
    eol = old.find(b"\n", start)
    kept = first if not old[start:len(old) if eol < 0 else eol].strip() else first - 1
    last = first + old.count(b"\n", start, old_end)
    moved = last if old_end == 0 or old[old_end - 1:old_end] == b"\n" else last + 1
    return Shift(start, old_end, new_end - old_end, lines, kept, moved)


def edit_span(old: bytes, new: bytes) -> tuple[int, int, int]:
    """(start, old_end, new_end) of the one region where `old` and `new` differ: 8 KiB blocks
    compared by memcmp, then a bisect inside the first differing block (~0.3 ms for 500 KB)."""
    n = min(len(old), len(new))
    prefix = _common(n, lambda i, j: old[i:j] == new[i:j])
    lo, hi = len(old), len(new)
    suffix = _common(n - prefix, lambda i, j: old[lo - j:lo - i] == new[hi - j:hi - i])
    return prefix, len(old) - suffix, len(new) - suffix


def _common(n: int, same, block: int = 8192) -> int:
    """The largest k <= n with same(0, k), given same(i, j) for the range [i, j)."""
    at = 0
    while at < n and same(at, min(at + block, n)):
        at += block
    if at >= n:
        return n
    lo, hi = at, min(at + block, n) - 1  # same(at, lo) holds; the answer is in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if same(at, mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def reusable(state: State | None, new: bytes, config, tree_of=None, provisional: bool = False) -> tuple[Shift, State] | None:
    """(the shift, the new state) when `new` differs from `state`'s text only in chunks that
    are irrelevant before and after (a statement edited, added or removed, or blank lines);
    None when a full analysis is needed. Reads the text only: the statements around the edit
    are parsed on their own (they start at column 0, so they parse as they do in the file).
    When they do not parse cleanly, tree-sitter's error recovery is not local (a broken `def`
    may swallow the next 10 KB, or not, depending on all that follows): the file's tree
    (`tree_of()`, reparsed then: ~100 ms for 20k lines) must say whether the statements past
    the edit kept their place, unless `provisional`: then the statements' own parse is taken,
    as Python's tokenizer would (a line at column 0 starts a statement), and the state is
    marked for verify() once typing settles."""
    if state is None or state.tokens != anchor_tokens(config):
        return None
    if new == state.data:
        return Shift(0, 0, 0), state
    start, old_end, new_end, p, q = _edited(state, new)
    delta = new_end - old_end
    n = len(state.starts)
    if any(state.relevant[p:n - q]):
        return _blank_lines(state, new, start, old_end, new_end, p, n - q)
    made, guess = None, False
    # the edit may join its neighbours into one statement (`x` typed at column 0 in a class
    # splits it; deleting it joins the parts again): the window grows over irrelevant ones
    for wider in range(3):
        pw, qw = max(p - wider, 0), max(q - wider, 0)
        if any(state.relevant[pw:n - qw]):
            break
        made = _clean_chunks(state, new, pw, qw, delta)
        if made is not None:
            p, q = pw, qw
            break
    if made is None and provisional:
        made, guess = _guessed_chunks(state, new, p, q, delta), True
    elif made is None and tree_of is not None and not state.provisional:
        found = _file_chunks(tree_of(), new, state, p, q, delta)
        if found is not None:
            made, p, q = found
            if any(state.relevant[p:n - q]):
                return None
    if made is None:
        return None
    if any(i.root or i.binds & state.reads or i.reads & state.binds for _, _, i in made):
        return None
    moved_starts = [s + delta for s in state.starts[n - q:]]
    moved_ends = [e + delta for e in state.ends[n - q:]]
    infos = state.infos[:p] + [i for _, _, i in made] + state.infos[n - q:]
    return shift_of(state.data, new, start, old_end, new_end), State(
        new, state.starts[:p] + [b for b, _, _ in made] + moved_starts,
        state.ends[:p] + [e for _, e, _ in made] + moved_ends, infos,
        state.relevant[:p] + [False] * len(made) + state.relevant[n - q:], state.reads, state.binds, state.tokens,
        guess or (state.provisional and any(i.guessed for i in infos)))


def broken_edit(state: State | None, new: bytes) -> Shift | None:
    """The Shift from `state`'s text to `new` where the edit lies inside whole top-level statements
    of it and those statements, as `new` spells them, do not parse on their own: a statement being
    typed (`r = aot_load(so, "cuda").`). The server then shows the last findings moved,
    provisionally, until typing pauses (a whole analysis of a 20k-line file per keystroke
    otherwise: a module-level statement's error is no statement's own, so slice.py refuses it).
    None otherwise."""
    if state is None or new == state.data:
        return None
    start, old_end, new_end, p, q = _edited(state, new)
    n = len(state.starts)
    if p >= n - q:
        return None  # between statements
    window = new[state.starts[p]:state.ends[n - q - 1] + new_end - old_end]
    if not parser().parse(window).root_node.has_error:
        return None
    return shift_of(state.data, new, start, old_end, new_end)


def _edited(state: State, new: bytes) -> tuple[int, int, int, int, int]:
    """(edit_span of `state`'s text and `new`, p, q): chunks 0..p-1 end before the edit (touching
    counts as edited: a key typed at a line's end), chunks n-q.. start after it."""
    start, old_end, new_end = edit_span(state.data, new)
    p, q = bisect_left(state.ends, start), len(state.starts) - bisect_right(state.starts, old_end)
    return start, old_end, new_end, p, q


_SPACE = frozenset(b" \t\n\f")  # no "\r": a lone one ends a line too (as slice._blank_moved, not read)


def _blank_lines(state: State, new: bytes, start: int, old_end: int, new_end: int, p: int, r: int):
    """(shift, state) of an edit that only adds or removes blank lines (blank_only), even inside
    statements a rule reads: Python's tokens are the same, so is the analysis, its offsets and
    lines moved. Chunks p..r-1 are the ones it touches."""
    old = state.data
    holders = [(state.starts[k], state.ends[k]) for k in range(p, r) if state.starts[k] < start]
    if not blank_only(old, new, start, old_end, new_end, holders):
        return None
    delta = new_end - old_end
    starts = [x + delta if x >= old_end else x for x in state.starts]
    ends = [x + delta if x >= old_end else x for x in state.ends]
    return _blank_shift(old, new, start, old_end, new_end), State(
        new, starts, ends, state.infos, state.relevant, state.reads, state.binds, state.tokens, state.provisional)


def _blank_shift(old: bytes, new: bytes, start: int, old_end: int, new_end: int) -> Shift:
    """The Shift of a blank_only edit, its lines exact: each line's tokens all lie before the
    edit (the line keeps its number) or all after it (it moves), the edit's own lines are blank.
    An Enter at a line's end is read as an insertion before the next line's first token
    (edit_span): that line moves whole, not "touched" (shift_of)."""
    first = old.count(b"\n", 0, start)
    last = first + old.count(b"\n", start, old_end)
    lines = new.count(b"\n", start, new_end) - old.count(b"\n", start, old_end)
    if old[old.rfind(b"\n", 0, start) + 1:start].strip():  # tokens before it on its line: it stays
        return Shift(start, old_end, new_end - old_end, lines, first, last if last > first else first + 1)
    return Shift(start, old_end, new_end - old_end, lines, first - 1, last)


def blank_only(old: bytes, new: bytes, start: int, old_end: int, new_end: int, holders) -> bool:
    """Whether old[start:old_end] -> new[start:new_end] only adds or removes blank lines (Enter
    at a line's end, a blank line deleted): every line that is not blank stays as it was. Not
    when the edit starts at a token's end (which side an offset there goes is unsure), follows
    a `\\` continuation, or lies in a statement (`holders`: their (start, end)) that spells a
    triple-quoted string, whose value a blank line inside it would change."""
    gone, added = old[start:old_end], new[start:new_end]
    if not _SPACE.issuperset(gone) or not _SPACE.issuperset(added) or (b"\n" not in gone and b"\n" not in added):
        return False
    if start and old[start - 1] not in _SPACE:
        return False
    lo = old.rfind(b"\n", 0, start) + 1
    hi = old.find(b"\n", old_end)
    hi = len(old) if hi < 0 else hi
    before = [line for line in old[lo:hi].split(b"\n") if line.strip()]
    after = [line for line in new[lo:hi + new_end - old_end].split(b"\n") if line.strip()]
    if before != after or old[max(0, lo - 4096):lo].rstrip(b" \t\r\n\f").endswith(b"\\"):
        return False
    return not any(b'"""' in old[a:b] or b"'''" in old[a:b] for a, b in holders)


def _window(state: State, new: bytes, p: int, q: int, delta: int) -> tuple[int, bytes]:
    n = len(state.starts)
    lo = state.ends[p - 1] if p else 0
    hi = state.starts[n - q] + delta if q else len(new)
    return lo, new[lo:hi]


def _clean_chunks(state: State, new: bytes, p: int, q: int, delta: int) -> list | None:
    """The statements that replace chunks [p, n - q), from their own parse, when that is clean
    and its neighbours are sound (a broken one's recovery may reach into the edited text)."""
    n = len(state.starts)
    lo, window = _window(state, new, p, q, delta)
    if b"\r" in window or (p and not state.infos[p - 1].sound) or (q and not state.infos[n - q].sound):
        return None
    return _window_chunks(window, lo, state.tokens)


def _guessed_chunks(state: State, new: bytes, p: int, q: int, delta: int) -> list | None:
    """The window as one statement, read from its own (broken) parse: what it binds and reads
    as far as tree-sitter recovered it. Only a guess (verify() checks it with the file's tree);
    None if the window does not start and end at a line's start."""
    lo, window = _window(state, new, p, q, delta)
    if b"\r" in window or (lo and new[lo - 1:lo] != b"\n" and not window.startswith(b"\n")):
        return None
    body = window.strip()
    if not body:
        return []
    if window.rstrip(b" \t")[-1:] not in (b"\n", b"") :
        return None
    root = parser().parse(window).root_node
    binds: set[str] = set()
    reads: set[str] = set()
    is_root = any(t in window for t in state.tokens)
    for child in root.children:  # a def that recovered keeps its locals out of its reads
        info = info_of(window, child, state.tokens)
        binds |= info.binds
        reads |= info.reads
        is_root |= info.root
    first = lo + window.index(body[:1])
    last = lo + len(window.rstrip())
    return [(first, last, Info(frozenset(binds), frozenset(reads), is_root, False, True))]


def verify(state: State, source, config) -> State | None:
    """The state of `source` from its own tree when it agrees with the `provisional` one (the
    same statements, relevant the same, reading and binding the same): the findings kept
    through the guessed edits are a full analysis's. None when it does not."""
    fresh = state_of(source, config, fresh=True)

    def kept(st: State) -> list:
        return [(st.starts[i], st.ends[i], st.infos[i]) for i, r in enumerate(st.relevant) if r]

    same = fresh.reads == state.reads and fresh.binds == state.binds and kept(fresh) == kept(state)
    return fresh if same else None


def _window_chunks(window: bytes, lo: int, tokens) -> list[tuple[int, int, Info]] | None:
    """The statements of a clean window, at their offsets in the file; None if it has an error
    (an unfinished statement may swallow the next ones: only the file's parse can say)."""
    read = window_statements(window, lo, tokens)
    return None if read is None else read[0]


def window_statements(window: bytes, lo: int, tokens, broken: bool = False) -> tuple[list, list, bool] | None:
    """(the statements as (start, end, Info) at their offsets in the file, their nodes (offsets
    in the window), whether one has an error) of a window read on its own; None when it does
    not split into whole statements, each starting a line. `broken`: a syntax error is taken
    when tree-sitter's recovery kept it inside a statement (no ERROR or stray token at the top,
    nothing but blanks between them; slice.py's provisional slice), else None."""
    root = parser().parse(window).root_node
    made = root.named_children
    if root.has_error:
        made = root.children
        if not broken or any(c.type == "ERROR" or c.is_missing or not c.is_named for c in made):
            return None
    if lo and made and made[0].start_point.row == 0:
        return None  # on the line the chunk before ends on (`a = 1; b = 2`, a trailing comment)
    if any(c.start_point.column for c in made) or window.rstrip(b" \t")[-1:] not in (b"\n", b""):
        return None  # a statement must start a line, and the next one too
    if root.has_error:
        at = 0
        for c in made:  # nothing but blanks between them (a kept chunk's text is its node's)
            if window[at:c.start_byte].strip():
                return None
            at = c.end_byte
        if window[at:].strip():
            return None
    return [(lo + c.start_byte, lo + c.end_byte, info_of(window, c, tokens)) for c in made], made, root.has_error


def _file_chunks(tree, new: bytes, state: State, p: int, q: int, delta: int) -> tuple[list, int, int] | None:
    """(the statements, p, q) as the file's own tree has them: the first p and last q chunks
    must have kept their place (fewer if the edit joined or split its neighbours)."""
    children = tree.root_node.named_children
    n, m = len(state.starts), len(children)
    keep = 0
    while keep < min(p, m) and children[keep].start_byte == state.starts[keep] and children[keep].end_byte == state.ends[keep]:
        keep += 1
    tail = 0
    while (tail < min(q, m - keep) and children[m - 1 - tail].start_byte == state.starts[n - 1 - tail] + delta
           and children[m - 1 - tail].end_byte == state.ends[n - 1 - tail] + delta):
        tail += 1
    if p - keep > 2 or q - tail > 2:
        return None  # the edit's reach is wide: a full analysis
    return [(c.start_byte, c.end_byte, info_of(new, c, state.tokens)) for c in children[keep:m - tail]], keep, tail


# -- moving what an analysis found -------------------------------------------------------------
_CITED = re.compile(r"\bline (\d+)|([^\s(:]+):(\d+)\)")


class _Unsure(Exception):
    pass


def recited(f, shift: Shift, name: str):
    """`f` (moved past `shift`) with the lines of this file its message, notes and fix titles
    name moved too (_recite); `f` itself when none moves; None when one names a line the edit
    spans, or one it cannot tell is this file's (_recite, _retitled)."""
    if not shift.lines:
        return f
    said = cited_in(f)
    if said & TITLES:
        fixes = _retitled(f, shift, name)
        if fixes is None:
            return None
        if fixes:
            f = _copy(f, fix=fixes[0], alternatives=fixes[1])
    if not said & TEXTS:
        return f
    try:
        message = _recite(f.message, shift, name, titles=False)
        related = [r if (note := _recite(r.message, shift, name, titles=False)) is r.message else
                   replace(r, message=note) for r in f.related]
    except _Unsure:
        return None
    if message is f.message and all(a is b for a, b in zip(related, f.related)):
        return f
    return _copy(f, message=message, related=related)


TEXTS, TITLES = 1, 2  # a finding's message or notes cite a line; a title of its fixes does


def cited_in(f) -> int:
    """Which texts of `f` cite a line (TEXTS | TITLES, or 0), asked once: its copies keep the
    answer (shift_finding, _copy), as their texts cite the same lines, moved."""
    said = f.__dict__.get("_cites")
    if said is None:
        said = f.__dict__["_cites"] = (TEXTS if cites(f.message) or any(cites(r.message) for r in f.related) else 0) | (
            TITLES if any(x is not None and cites(x.title) for x in (f.fix, *f.alternatives)) else 0)
    return said


def _recite(text: str, shift: Shift, name: str, titles: bool) -> str:
    """`text` with the lines it cites (_CITED) moved past `shift`: "line N" (this file), "name:N)"
    (another file's: kept). This file's own `name:N)` past the edit is moved in a fix's title
    (`titles`: a plan cites every file so) and unsure in a message (which of two files of that
    name it means is not told). A line of the edit's own: unsure (_Unsure). `text` itself when
    nothing moves. Read from its marks (_marks), not by a regex with a callback per keystroke."""
    marks = _marks(text)
    if not marks:
        return text
    pieces: list[str] = []
    moved: list[tuple] = []
    last = grow = 0
    for start, end, number, file in marks:
        if number - 1 <= shift.kept or (file is not None and file != name):
            moved.append((start + grow, end + grow, number, file))
            continue
        if number - 1 < shift.moved or (file is not None and not titles):
            raise _Unsure
        now = number + shift.lines
        said = f"line {now}" if file is None else f"{name}:{now})"
        pieces += (text[last:start], said)
        last = end
        moved.append((start + grow, start + grow + len(said), now, file))
        grow += len(said) - (end - start)
    if not pieces:
        return text
    pieces.append(text[last:])
    out = "".join(pieces)
    _remember_marks(out, tuple(moved))
    return out


_MARKS: dict[str, tuple] = {}  # text -> its citations: (start, end, line number, file name or None)


def _marks(text: str) -> tuple:
    found = _MARKS.get(text)
    if found is None:
        found = tuple((m.start(), m.end(), int(m.group(1) or m.group(3)), m.group(2)) for m in _CITED.finditer(text))
        _remember_marks(text, found)
    return found


def _remember_marks(text: str, marks: tuple) -> None:
    if len(_MARKS) >= 1 << 14:  # a dense file has ~2,000 citing texts and each move makes new ones:
        _MARKS.clear()  # the old ones are let go every few Enters (a few MB at most), read again when asked
    _MARKS[text] = marks


def _copy(f, **fields):
    """`f` with `fields` changed (copy.copy, without its generic protocol)."""
    moved = object.__new__(type(f))
    moved.__dict__.update(f.__dict__)
    moved.__dict__.update(fields)
    return moved


def cites(text: str) -> bool:
    """Whether `text` names a line ("(line 12)", "(paths.py:3)"): it has marks (_marks, kept)."""
    return bool(_marks(text))


def _retitled(f, shift: Shift, name: str):
    """(fix, alternatives) of `f` with the lines of this file their titles cite moved (a plan
    writes "name:N" for every file, this one too); () when none moves; None when one names a
    line the edit spans, or the fix also edits another file called `name` (which it means is
    not told)."""
    fixes = (f.fix, *f.alternatives)
    out = list(fixes)
    for k, fix in enumerate(fixes):
        if fix is None or not cites(fix.title):
            continue
        try:
            title = _recite(fix.title, shift, name, titles=True)
        except _Unsure:
            return None
        if title == fix.title:
            continue
        if any(p.replace("\\", "/").rsplit("/", 1)[-1] == name for p in fix.other_files):
            return None
        out[k] = _titled(fix, title)
    return () if all(a is b for a, b in zip(out, fixes)) else (out[0], tuple(out[1:]))


def _titled(fix, title: str):
    if isinstance(fix, LazyFix):  # one build for both (shifted: the same origin)
        moved = fix.shifted(_same)
        moved.title = title
        return moved
    return replace(fix, title=title)


def _same(offset: int) -> int:
    return offset


def shift_result(result, shift: Shift, name: str = ""):
    """The findings of the last analysis, where they are now, the lines their messages name
    moved too; None when one names a line the edit spans (recited)."""
    from aoti_lsp.analysis.engine import Result

    partial = getattr(result, "partial", False)
    findings = []
    for f in result.findings:
        if f.fix is not None and _edits_touch(f, shift):
            return None
        g = recited(shift_finding(f, shift, partial), shift, name)
        if g is None:
            return None
        findings.append(g)
    moved = Result(findings, list(result.errors), result.skipped)
    moved.moved = (result, shift)  # the editor's diagnostics of `result` can be moved too (lsp/convert.py)
    # the analysis it all comes from: finding i here is its finding i, moved (lsp/server.py)
    moved.base = getattr(result, "base", result)
    moved.partial = partial  # a slice's: its lazy fixes are not to be built
    moved.provisional = getattr(result, "provisional", False)  # a slice's of a broken statement: verified later
    result.__dict__.pop("moved", None)  # no chain of every result since the last analysis
    return moved


def _edits_touch(f, shift: Shift) -> bool:
    """Whether an edit made with the finding overlaps or touches the edited region: its text was
    written from the old text, and an edit at the region's end may be anchored to what precedes
    it (an import put after the last one): the analysis writes it anew."""
    for fix in (f.fix, *f.alternatives):
        if type(fix) is Fix:
            for e in fix.edits:
                if e.path is None and e.start <= shift.old_end and e.end >= shift.start:
                    return True
    return False


def shift_finding(f, shift: Shift, partial: bool = False):
    """`f` itself when nothing of it lies past the edit (most findings, for an edit late in the
    file); else a copy with its offsets moved. `partial` (a slice's result, slice.py): its lazy
    fixes are never built from it, so they are not moved (a move each, per keystroke, adds up).
    Written out (no Shift.at, no generators, no records.replace): an edit early in a file of
    4,000 findings moves them all, on every keystroke."""
    end, delta = shift.old_end, shift.delta
    fix = f.fix
    if fix is not None and not (partial and isinstance(fix, LazyFix)):
        fix = shift_fix(fix, shift)
    alternatives = f.alternatives
    if alternatives:
        alternatives = tuple(a if partial and isinstance(a, LazyFix) else shift_fix(a, shift) for a in alternatives)
    related = f.related
    moves = f.end >= end
    if not moves:
        for r in related:
            if r.path is None and r.end >= end:
                moves = True
                break
        if not moves and fix is f.fix and all(x is y for x, y in zip(alternatives, f.alternatives)):
            return f
    moved = object.__new__(type(f))  # copy.copy, without its generic protocol (~5x the cost)
    moved.__dict__.update(f.__dict__)
    moved.start = f.start + delta if f.start >= end else f.start
    moved.end = f.end + delta if f.end >= end else f.end
    moved.related = [r if r.path is not None or r.end < end else
                     Related(r.start + delta if r.start >= end else r.start, r.end + delta, r.message)
                     for r in related]
    moved.fix, moved.alternatives = fix, alternatives
    return moved


def shift_fix(fix, shift: Shift):
    if type(fix) is not Fix:  # (a getattr that misses costs an exception: most fixes are plain)
        moved = getattr(fix, "shifted", None)
        if moved is not None:  # a fix that builds its edits later knows how to move them
            return moved(shift.at)
    end, delta = shift.old_end, shift.delta
    edits = fix.edits
    for e in edits:
        if e.path is None and e.end >= end:
            break
    else:
        return fix
    edits = tuple(e if e.path is not None else
                  Edit(e.start + delta if e.start >= end else e.start, e.end + delta, e.text) if e.end >= end else e
                  for e in edits)
    if type(fix) is Fix:
        return Fix(fix.title, edits, fix.applicability, fix.snippet)
    return replace(fix, edits=edits)


class Tracker:
    """Per file: the last fully analysed text (its State built on first need), so that the
    next version can be checked against it. One for results, one for summaries."""

    def __init__(self):
        self._last: dict[str, list] = {}  # key -> [source, config, State | None, payload, tag]

    def remember(self, key: str, source, config, payload, tag=None, state: State | None = None) -> None:
        """`state`: the text's chunks when the caller has them (slice.py), so no tree is needed."""
        from aoti_lsp.analysis.source import Source

        # else a copy of the tree: the editor's document edits its own in place (tree.edit)
        kept = Source(source.data, source.path) if state is not None else Source(source.data, source.path, tree=source.tree.copy())
        self._last[key] = [kept, config, state, payload, tag]

    def forget(self, key: str) -> None:
        self._last.pop(key, None)

    def reuse(self, key: str, source, config, tag=None, provisional: bool = False):
        """(shift, the payload remembered) when `source` is a keystroke no rule sees away
        from the remembered text (analysed under the same config and `tag`); the remembered
        text becomes `source`. Else None. `provisional`: see reusable()."""
        last = self._last.get(key)
        if last is None or last[1] != config or last[4] != tag:
            return None
        if last[2] is None:
            last[2] = state_of(last[0], last[1])
        hit = reusable(last[2], source.data, config, lambda: source.tree, provisional)
        if hit is None:
            return None
        shift, state = hit
        last[2] = state  # the text is now `source`'s (the state holds it; the tree is no longer read)
        return shift, last[3]

    def payload(self, key: str):
        last = self._last.get(key)
        return None if last is None else last[3]

    def state(self, key: str) -> State | None:
        last = self._last.get(key)
        return None if last is None else last[2]

    def provisional(self, key: str) -> bool:
        last = self._last.get(key)
        return last is not None and last[2] is not None and last[2].provisional

    def verify(self, key: str, source) -> bool:
        """False, and the key forgotten, when a provisional state is not what `source`'s own
        tree says (its payload is then not a full analysis's); True otherwise."""
        last = self._last.get(key)
        if last is None or last[2] is None or not last[2].provisional:
            return True
        if last[2].data != source.data:
            self.forget(key)
            return False
        fresh = verify(last[2], source, last[1])
        if fresh is None:
            self.forget(key)
            return False
        last[2] = fresh
        return True

    def update(self, key: str, payload) -> None:
        if key in self._last:
            self._last[key][3] = payload
