"""A keystroke inside AOTI code re-analyses only the top-level statements (chunks) whose findings
can change, not the whole file.

After an edit confined to a few chunks (the same number of chunks before and after, each
parsed cleanly, binding the same module-level names), the chunks whose findings may change
(`affected`) are:
  - the edited ones, and every chunk whose *meaning* follows from them: it reads a name whose
    reaching binder (the nearest binding before the read, back to an unconditional one; for a
    read in a function body also the last binder; any `global` setter) is a changed chunk;
  - the chunks one step away from a changed one in either direction (a compile whose loader
    changed cites it and plans its migration over it);
  - the chunks that share an artifact with a changed one (a compile and a load of the same path,
    calls of the runner it returns: `labels_of`, from the facts of the analysis), before and after;
  - chunks binding the same name as an edited one when that name could be a lazily set global
    (facts follows a global only when every other binding of it is `None`);
  - for AOTI201/AOTI202, the chunks of the same model (`j<key>` labels: the forward or compiled
    function, the export calls naming it, their packages, the loads of those and the calls of
    the loaded runners); module-level guards (`if x.numel() == 0: raise`) are always in the
    slice and never sliced when edited (known_nonempty reads them for a later module-level call).
The engine runs a rule on a file only when the file spells its tokens (Rule.wants/relevant):
those gates are compared before and after the edit (only when a token overlaps it) and an
edit that flips one is not sliced; the compact text gets the rules the whole text gets. Where
AOTI301 runs (an env var written), an edit spelling a compile, load, CUDA use or import is not
sliced: the rule reads those file-wide.
The analysis runs on a *compact* copy of the new text: the chunks of the slice (affected chunks,
what they read, transitively, and what reads them) where they stand, only the line breaks of
every other one, so lines and columns are those of the file (offsets are mapped back).
Findings of affected chunks come from it; every other finding is the last one, moved by the
edit. The edited statements are parsed on their own, never the whole file. The result is
`partial`: its lazy fixes were planned on other texts, so their edits come from a full analysis
(the server's `result(doc, full=True)`). Anything outside these shapes: None, and the caller
analyses the whole file. tests/test_slice.py compares each result with a full analysis.

PROVISIONAL: an edit that leaves a syntax error inside its statements (the same statements, each
starting its line, the error confined to them by their own parse) is sliced all the same: the
broken statements, parsed alone, are analysed with the rest of the slice. The result is marked
`provisional` (the server replaces it by a full analysis once typing settles); later keystrokes
slice from it, re-analysing every chunk analysed while a statement was broken, and once none
is broken the result is a full analysis's again.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left, bisect_right, insort

from aoti_lsp.analysis import incremental
from aoti_lsp.analysis.engine import Context, Result, analyze
from aoti_lsp.analysis.facts import MARK_DYNAMIC, SET_DEFAULT, SET_DTYPE
from aoti_lsp.analysis.findings import LazyFix
from aoti_lsp.analysis.records import record, replace, set_field
from aoti_lsp.analysis.source import Source

FREE = incremental.WORD  # a name not after a dot (`self.runner`: not `runner`); `café` whole
NONE = re.compile(rb"([A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*)\s*=\s*None\b")
DEFINITE = {"expression_statement", "import_statement", "import_from_statement", "function_definition",
            "class_definition", "decorated_definition", "future_import_statement"}
# calls read file-wide, wherever they stand (devices.py: the default device and dtype, dynamic
# dims): a chunk spelling one is always in the slice, and an edit of one is never sliced
AMBIENT = tuple(sorted({q.rsplit(".", 1)[-1].encode() for q in (*SET_DEFAULT, *SET_DTYPE, *MARK_DYNAMIC)}))
# AOTI201/AOTI202 (jagged.py) judge a forward by its model's exports, packages, loads and runner
# calls: labels link those (_jagged_labels), and module-level guards are always in the slice.
# An edit of an import is not sliced (AOTI301 cites every `import torch` from where an env var is set)
JAGGED = ("AOTI201", "AOTI202")
MAX_SLICE = 0.5  # of the chunks (of a file of more than 50): past that, a full analysis is as cheap


# records (records.py), not dataclasses: the server imports this module at its start
@record("binds", "now", "later", "definite", "setters", "nones", "hub", "ambient", frozen=True)
class Piece:
    """What one chunk means to the slice (position-free: cached by text)."""

    def __init__(self, binds: frozenset[str], now: frozenset[str], later: frozenset[str], definite: bool,
                 setters: frozenset[str], nones: frozenset[str], hub: bool = False, ambient: bool = False):
        set_field(self, "binds", binds)
        set_field(self, "now", now)  # names read when the module runs
        set_field(self, "later", later)  # names read in function bodies (their own locals left out)
        set_field(self, "definite", definite)  # binds its names whenever the module runs (not under if/for/try)
        set_field(self, "setters", setters)  # names bound under `global` in a function
        set_field(self, "nones", nones)  # names somewhere set to None
        # `import torch`: no rule reads who uses the module (checked: no finding in it)
        set_field(self, "hub", hub)
        set_field(self, "ambient", ambient)  # spells a call read file-wide (AMBIENT)


_PIECES: dict[tuple, Piece] = {}


def forget_texts() -> None:
    _PIECES.clear()
    _MARKS.clear()
    _LOUD.clear()


def piece_of(data: bytes, node, info: incremental.Info, tokens) -> Piece:
    text = data[node.start_byte:node.end_byte]
    key = (text, node.type, info, tokens)
    found = _PIECES.get(key)
    if found is None:
        incremental.trimmed(_PIECES)
        found = _PIECES[key] = _piece(text, node, info, tokens)
    return found


def _piece(text: bytes, node, info: incremental.Info, tokens) -> Piece:
    later: set[str] = set()
    now: set[str] = set()
    funcs = []  # byte ranges of function bodies, relative to the chunk
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("function_definition", "lambda"):
            body = n.child_by_field_name("body")
            if body is not None:
                funcs.append((body.start_byte - node.start_byte, body.end_byte - node.start_byte))
                continue
        stack.extend(n.named_children)
    for m in FREE.finditer(text):
        inside = any(s <= m.start() < e for s, e in funcs)
        (later if inside else now).add(m.group().decode("utf-8", "replace"))
    # a function's own locals are not module names (Info.reads already drops them)
    later &= info.reads
    setters = set()
    for m in incremental.GLOBAL.finditer(text):
        setters.update(n.strip() for n in m.group(1).decode("utf-8", "replace").split(",") if n.strip())
    definite = node.type in DEFINITE and not setters
    hub = node.type == "import_statement" and not any(t in text for t in tokens) and b"*" not in text
    return Piece(info.binds, frozenset(now), frozenset(later), definite, frozenset(setters),
                 frozenset(m.group(1).decode("utf-8", "replace") for m in NONE.finditer(text)), hub, any(a in text for a in AMBIENT))


class Entry:
    """The last analysed text of one file and what the slice needs of it."""

    def __init__(self, source: Source, config, result: Result, others, project):
        self.source, self.config, self.result, self.others, self.project = source, config, result, others, project
        self.starts: list[int] | None = None
        self.ends: list[int] = []
        self.infos: list = []
        self.pieces: list[Piece] = []
        self.labels: list[frozenset[str]] = []
        self._by_label: tuple | None = None  # (labels, label -> chunks): rebuilt when they change
        self._ambient: tuple | None = None
        self.graph: _Graph | None = None
        self.gates: tuple[bool, ...] = ()
        self.guards: frozenset[int] = frozenset()
        self.evidence: frozenset[int] = frozenset()  # chunks AOTI201/202 read file-wide (_jagged_evidence)
        self.wide = None  # what AOTI201/202 concluded from them (_jagged_wide); None: unknown
        self.loud: frozenset[str] = frozenset()  # keys of the targets that may have AOTI201/202 findings (_loud_keys)
        self.imports: frozenset[int] = frozenset()
        # a provisional text (PROVISIONAL): its chunks parsed with an error of their own, and
        # every chunk whose findings were made while one was broken (re-analysed by each later
        # slice until none is broken)
        self.broken: frozenset[int] = frozenset()
        self.tainted: frozenset[int] = frozenset()
        self.behind = False  # the document moved on by an edit it could not follow (Slicer.follow)

    def by_label(self) -> dict[str, set[int]]:
        if self._by_label is None or self._by_label[0] is not self.labels:
            out: dict[str, set[int]] = {}
            for j, labels in enumerate(self.labels):
                for label in labels:
                    out.setdefault(label, set()).add(j)
            self._by_label = (self.labels, out)
        return self._by_label[1]

    def ambient(self) -> list[int]:
        if self._ambient is None or self._ambient[0] is not self.pieces:
            self._ambient = (self.pieces, [j for j, piece in enumerate(self.pieces) if piece.ambient])
        return self._ambient[1]

    def build(self, tokens) -> bool:
        root = self.source.tree.root_node
        if root.has_error:
            return False
        data = self.source.data
        children = root.named_children
        self.starts = [c.start_byte for c in children]
        self.ends = [c.end_byte for c in children]
        self.infos = [incremental.info_of(data, c, tokens) for c in children]
        self.pieces = [piece_of(data, c, i, tokens) for c, i in zip(children, self.infos)]
        ctx = self.source.context
        if ctx is None or ctx.config != self.config:
            ctx = Context(self.source, self.config, self.project)
        self.gates = gates_of(self.source, self.config, self.project)
        jagged = _jagged_on(self.gates, self.config, self.source.path)
        self.labels = labels_of(ctx, self.starts, range(len(children)), jagged)
        marks = [_jagged_marks(data, c, self.config) for c in children] if jagged else []
        self.guards = frozenset(i for i, m in enumerate(marks) if m[0])
        self.evidence = frozenset(i for i, m in enumerate(marks) if m[1])
        self.wide = _jagged_wide(ctx) if jagged else None
        self.loud = frozenset().union(*(_loud_keys(data, c, self.config) for c in children)) if jagged else frozenset()
        # kept as the text changes: an edit of an import, or one that adds or removes a statement, is not sliced
        self.imports = frozenset(i for i, c in enumerate(children) if c.type in ("import_statement", "import_from_statement"))
        return True


def _chunk(starts: list[int], at: int) -> int:
    return bisect_right(starts, at) - 1


def labels_of(ctx, starts: list[int], wanted, jagged: bool = False) -> list[frozenset[str]]:
    """Per chunk (of those `wanted`, others empty): the artifacts its sites touch, as labels
    (`k<path>`: a compile or load of that path, or a call of what it loads; `c<i>`: the value a
    compile in chunk i returns, loaded or called here; with `jagged`, `j<key>`: _jagged_labels)."""
    facts = ctx.facts
    out: dict[int, set[str]] = {}

    def add(at: int, label: str) -> None:
        out.setdefault(_chunk(starts, at), set()).add(label)

    def key(site) -> str | None:
        # a path this analysis cannot read links the site to nothing by key: no rule or fix pairs
        # sites of unknown paths (devices.artifact, the migration plan and AOTI003 stop there), and
        # an edit that makes it known gets a new `k` label, checked against the slice below
        if site.path_node is None:
            return None
        return facts.resolve_key(facts.path_key(site.path_node, site.call.start_byte))

    for site in facts.compiles:
        ci = _chunk(starts, site.call.start_byte)
        own = f"c{ci}"
        add(site.call.start_byte, own)
        k = key(site)
        if k:
            add(site.call.start_byte, "k" + k)
        for load in facts.loads_of_value(site.call):
            add(load.call.start_byte, own)
            for call in facts.runner_calls(load):
                add(call.start_byte, own)
    for load in facts.loads:
        k = key(load)
        labels = {"k" + k} if k else set()
        labels.add(f"l{_chunk(starts, load.call.start_byte)}")
        for at in [load.call.start_byte] + [c.start_byte for c in facts.runner_calls(load)]:
            for label in labels:
                add(at, label)
    if jagged:
        _jagged_labels(ctx, add)
    wanted = set(wanted)
    return [frozenset(out.get(i, ())) if i in wanted else frozenset() for i in range(len(starts))]


def _jagged_labels(ctx, add) -> None:
    """AOTI201/AOTI202 (jagged.py) judge a forward (or a compiled function) by what the file does
    with its model: the export calls naming its class, the packages of those exports, the loads
    of those packages and the calls of the loaded runners (their arguments and guards). Every
    one of those sites, and the function itself, gets the label `j<key>` (the key: the class or
    function name, as jagged.Model finds it)."""
    from aoti_lsp.analysis.jagged import COMPILERS, Model, summary_owner, unparen
    from aoti_lsp.analysis.names import DEF

    model = Model(ctx, summary_owner(ctx.config) or "AOTI201")
    for target in model.targets():
        add(target.func.start_byte, "j" + target.key)
    for call, _, key in model.export_calls:
        add(call.start_byte, "j" + key)
    for call, key, _ in model.packages:
        add(call.start_byte, "j" + key)
    for load, key in model._loads:
        add(load.start_byte, "j" + key)
        for call in model._calls_of_runner(load):
            add(call.start_byte, "j" + key)
    names = ctx.names
    for call, _ in ctx.calls_to(COMPILERS | {"torch._export.aot_compile"}):  # a function compiled by name
        args = call.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        if first is not None and unparen(first).type == "identifier":
            # only a name bound to a `def` makes a target (Model.compiled_functions): a parameter
            # (`aot_compile(model, ...)` in a helper) links nothing; an edit that binds it to a
            # def reads that def's chunk (a binder) and gets the new label, checked below
            ident = unparen(first)
            b = names.lookup(ident.text.decode(), ident.start_byte, names.scope_of(ident))
            if b is None or b.kind == DEF:
                add(call.start_byte, "j" + ident.text.decode())


def _rules(config, path) -> tuple:
    from aoti_lsp.rules import all_rules

    return tuple(r for r in all_rules() if config.enabled(r.code, path))


def gates_of(source: Source, config, project) -> tuple[bool, ...]:
    """Per enabled rule: whether the engine runs it on this text (its file-wide token gates)."""
    return tuple(r.wants(source, config) and r.relevant(source, project) for r in _rules(config, source.path))


_GATE_TOKENS: dict = {}


def _gate_tokens(config, path) -> tuple[bytes, ...]:
    key = (config, path)
    found = _GATE_TOKENS.get(key)
    if found is None:
        words = {"class "}  # AOTI202.relevant: `class Name` of a class another file exports
        for r in _rules(config, path):
            words.update(r.requires_any, r.triggers_for(config), r.summary_triggers or ())
        if len(_GATE_TOKENS) > 64:
            _GATE_TOKENS.clear()
        found = _GATE_TOKENS[key] = tuple(sorted(w.encode() for w in words if w))
    return found


def _gate_may_flip(old: bytes, new: bytes, start: int, old_end: int, new_end: int, tokens) -> bool:
    """Whether some token may be spelt in one text and not the other: one of them overlaps the edit."""
    reach = max(map(len, tokens), default=1) - 1
    before = old[max(0, start - reach):old_end + reach]
    after = new[max(0, start - reach):new_end + reach]
    return any(t in before or t in after for t in tokens)


def _jagged_on(gates, config, path) -> bool:
    return any(g for r, g in zip(_rules(config, path), gates) if r.code in JAGGED)


GUARD_WORDS = (b"numel", b"nelement", b"shape", b"size", b"len(", b"sum")


def _module_guard(data: bytes, node) -> bool:
    """A top-level statement that tells the module's later statements an input is non-empty
    (`if x.numel() == 0: raise`, `assert len(x)`, `torch._check(...)`): jagged.known_nonempty
    reads it for a call of a package at module level, in another statement."""
    from aoti_lsp.analysis.jagged import _statement_facts

    if node.type not in ("if_statement", "assert_statement", "expression_statement"):
        return False
    text = data[node.start_byte:node.end_byte]
    return any(w in text for w in GUARD_WORDS) and bool(_statement_facts(node))


def _jagged_wide(ctx) -> tuple:
    """What AOTI201/AOTI202 conclude from a file's evidence chunks, for every forward at once: does
    it export or load packages, what it AOT-compiles, and each jagged keyword's verdict. The
    compact text holds every evidence chunk, so it concludes the same as the file, or the edit
    changed it."""
    from aoti_lsp.analysis.jagged import Model, summary_owner

    model = Model(ctx, summary_owner(ctx.config) or "AOTI201")
    return model.evidence, frozenset(model.aoti_keys), model.unknown_packages, tuple(model.complete_keywords())


_KEYWORD = re.compile(rb"([A-Za-z_]\w*)\s*=(?!=)")
_MARKS: dict[tuple, tuple[bool, bool]] = {}


def _jagged_marks(data: bytes, node, config) -> tuple[bool, bool]:
    """(_module_guard, _jagged_evidence) of a top-level statement, memoised by its text: an
    entry is built again after every whole-file analysis, and reading every statement of a
    20k-line file again was ~45 ms of the keystroke that builds it."""
    from aoti_lsp.analysis.jagged import jagged_patterns

    key = (data[node.start_byte:node.end_byte], node.type, jagged_patterns(config))
    found = _MARKS.get(key)
    if found is None:
        incremental.trimmed(_MARKS)
        found = _MARKS[key] = (_module_guard(data, node), _jagged_evidence(data, node, config))
    return found


def _jagged_evidence(data: bytes, node, config) -> bool:
    """A top-level statement AOTI201/AOTI202 read wherever it stands (jagged.Model): an export,
    package or load call (the scope: does this file run AOTI packages?), a keyword argument named
    like a jagged input (the complete-offsets verdict of every caller)."""
    from aoti_lsp.analysis.jagged import EXPORTERS, LOADERS, PACKAGERS, is_jagged_name, jagged_patterns

    text = data[node.start_byte:node.end_byte]
    if any(q.rsplit(".", 1)[-1].encode() in text for q in EXPORTERS | PACKAGERS | LOADERS):
        return True
    patterns = jagged_patterns(config)
    return any(is_jagged_name(m.group(1).decode(), patterns) for m in _KEYWORD.finditer(text))


_LOUD: dict[tuple, frozenset[str]] = {}
_SIZE_WORDS = (b"numel", b"nelement", b"size", b"shape", b"len")  # what an empty test spells (jagged.empty_tests)
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def _loud_keys(data: bytes, node, config) -> frozenset[str]:
    """The keys (jagged.Target.key: a function's name, or its class's for a method) of the
    functions of a top-level statement that AOTI201/AOTI202 may report in: one that spells a
    jagged name (Flow.jagged: a parameter or a name taken out of one) or has an empty-input
    guard (guard_statements). Any other target has no site and no guard, so no finding of
    either rule, whatever its model's exports, loads and calls say: the `j<key>` labels of a
    key no loud function has link nothing (slice_result). Read from the statement's own text,
    memoised by it."""
    from aoti_lsp.analysis.jagged import jagged_patterns

    patterns = jagged_patterns(config)
    key = (data[node.start_byte:node.end_byte], node.type, patterns)
    found = _LOUD.get(key)
    if found is None:
        incremental.trimmed(_LOUD)
        found = _LOUD[key] = _loud(key[0], node, patterns)
    return found


def _loud(text: bytes, node, patterns) -> frozenset[str]:
    from aoti_lsp.analysis.jagged import Target, guard_statements, is_jagged_name

    if b"def" not in text:
        return frozenset()
    jagged = any(is_jagged_name(w.decode("utf-8", "replace"), patterns) for w in set(_WORD.findall(text)))
    if not jagged and not any(w in text for w in _SIZE_WORDS):
        return frozenset()
    out: set[str] = set()
    stack = [(node, ())]
    while stack:
        n, classes = stack.pop()
        if n.type == "class_definition":
            name = n.child_by_field_name("name")
            classes = (*classes, name.text.decode("utf-8", "replace")) if name is not None else classes
        elif n.type == "function_definition":
            words = set(_WORD.findall(n.text)) if jagged else ()
            if any(is_jagged_name(w.decode("utf-8", "replace"), patterns) for w in words) \
                    or any(True for _ in guard_statements(Target(n, None, "", [], False))):
                name = n.child_by_field_name("name")
                out.update(classes)
                if name is not None:
                    out.add(name.text.decode("utf-8", "replace"))
        stack.extend((c, classes) for c in n.named_children)
    return frozenset(out)


def _quiet(label: str, loud: frozenset[str]) -> bool:
    """A `j<key>` label of a key without a loud function (_loud_keys): it links nothing."""
    return label[0] == "j" and label[1:] not in loud


# AOTI301 judges an environment variable's write by the file's compiles, loads and CUDA uses
# anywhere: an edit spelling one of those is not sliced where the rule runs
ENV_READS = (b"compile", b"load", b"optimize", b"cuda", b"import")


class Slicer:
    """Per file (key): the last analysed text, for the next keystroke's slice."""

    def __init__(self):
        self._last: dict[str, Entry] = {}

    def remember(self, key: str, source: Source, config, result: Result, project) -> None:
        last = self._last.get(key)
        if source.tree.root_node.has_error and last is not None and last.config == config \
                and last.others == _others(project, source.path):
            return  # a text with a syntax error cannot be sliced from: keep the last clean one
        self._last[key] = Entry(source, config, result, _others(project, source.path), project)

    def forget(self, key: str) -> None:
        self._last.pop(key, None)

    def follow(self, key: str, source: Source, config, project, result: Result) -> None:
        """`source` was answered without a slice (the last findings moved): the entry follows
        the edit, or is forgotten (a slice from a text many edits old reads them all)."""
        entry = self._last.get(key)
        if entry is None:
            return
        if entry.config != config or entry.others != _others(project, source.path):
            self.forget(key)
            return
        if entry.behind:  # the edit it could not follow undone (typed and deleted): itself again
            self._resumed(key, entry, source.data)
            return
        try:
            moved = follow(entry, source, config, project, result)
        except RecursionError:
            moved = False
        if not moved and (entry.starts is None or entry.broken or entry.tainted or entry.source.data == source.data):
            self.forget(key)
        elif not moved:
            # kept one edit longer: `x` typed at column 0 of a blank line (a new statement) and
            # deleted again finds it as it was; any other next edit forgets it (a slice from a
            # text edits old would read everything between them)
            entry.behind = True

    def _resumed(self, key: str, entry: Entry, data: bytes) -> bool:
        """A `behind` entry given the document's text: current again where that is its own
        text, else forgotten (False)."""
        if data != entry.source.data:
            self.forget(key)
            return False
        entry.behind = False
        return True

    def prepare(self, key: str) -> None:
        """Read the last analysed text's statements, names and artifacts now (the server does it
        when typing pauses), not in the first keystroke after an analysis (~0.1-0.6 s for 20k
        lines, the first time most of it)."""
        entry = self._last.get(key)
        if entry is None or entry.starts is not None:
            return
        try:
            built = entry.build(incremental.anchor_tokens(entry.config))
        except RecursionError:
            built = False
        if not built:
            self.forget(key)

    def settled(self, key: str, data: bytes) -> None:
        """Typing settled on `data`, which gets a full analysis: a provisional entry of another
        text is forgotten (a slice from it would be provisional again); of this one it is kept
        (slice_result gives None for its own text; the next keystroke slices from it)."""
        last = self._last.get(key)
        if last is not None and last.broken and last.source.data != data:
            self.forget(key)

    def result(self, key: str, source: Source, config, project) -> Result | None:
        entry = self._last.get(key)
        if entry is None or entry.config != config or entry.others != _others(project, source.path):
            return None
        if entry.behind and not self._resumed(key, entry, source.data):
            return None
        try:
            got = slice_result(entry, source, config, project)
        except RecursionError:
            got = None
        undo = entry.__dict__.pop("replaced", None)
        if got is None and undo is not None:  # the graph holds the refused text's reads: back to the entry's
            entry.graph.replace(undo[0], undo[1], entry.pieces)
        if got is None and entry.starts is None:
            self.forget(key)  # its own text cannot be sliced from
        return got


