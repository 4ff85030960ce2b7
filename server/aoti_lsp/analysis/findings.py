"""What rules produce: findings with byte ranges, and fixes as byte-range edits.

A fix whose edits are costly to build (the migration, with libcst) is a `LazyFix`: whether it
exists, its title and applicability and the other files it edits are decided when the finding
is made, its edits only when someone reads them (--fix, --diff, JSON, a quick fix, a hover).
`portable()` turns it into what may be pickled (worker processes, the cache): the built fix, or
a `FixStub` without edits when the output will not need them.
"""

from __future__ import annotations

from collections.abc import Callable

from aoti_lsp.analysis.records import record, replace, set_field
from aoti_lsp.logs import logger

# True: every fix is built when its finding is made (what the lazy ones are tested against)
EAGER_FIXES = False


class Choice(str):
    """A few named strings, as `class X(str, Enum)` gives them and as this package reads them:
    members by attribute (`X.SAFE`), `X("safe")` is that member (ValueError for another value),
    `.value`, `.name`, equal to their string, one object through pickle (worker processes).
    Without the enum module, whose import cost ~4 ms of a ~20 ms pre-commit run (issue 25)."""

    _members: dict = {}

    def __init_subclass__(cls) -> None:
        cls._members = {}
        for name, value in list(vars(cls).items()):
            if name.isupper() and type(value) is str:
                member = str.__new__(cls, value)
                member.name = name
                cls._members[value] = member
                setattr(cls, name, member)

    def __new__(cls, value):
        try:
            return cls._members[value]
        except (KeyError, TypeError):
            raise ValueError(f"{value!r} is not a valid {cls.__name__}") from None

    @property
    def value(self) -> str:
        return str.__str__(self)

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}: {self.value!r}>"

    def __reduce__(self):
        return type(self), (self.value,)


class Applicability(Choice):
    """ruff's split: safe fixes run under --fix and fix-all; unsafe ones need --unsafe-fixes
    (the editor still offers them as quick fixes); display-only fixes are never applied."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY = "display-only"


class Severity(Choice):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@record("start", "end", "text", "path", frozen=True)
class Edit:
    def __init__(self, start: int, end: int, text: str, path: str | None = None):
        set_field(self, "start", start)  # byte offsets into the source
        set_field(self, "end", end)
        set_field(self, "text", text)
        set_field(self, "path", path)  # None: the finding's file; else another file of the project (absolute)

    def overlaps(self, other: "Edit") -> bool:
        return self.start < other.end and other.start < self.end or (self.start == other.start and self.start == self.end == other.end)


def kind_of(applicability: Applicability, snippet: bool) -> str:
    """What the CLI shows: a snippet fix is never applied by --fix, so it is display-only."""
    return Applicability.DISPLAY.value if snippet or applicability == Applicability.DISPLAY else applicability.value


def applicable(fix, unsafe: bool) -> bool:
    """Whether --fix applies `fix` (with --unsafe-fixes: `unsafe`). Here, not in the fixer: a
    check's report counts its fixes without importing what applies them."""
    if fix is None or fix.snippet:
        return False
    return fix.applicability == Applicability.SAFE or (unsafe and fix.applicability == Applicability.UNSAFE)


def tier(applicability: Applicability | str, snippet: bool = False) -> str:
    """A fix's tier in the words the CLI's text, the hover and the editor's titles all use:
    `safe` (--fix, fix-all), `unsafe` (--fix --unsafe-fixes), and what --fix never applies but
    the editor does in one keypress: a decision (`unsafe, editor only`: its title says what it
    decides) or a snippet with placeholders to fill in (`editor only`)."""
    value = getattr(applicability, "value", applicability)
    if snippet:
        return "editor only"
    return "unsafe, editor only" if value == Applicability.DISPLAY.value else value


@record("title", "edits", "applicability", "snippet", frozen=True)
class Fix:
    def __init__(self, title: str, edits: tuple[Edit, ...], applicability: Applicability = Applicability.SAFE,
                 snippet: bool = False):
        set_field(self, "title", title)
        set_field(self, "edits", edits)
        set_field(self, "applicability", applicability)
        set_field(self, "snippet", snippet)  # edits hold LSP snippet placeholders: editor only

    @property
    def other_files(self) -> set[str]:
        """Files besides the finding's that the fix edits (a migration planned per artifact)."""
        return {e.path for e in self.edits if e.path is not None}

    @property
    def kind(self) -> str:
        """What the CLI shows: a snippet fix is never applied by --fix, so it is display-only."""
        return kind_of(self.applicability, self.snippet)

    def plain_edits(self) -> tuple[Edit, ...]:
        """The edits as code (snippet placeholders replaced by their defaults)."""
        if not self.snippet:
            return self.edits
        return tuple(Edit(e.start, e.end, plain_text(e.text)) for e in self.edits)

    def resolve(self) -> Fix | None:
        """The fix with its edits (None: they could not be built, then there is no fix)."""
        return self