def _others(project, path) -> tuple:
    """What the analysis reads of the project besides this file's own summary: others' summaries
    (when each last changed: an id() of a summary could be a freed one's, reused)."""
    return () if project is None else project.others(path)


WHY: dict[str, int] = {}  # why slices were refused, for tests and measurements


def _no(reason: str) -> None:
    WHY[reason] = WHY.get(reason, 0) + 1
    return None


@record("start", "old_end", "new_end", "p", "q", "gates", "rules", "jagged", "live", "loud", "window", "nodes",
        "new_infos", "new_pieces", "broken_now", "starts", "ends", "pieces", "infos")
class _Edit:
    """An edit of the entry's text confined to whole top-level statements, read from their own parse."""

    def __init__(self, start: int, old_end: int, new_end: int, p: int, q: int, gates: tuple, rules: tuple,
                 jagged: bool, live: bool, loud: frozenset, window: bytes, nodes: list, new_infos: list,
                 new_pieces: list, broken_now: bool, starts: list, ends: list, pieces: list, infos: list):
        self.start, self.old_end, self.new_end = start, old_end, new_end
        self.p, self.q = p, q  # edited statements: entry indices p .. n-q-1
        self.gates, self.rules, self.jagged = gates, rules, jagged
        self.live = live  # AOTI201/AOTI202 may report somewhere in the old or new text (a loud key: _loud_keys)
        self.loud, self.window = loud, window
        self.nodes = nodes  # the edited statements, parsed from the window
        self.new_infos, self.new_pieces, self.broken_now = new_infos, new_pieces, broken_now
        self.starts, self.ends, self.pieces, self.infos = starts, ends, pieces, infos


def _edit(entry: Entry, source: Source, config, project, tokens) -> _Edit | None:
    """The statements `source` edits of the entry's text, or None (why: _no) when a slice
    cannot follow it: a new or removed statement, a changed binding, an import, a file-wide
    gate, call or jagged read."""
    old, new = entry.source.data, source.data
    if b"\r" in new:
        return _no("syntax error (or CR)")
    start, old_end, new_end = incremental.edit_span(old, new)
    delta = new_end - old_end
    gates = entry.gates
    if _gate_may_flip(old, new, start, old_end, new_end, _gate_tokens(config, source.path)):
        gates = gates_of(source, config, project)
        if gates != entry.gates:
            return _no("a rule's file-wide gate flips")
    rules = tuple(r for r, g in zip(_rules(config, source.path), gates) if g)
    jagged = _jagged_on(gates, config, source.path)
    env = any(r.code == "AOTI301" for r in rules)
    n = len(entry.starts)
    p = bisect_left(entry.ends, start)
    q = n - bisect_right(entry.starts, old_end)
    if p >= n - q:
        return _no("between statements: a new statement or blank lin")
    lo = entry.starts[p]
    hi = entry.ends[n - q - 1] + delta
    # the edited statements parsed on their own, not the file (tree-sitter reparses the rest of
    # a 20k-line file in ~10-100 ms): the old text parsed cleanly (Entry.build), so a clean
    # window between sound neighbours is what the file's parse has there
    if (p and not entry.infos[p - 1].sound) or (q and not entry.infos[n - q].sound):
        return _no("edited statement unsound")
    base = entry.ends[p - 1] if p else 0
    window = new[base:entry.starts[n - q] + delta if q else len(new)]
    read = incremental.window_statements(window, base, tokens, broken=True)  # broken: a provisional slice
    if read is None:
        return _no("syntax error (or CR)")
    made, nodes, broken_now = read  # nodes: offsets from `base`
    if len(made) != n - q - p:
        return _no("statement count changed")
    edited = range(p, n - q)
    new_infos = [i for _, _, i in made]
    new_pieces = [piece_of(window, nodes[i - p], info, tokens) for i, info in zip(edited, new_infos)]
    loud = entry.loud
    if jagged:
        loud = loud.union(*(_loud_keys(window, nodes[i - p], config) for i in edited))
    # with no loud function in either text neither rule reports anything: what they read
    # file-wide (guards, evidence) need not be in the slice, nor be compared
    live = jagged and bool(loud)
    if live and entry.wide is None:
        return _no("what AOTI201/AOTI202 read file-wide is not known")  # a slice without it came since
    for i in edited:
        node = nodes[i - p]
        before, after = old[entry.starts[i]:entry.ends[i]], window[node.start_byte:node.end_byte]
        if node.type in ("import_statement", "import_from_statement", "future_import_statement"):
            return _no("edit of an import")
        if env and (_spells(before, ENV_READS) or _spells(after, ENV_READS)):
            return _no("edit of what AOTI301 reads file-wide")
        guard, evidence = _jagged_marks(window, node, config) if jagged else (False, False)
        if live and (i in entry.guards or guard):
            return _no("edit of a module-level guard (jagged)")
        if live and (i in entry.evidence) != evidence:
            return _no("edit of what AOTI201/AOTI202 read file-wide")  # the chunk joins or leaves the set
    for i, piece in zip(edited, new_pieces):
        old_piece = entry.pieces[i]
        if piece.binds != old_piece.binds or piece.setters != old_piece.setters or piece.definite != old_piece.definite:
            return _no("binds changed")
        if piece.ambient or old_piece.ambient:
            return _no("edit of a file-wide call")
        # a statement broken in the new text (broken_now: window_statements checked it starts
        # a line) or in the entry's, as its own parse had it (the entry's provisional chunks)
        if not new_infos[i - p].sound and not broken_now or not entry.infos[i].sound and i not in entry.broken:
            return _no("edited statement unsound")
    starts = entry.starts[:p] + [s for s, _, _ in made] + [s + delta for s in entry.starts[n - q:]]
    ends = entry.ends[:p] + [e for _, e, _ in made] + [e + delta for e in entry.ends[n - q:]]
    if lo != starts[p] or hi != ends[n - q - 1]:
        return _no("edit at a statement edge")
    return _Edit(start, old_end, new_end, p, q, gates, rules, jagged, live, loud, window, nodes, new_infos, new_pieces, broken_now,
                 starts, ends, entry.pieces[:p] + new_pieces + entry.pieces[n - q:],
                 entry.infos[:p] + new_infos + entry.infos[n - q:])