def _FROM_ORIGIN() -> tuple:  # a moved LazyFix's build: its origin's edits, moved (LazyFix._moved)
    raise AssertionError("called through LazyFix.edits only")


class LazyFix:
    """A fix whose edits are built on first use, once. Title, applicability and the other files
    it edits are known up front (a preflight has ruled out every reason the build would refuse).
    A build that fails all the same is a bug: it is logged, and the fix then has no edits and
    `resolve()` is None: --fix skips it, the editor offers nothing."""

    lazy = True

    def __init__(self, title: str, applicability: Applicability, build: Callable[[], tuple[Edit, ...]],
                 other_files: frozenset[str] | set[str] = frozenset(), snippet: bool = False,
                 basis: dict[str, bytes] | None = None):
        self.title = title
        self.applicability = applicability
        self.snippet = snippet
        self._other_files = frozenset(other_files)
        self.basis = basis or {}  # other file -> the text its edits are offsets into
        self._build: Callable[[], tuple[Edit, ...]] | None = build
        self._edits: tuple[Edit, ...] | None = None
        self.failed: str | None = None
        # a fix moved past edits elsewhere in its file (shifted): the fix it was planned as, and
        # the moves of this file's offsets since, applied in order once that one is built
        self._origin: LazyFix | None = None
        self._moves: tuple[Callable[[int], int], ...] = ()

    @property
    def built(self) -> bool:
        return self._build is None

    @property
    def edits(self) -> tuple[Edit, ...]:
        if self._build is not None:
            build, self._build = self._build, None  # what it holds (trees, contexts) is let go
            try:
                self._edits = tuple(self._moved() if build is _FROM_ORIGIN else build())
            except Exception as exc:  # the preflight said it would build: a bug, never a crash
                logger(__name__).exception("the fix '%s' could not be built after its preflight passed", self.title)
                self.failed, self._edits = repr(exc), ()
        return self._edits

    def _moved(self) -> tuple[Edit, ...]:
        origin, moves = self._origin, self._moves
        self._origin, self._moves = None, ()
        edits = origin.edits
        self.failed = origin.failed  # logged once, by the origin
        return _move(edits, moves)

    def shifted(self, at: Callable[[int], int]) -> LazyFix:
        """The fix after an edit elsewhere in its file moved its offsets (`at`: old offset ->
        new; incremental.py): the same title, applicability and files; its edits in this file,
        when built, are the planned ones moved. Nothing is built here, and moves pile up flat
        (a keystroke each), never as a chain of fixes."""
        moved = object.__new__(LazyFix)  # its fields as they are (no __init__: a move per finding per key)
        moved.__dict__.update(self.__dict__)
        moved._build, moved._edits = None, None
        if self.built:
            moved._edits, moved.failed = _move(self._edits, (at,)), self.failed
        else:
            moved._origin = self._origin or self
            moved._moves = (*self._moves, at)
            moved._build = _FROM_ORIGIN  # not its bound _moved: a cycle per finding per keystroke for the GC
        return moved

    @property
    def other_files(self) -> set[str]:
        return set(self._other_files)

    @property
    def kind(self) -> str:
        return kind_of(self.applicability, self.snippet)

    def plain_edits(self) -> tuple[Edit, ...]:
        return Fix.plain_edits(self)  # type: ignore[arg-type]

    def resolve(self) -> Fix | None:
        edits = self.edits
        return None if self.failed else Fix(self.title, edits, self.applicability, self.snippet)

    def __repr__(self) -> str:
        return f"LazyFix({self.title!r}, {self.applicability}, built={self.built})"