def follow(entry: Entry, source: Source, config, project, result: Result) -> bool:
    """The entry moved to `source` after a keystroke the server answered without it (the last
    findings moved: incremental.py decided no rule sees the edited statements). Without this,
    the next keystroke in AOTI code sliced from a text many edits old, its one edit span
    reaching from the first of them to the last: a whole analysis (~300 ms in 20k lines).
    False when the entry cannot follow (then it is forgotten)."""
    if entry.starts is None:
        return False
    if source.data == entry.source.data:
        return True
    if _blank_moved(entry, source.data):
        if entry.broken or entry.tainted:
            return False
        entry.source, entry.result = Source(source.data, source.path), result
        return True
    tokens = incremental.anchor_tokens(config)
    e = _edit(entry, source, config, project, tokens)
    if e is None:
        return _recounted(entry, source, config, project, result, tokens)
    edited = range(e.p, len(entry.starts) - e.q)
    if e.gates != entry.gates or any(entry.labels[i] for i in edited):
        return False
    # a statement no rule reads left broken by the keystroke (`xfor` typed at a line's start):
    # followed as PROVISIONAL slices are (_edit confined the error to the edited statements), so
    # the next keystroke in AOTI code still slices, provisionally, instead of analysing the
    # whole file (~300 ms in 20k lines); the server verifies it once typing settles
    broken = (entry.broken - set(edited)) | {i for i in edited if not e.new_infos[i - e.p].sound}
    graph = entry.graph if entry.graph is not None else _Graph(entry.pieces)
    graph.replace(edited, entry.pieces, e.pieces)
    entry.graph = graph
    entry.broken = frozenset(broken)
    entry.source, entry.result = Source(source.data, source.path), result
    entry.starts, entry.ends, entry.infos, entry.pieces = e.starts, e.ends, e.infos, e.pieces
    _jagged_moved(entry, e, config)
    return True


def _recounted(entry: Entry, source: Source, config, project, result: Result, tokens) -> bool:
    """follow() of an edit that adds or removes whole statements no rule reads (a line of code
    typed between two functions, a function deleted), which _edit cannot slice: the entry's
    per-statement lists are indexed anew around them and its name graph is rebuilt. Else a
    new statement typed and kept lost the entry, and the next keystroke in AOTI code was a
    whole analysis (~300 ms in 20k lines). Only from a clean entry, to statements that parse
    soundly and that nothing read file-wide spells (an import, a file-wide call, a jagged mark,
    what AOTI301 reads); the rules' gates must not flip."""
    if entry.broken or entry.tainted:
        return False
    old, new = entry.source.data, source.data
    if b"\r" in new:
        return False
    start, old_end, new_end = incremental.edit_span(old, new)
    if _gate_may_flip(old, new, start, old_end, new_end, _gate_tokens(config, source.path)) \
            and gates_of(source, config, project) != entry.gates:
        return False
    n, delta = len(entry.starts), new_end - old_end
    p = bisect_left(entry.ends, start)
    q = n - bisect_right(entry.starts, old_end)
    if p > n - q or (p and not entry.infos[p - 1].sound) or (q and not entry.infos[n - q].sound):
        return False
    base = entry.ends[p - 1] if p else 0
    window = new[base:entry.starts[n - q] + delta if q else len(new)]
    read = incremental.window_statements(window, base, tokens)
    if read is None or read[2] or len(read[0]) == n - q - p:
        return False  # a syntax error, or as many statements as before (_edit said why not)
    made, nodes, _ = read
    edited = range(p, n - q)
    if any(entry.labels[i] or entry.pieces[i].ambient or i in entry.guards or i in entry.evidence
           or i in entry.imports for i in edited):
        return False
    rules = tuple(r for r, g in zip(_rules(config, source.path), entry.gates) if g)
    jagged = _jagged_on(entry.gates, config, source.path)
    if any(r.code == "AOTI301" for r in rules) and (
            _spells(old[entry.starts[p]:entry.ends[n - q - 1]] if edited else b"", ENV_READS) or _spells(window, ENV_READS)):
        return False
    pieces = [piece_of(window, node, info, tokens) for node, (_, _, info) in zip(nodes, made)]
    for node, (_, _, info), piece in zip(nodes, made, pieces):
        if not info.sound or piece.ambient or node.type in ("import_statement", "import_from_statement",
                                                            "future_import_statement"):
            return False
        if jagged and (any(_jagged_marks(window, node, config)) or _loud_keys(window, node, config)):
            return False
    shift = len(made) - len(edited)

    def moved(chunks: frozenset[int]) -> frozenset[int]:  # none of them is an edited one
        return frozenset(i if i < p else i + shift for i in chunks)

    entry.starts = entry.starts[:p] + [s for s, _, _ in made] + [s + delta for s in entry.starts[n - q:]]
    entry.ends = entry.ends[:p] + [e for _, e, _ in made] + [e + delta for e in entry.ends[n - q:]]
    entry.infos = entry.infos[:p] + [i for _, _, i in made] + entry.infos[n - q:]
    entry.pieces = entry.pieces[:p] + pieces + entry.pieces[n - q:]
    entry.labels = entry.labels[:p] + [frozenset()] * len(made) + entry.labels[n - q:]
    entry.guards, entry.evidence, entry.imports = moved(entry.guards), moved(entry.evidence), moved(entry.imports)
    entry.graph = _Graph(entry.pieces)  # its lists hold chunk indices: read anew (a few ms in 20k lines)
    entry.source, entry.result = Source(source.data, source.path), result
    return True