@record("title", "applicability", "snippet", "files", frozen=True)
class FixStub:
    """What a worker process sends (and the cache keeps) of a lazy fix when the output does not
    need its edits: everything but them. Reading its edits is a bug of the caller."""

    def __init__(self, title: str, applicability: Applicability, snippet: bool = False,
                 files: frozenset[str] = frozenset()):
        set_field(self, "title", title)
        set_field(self, "applicability", applicability)
        set_field(self, "snippet", snippet)
        set_field(self, "files", files)

    @property
    def other_files(self) -> set[str]:
        return set(self.files)

    @property
    def kind(self) -> str:
        return kind_of(self.applicability, self.snippet)

    @property
    def edits(self):
        raise RuntimeError(f"the edits of '{self.title}' were not built: this output needs them (findings.portable)")

    def plain_edits(self):
        return self.edits

    def resolve(self):
        return self.edits


def _move(edits: tuple[Edit, ...], moves) -> tuple[Edit, ...]:
    """Edits of the finding's file (path None) with their offsets passed through each move."""
    out = []
    for e in edits:
        if e.path is None:
            start, end = e.start, e.end
            for at in moves:
                start, end = at(start), at(end)
            e = Edit(start, end, e.text, e.path)
        out.append(e)
    return tuple(out)


def portable(finding: Finding, edits: bool) -> Finding:
    """`finding` as it may be pickled: each lazy fix built (`edits`), or a stub without edits;
    a lazy fix already built travels built. The finding itself is copied, never changed."""
    def one(fix):
        if not isinstance(fix, LazyFix):
            return fix
        if edits or fix.built:
            return fix.resolve()
        return FixStub(fix.title, fix.applicability, fix.snippet, frozenset(fix.other_files))

    if not isinstance(finding.fix, LazyFix) and not any(isinstance(a, LazyFix) for a in finding.alternatives):
        return finding
    return replace(finding, fix=one(finding.fix), alternatives=tuple(a for a in map(one, finding.alternatives) if a))


def needs_edits(findings) -> bool:
    """Whether any finding's fix is a stub (its edits were left behind in another process)."""
    return any(isinstance(f.fix, FixStub) or any(isinstance(a, FixStub) for a in f.alternatives) for f in findings)


@record("start", "end", "message", "path", frozen=True)
class Related:
    def __init__(self, start: int, end: int, message: str, path: str | None = None):
        set_field(self, "start", start)
        set_field(self, "end", end)
        set_field(self, "message", message)
        set_field(self, "path", path)  # None: same file


@record("code", "message", "start", "end", "fix", "related", "severity", "deprecated", "unnecessary", "path",
        "alternatives")
class Finding:
    def __init__(self, code: str, message: str, start: int, end: int, fix: Fix | LazyFix | FixStub | None = None,
                 related: list[Related] | None = None, severity: Severity = Severity.WARNING,
                 deprecated: bool = False, unnecessary: bool = False, path: str = "<string>",
                 alternatives: tuple[Fix, ...] = ()):
        self.code, self.message, self.start, self.end, self.fix = code, message, start, end, fix
        self.related = [] if related is None else related
        self.severity, self.deprecated, self.unnecessary, self.path = severity, deprecated, unnecessary, path
        # more quick fixes for the same problem, offered by the editor after `fix`; the CLI and
        # fix-all apply only `fix`
        self.alternatives = alternatives

    def sort_key(self) -> tuple:
        return (self.path, self.start, self.code)


def severity_of(finding: Finding) -> Severity:
    """One severity per rule, in every output format: the engine stamps the rule's on each
    finding it reports (engine._analyze), so nothing here needs the rules."""
    return finding.severity


def plain_text(snippet: str) -> str:
    """Snippet text as the code it stands for, for clients without snippet edits:
    `${1:default}` -> default, `$1` / `${1}` -> nothing, `\\$` `\\}` `\\\\` unescaped."""
    out, i, n = [], 0, len(snippet)
    while i < n:
        ch = snippet[i]
        if ch == "\\" and i + 1 < n and snippet[i + 1] in "$}\\":
            out.append(snippet[i + 1])
            i += 2
        elif ch == "$" and i + 1 < n and snippet[i + 1].isdigit():
            i += 1
            while i < n and snippet[i].isdigit():
                i += 1
        elif ch == "$" and snippet.startswith("{", i + 1):
            import re  # a snippet (an editor-only fix) only

            m = re.match(r"\$\{\d+(:?)", snippet[i:])
            if m is None:
                out.append(ch)
                i += 1
                continue
            i += m.end()
            while i < n and snippet[i] != "}":  # the default, itself escaped
                if snippet[i] == "\\" and i + 1 < n and snippet[i + 1] in "$}\\":
                    i += 1
                out.append(snippet[i])
                i += 1
            i += 1  # the closing brace
        else:
            out.append(ch)
            i += 1
    return "".join(out)