def _blank_moved(entry: Entry, new: bytes) -> bool:
    """Whether the edit from the entry's text to `new` only adds or removes blank space between
    statements (Enter after a function's last line, blank lines), or blank lines inside one
    (incremental.blank_only): every statement is the same tokens, each still starting its line
    and apart from the one before by a line break. Then the entry's statements are moved past
    it (what else it holds names statements by index)."""
    old = entry.source.data
    start, old_end, new_end = incremental.edit_span(old, new)
    if old[start:old_end].strip() or new[start:new_end].strip() or b"\r" in new[start:new_end]:
        return False
    starts, ends = entry.starts, entry.ends
    k = bisect_left(starts, old_end)  # the first statement at or after the edit
    delta = new_end - old_end
    if k and ends[k - 1] > start:  # inside a statement: blank lines only, its tokens the same
        if not incremental.blank_only(old, new, start, old_end, new_end, [(starts[k - 1], ends[k - 1])]):
            return False
        entry.ends = ends[:k - 1] + [x + delta for x in ends[k - 1:]]
        entry.starts = starts[:k] + [x + delta for x in starts[k:]]
        return True
    if k < len(starts):
        at = starts[k] + delta
        if at and new[at - 1:at] != b"\n":
            return False  # it no longer starts its line
        if k and b"\n" not in new[ends[k - 1]:at]:
            return False  # joined to the one before
    entry.starts = starts[:k] + [x + delta for x in starts[k:]]
    entry.ends = ends[:k] + [x + delta for x in ends[k:]]
    return True


def _jagged_moved(entry: Entry, e: _Edit, config) -> None:
    """What the entry knows for AOTI201/AOTI202, moved to the edited text."""
    if not e.jagged:
        return
    entry.loud = e.loud  # a key loud once stays loud (a superset is sound)
    if not e.live:  # guards and evidence were not in the slice: what they conclude is unknown now
        entry.wide = None
    marks = {i: _jagged_marks(e.window, node, config) for i, node in zip(range(e.p, e.p + len(e.new_infos)), e.nodes)}
    entry.guards = frozenset({j for j in entry.guards if j not in marks} | {i for i, m in marks.items() if m[0]})
    entry.evidence = frozenset({j for j in entry.evidence if j not in marks} | {i for i, m in marks.items() if m[1]})


def slice_result(entry: Entry, source: Source, config, project) -> Result | None:
    """The findings of `source` (the entry's text after an edit), or None: then analyse it all.
    On success the entry becomes `source`'s."""
    tokens = incremental.anchor_tokens(config)
    if entry.starts is None and not entry.build(tokens):
        return _no("old text has a syntax error")
    old, new = entry.source.data, source.data
    if old == new:
        if entry.broken:  # a provisional result: the caller wants the file's own analysis
            return _no("provisional text analysed again")
        return entry.result
    e = _edit(entry, source, config, project, tokens)
    if e is None:
        return None
    start, old_end, new_end, p, q = e.start, e.old_end, e.new_end, e.p, e.q
    gates, rules, jagged, new_infos, loud = e.gates, e.rules, e.jagged, e.new_infos, e.loud
    n = len(entry.starts)
    edited = range(p, n - q)
    starts, ends, pieces, infos = e.starts, e.ends, e.pieces, e.infos

    graph = entry.graph = entry.graph if entry.graph is not None else _Graph(entry.pieces)
    graph.replace(edited, entry.pieces, pieces)
    entry.replaced = (edited, pieces)  # undone if this edit is refused (Slicer.result)
    changed = graph.forward(set(edited))
    affected = set(changed)
    found_in = {_chunk(entry.starts, f.start) for f in entry.result.findings}

    def cites_readers(b: int) -> bool:
        """Whether findings of chunk `b` may depend on a statement that reads its names: an
        import (AOTI001-003's "imported but never used"), an AOTI site (a compile cites its
        loaders, a forward its model's exports and calls: the labels), a chunk with findings,
        one binding conditionally or a global. Any other chunk's findings are the deprecated
        calls it makes itself and AOTI301's variables (their reads refused above): a statement
        reading it (a `class Net` exported elsewhere) changes none of them."""
        piece = pieces[b]
        return b in entry.imports or b in found_in or not piece.definite or bool(piece.setters) or piece.ambient \
            or any(not _quiet(label, loud) for label in entry.labels[b])

    for c in changed:
        affected |= {b for b in graph.binders_of(c) if cites_readers(b)} | graph.readers_of(c)
    for i in edited:  # what they read before the edit (an import no longer used now has a finding)
        affected |= {b for b in graph.binders_of(i, entry.pieces[i]) if cites_readers(b)}
    for i in edited:  # a lazily set global: other bindings of the name decide whether it is followed
        for name in pieces[i].binds | pieces[i].setters:
            others = [j for j in graph.binders.get(name, ()) if j not in edited]
            if len([j for j in others if name not in pieces[j].nones and name not in pieces[j].setters]) < 2:
                affected.update(others)
    by_label = entry.by_label()
    for c in list(changed):
        for label in entry.labels[c]:
            if not _quiet(label, loud):
                affected |= by_label[label]
    # the chunks whose findings came from an analysis with a broken statement are analysed
    # again (PROVISIONAL): the findings kept are those of the last clean text, moved
    affected |= entry.tainted
    broken = (entry.broken - set(edited)) | {i for i in edited if not new_infos[i - p].sound}
    if len(affected) > MAX_SLICE * n > 25:
        return _no("too many affected")
    # what the affected chunks' analysis reads: binders (transitively), readers, artifact mates
    kept = set(affected)
    for c in affected:
        if c in changed or not pieces[c].hub or c in found_in:
            kept |= graph.readers_of(c)
        for label in entry.labels[c]:
            if not _quiet(label, loud):
                kept |= by_label[label]
    ambient = entry.ambient()  # an edit of one is refused above: the same chunks after it
    for i in edited:  # an alias of a file-wide call, read or no longer read
        if any(j in ambient for j in graph.binders_of(i) | graph.binders_of(i, entry.pieces[i])):
            return _no("edit of a file-wide call")
    wide = set(entry.guards) | set(entry.evidence) if e.live else set()
    kept = graph.backward(kept | set(ambient) | set(entry.imports) | wide)
    if len(kept) > MAX_SLICE * n > 25:
        return _no("slice too large")

    # a chunk sharing a line with a kept one is kept too (a trailing noqa comment, `a = 1; b = 2`)
    for j in sorted(kept):
        k = j - 1
        while k >= 0 and k not in kept and b"\n" not in new[ends[k]:starts[k + 1]]:
            kept.add(k)
            k -= 1
        k = j + 1
        while k < n and k not in kept and b"\n" not in new[ends[k - 1]:starts[k]]:
            kept.add(k)
            k += 1
    if not all(infos[j].sound or j in broken for j in kept):
        return _no("a statement not starting its line: the compact t")
    # the compact text: the kept chunks where they stand, only the line breaks of the others
    # (lines and columns stay; offsets are mapped back through `segments`); parsing the blanked
    # file instead costs ~100 ms for 500 KB of spaces
    parts, segments, at, size = [], [], 0, 0
    for j in sorted(kept):
        gap = b"\n" * new.count(b"\n", at, starts[j])
        parts += [gap, new[starts[j]:ends[j]]]
        size += len(gap)
        segments.append((size, starts[j], ends[j] - starts[j]))
        size += ends[j] - starts[j]
        at = ends[j]
    parts.append(b"\n" * new.count(b"\n", at))
    blank = _Compact(b"".join(parts), source.path)
    if blank.tree.root_node.has_error and not _confined(blank.tree.root_node, sorted(kept), segments, broken):
        return _no("compact text has an error")
    blank.context = Context(blank, config, project)
    part = analyze(blank, config, rules=rules, project=project)  # the rules the whole text gets
    if part.errors or part.skipped:
        return _no("rule error or budget")
    if e.live and _jagged_wide(blank.context) != entry.wide:  # every forward's scope may change with it
        return _no("what AOTI201/AOTI202 read file-wide changed")
    to_real = _Map(segments)

    # the affected chunks' artifacts after the edit must be ones the slice already held
    compact_starts = [to_real.back(starts[j]) if j in kept else -1 for j in range(n)]
    new_labels = _labels_mapped(blank.context, starts, compact_starts, kept, affected, jagged)
    if new_labels is None:
        return _no("labels")
    for c in affected:
        for label in new_labels[c] - entry.labels[c]:
            if label[0] in "cl" or _quiet(label, loud):
                continue  # the chunk's own compile or load, numbered by chunk: mates found through k
            if not by_label.get(label, set()) <= affected:
                return _no("new artifact outside the slice")

    shift = incremental.shift_of(old, new, start, old_end, new_end)
    name = os.path.basename(source.path)
    findings, origin = [], {}  # origin: id of a kept finding -> its index in the last result
    for k, f in enumerate(entry.result.findings):
        c = _chunk(entry.starts, f.start)
        if c < 0 or f.start >= entry.ends[c]:
            return _no("not inside a statement")
        if c in affected:
            continue
        if _touches(f, start, old_end):
            return _no("kept finding names the edit")
        g = incremental.recited(incremental.shift_finding(f, shift, partial=True), shift, name)
        if g is None:
            return _no("a cited line the edit spans")
        origin[id(g)] = k
        findings.append(g)
    for f in part.findings:
        f = to_real.finding(f)
        if f is None:
            return _no("finding outside kept chunks")
        c = _chunk(starts, f.start)
        if c < 0 or f.start >= ends[c]:
            return _no("finding outside a statement")
        if c in affected:
            findings.append(f)
    findings.sort(key=lambda f: f.sort_key())
    result = Result(findings, [], None)
    # its lazy fixes were planned on other texts (the one before the edit, the compact one):
    # their edits come from a full analysis of this text (the server's result(doc, full=True))
    result.partial = True
    # the editor's diagnostics of the kept findings can be moved, not made anew (lsp/convert.py)
    result.moved = (entry.result, shift)
    entry.result.__dict__.pop("moved", None)  # no chain of every result since the last analysis
    result.origin = [origin.get(id(f)) for f in findings]

    if set(edited) <= affected and all(new_labels[c] == entry.labels[c] for c in affected):
        labels = entry.labels  # the same list: Entry.by_label() stays
    else:
        labels = list(entry.labels[:p]) + [frozenset()] * (n - q - p) + list(entry.labels[n - q:])
        for c in affected:
            labels[c] = new_labels[c]
    kept_source = Source(new, source.path)  # its tree, if ever read (Entry.build), parsed then
    entry.source, entry.result = kept_source, result
    entry.starts, entry.ends, entry.infos, entry.pieces, entry.labels = starts, ends, infos, pieces, labels
    entry.graph, entry.gates = graph, gates
    _jagged_moved(entry, e, config)
    # PROVISIONAL: a result with a broken statement is verified once typing settles (the
    # server's verify_results analyses the file then). Without one it is a full analysis's:
    # every chunk whose findings came from a broken text was in this slice (entry.tainted), the
    # others' findings were kept from the last clean text, moved through edits none of them
    # was affected by (an edit keeps a statement's binds: the same chunks read it, before,
    # while broken and after)
    entry.broken = frozenset(broken)
    entry.tainted = frozenset(entry.tainted | affected) if broken else frozenset()
    result.provisional = bool(broken)
    result.sliced = (len(affected), len(kept), n)
    # incremental.py's State of the new text, without its tree: the chunks, the edited ones, the old text
    result.chunks = (starts, ends, infos, (p, n - q), old)
    return result


def _confined(root, order: list[int], segments, broken) -> bool:
    """Whether the compact text's errors lie inside broken chunks: one top-level statement per
    kept chunk, where it was put, an error only in a broken one."""
    kids = root.children
    if not broken or len(kids) != len(order):
        return False
    return all(k.type != "ERROR" and not k.is_missing and k.is_named and (k.start_byte, k.end_byte) == (c, c + length)
               and (not k.has_error or j in broken) for k, j, (c, _, length) in zip(kids, order, segments))


def _spells(text: bytes, words) -> bool:
    return any(w in text for w in words)


class _Compact(Source):
    """The compact text: the engine's token gates were decided on the whole text (the rules
    passed to analyze), so every token counts as spelt."""

    def has(self, token: str) -> bool:
        return True


def _touches(f, start: int, end: int) -> bool:
    """Whether a kept finding names a place inside the edited text."""
    spots = [(f.start, f.end)] + [(r.start, r.end) for r in f.related if r.path is None]
    for fix in (f.fix, *f.alternatives):
        if fix is not None and not isinstance(fix, LazyFix):
            spots += [(e.start, e.end) for e in fix.edits if e.path is None]
    return any(s < end and e > start or start <= s < end for s, e in spots)


class _Graph:
    """Module-level names between chunks: who binds, who reads (now, or later in a function)."""

    def __init__(self, pieces: list[Piece]):
        self.pieces = pieces
        self.binders: dict[str, list[int]] = {}
        self.now: dict[str, list[int]] = {}
        self.later: dict[str, list[int]] = {}
        for i, piece in enumerate(pieces):
            for name in piece.binds | piece.setters:
                self.binders.setdefault(name, []).append(i)
            for name in piece.now:
                self.now.setdefault(name, []).append(i)
            for name in piece.later:
                self.later.setdefault(name, []).append(i)

    def replace(self, edited, old: list[Piece], new: list[Piece]) -> None:
        """The edited chunks' reads as they are now (their bindings are the same)."""
        self.pieces = new
        for i in edited:
            for names, table in ((old[i].now - new[i].now, self.now), (old[i].later - new[i].later, self.later)):
                for name in names:
                    table[name].remove(i)
            for names, table in ((new[i].now - old[i].now, self.now), (new[i].later - old[i].later, self.later)):
                for name in names:
                    insort(table.setdefault(name, []), i)

    def reaching(self, name: str, i: int, later: bool) -> set[int]:
        """The chunks whose binding of `name` a read in chunk i may see."""
        binders = self.binders.get(name, [])
        out = {j for j in binders if name in self.pieces[j].setters}
        k = bisect_right(binders, i) - 1
        while k >= 0:
            j = binders[k]
            out.add(j)
            if j < i and self.pieces[j].definite:
                break
            k -= 1
        if binders and (later or k < 0):
            out.add(binders[-1])
        if later or k < 0:  # a use before any binding (a function called later, a name unbound yet)
            out.update(j for j in binders if j > i)
        return out

    def binders_of(self, i: int, piece: Piece | None = None) -> set[int]:
        piece = piece or self.pieces[i]
        out: set[int] = set()
        for name in piece.now:
            if name in self.binders:
                out |= self.reaching(name, i, False)
        for name in piece.later:
            if name in self.binders:
                out |= self.reaching(name, i, True)
        out.discard(i)
        return out

    def readers_of(self, j: int) -> set[int]:
        piece = self.pieces[j]
        out: set[int] = set()
        for name in piece.binds | piece.setters:
            for i in self.now.get(name, ()):
                if i != j and j in self.reaching(name, i, False):
                    out.add(i)
            for i in self.later.get(name, ()):
                if i != j and j in self.reaching(name, i, True):
                    out.add(i)
        return out

    def forward(self, start: set[int]) -> set[int]:
        """`start` and every chunk whose meaning follows from them (readers, transitively)."""
        return _closure(start, self.readers_of)

    def backward(self, start: set[int]) -> set[int]:
        """`start` and every chunk they read, transitively."""
        return _closure(start, self.binders_of)


def _closure(start: set[int], step) -> set[int]:
    out, todo = set(start), list(start)
    while todo:
        for j in step(todo.pop()):
            if j not in out:
                out.add(j)
                todo.append(j)
    return out


class _Map:
    """Offsets of the compact text -> the file's: (compact start, file start, length) per kept chunk."""

    def __init__(self, segments):
        self.segments = segments
        self.cstarts = [c for c, _, _ in segments]
        self.rstarts = [r for _, r, _ in segments]

    def at(self, offset: int) -> int | None:
        k = bisect_right(self.cstarts, offset) - 1
        if k < 0:
            return None
        c, r, length = self.segments[k]
        return r + offset - c if offset <= c + length else None

    def back(self, offset: int) -> int:
        k = bisect_right(self.rstarts, offset) - 1
        c, r, _ = self.segments[k]
        return c + offset - r

    def finding(self, f):
        import copy

        start, end = self.at(f.start), self.at(f.end)
        if start is None or end is None:
            return None
        related = self._places(f.related)
        if related is None:
            return None
        fixes = []
        for fix in (f.fix, *f.alternatives):
            if fix is None:
                fixes.append(fix)
                continue
            if isinstance(fix, LazyFix):  # planned on the compact text: never built from here
                fixes.append(LazyFix(fix.title, fix.applicability, _unbuildable, fix.other_files, fix.snippet, fix.basis))
                continue
            edits = self._places(fix.edits)
            if edits is None:
                return None
            fixes.append(replace(fix, edits=tuple(edits)))
        g = copy.copy(f)
        g.start, g.end, g.related, g.fix, g.alternatives = start, end, related, fixes[0], tuple(fixes[1:])
        return g

    def _places(self, items) -> list | None:
        """Related places or edits in this file, at their offsets in the file (None: one is not
        inside the slice's text)."""
        out = []
        for x in items:
            if x.path is None:
                a, b = self.at(x.start), self.at(x.end)
                if a is None or b is None:
                    return None
                x = replace(x, start=a, end=b)
            out.append(x)
        return out


def _unbuildable():
    raise RuntimeError("a slice's fix is built from a full analysis (AotiServer.result(doc, full=True))")


def _labels_mapped(ctx, starts, compact_starts, kept, wanted, jagged):
    """labels_of on the compact text, for chunks numbered as in the file."""
    order = sorted(kept)
    local = labels_of(ctx, [compact_starts[j] for j in order], range(len(order)), jagged)
    out = [frozenset()] * len(starts)
    for k, j in enumerate(order):
        if j in wanted:
            out[j] = frozenset(_renumber(label, order) for label in local[k])
    return out


def _renumber(label: str, order) -> str:
    if label[0] in "cl" and label[1:].isdigit():
        return label[0] + str(order[int(label[1:])])
    return label
