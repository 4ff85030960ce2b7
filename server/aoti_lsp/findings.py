"""What rules produce: findings with byte ranges, and fixes as byte-range edits."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum


class Applicability(str, Enum):
    """ruff's split: safe fixes run under --fix and fix-all; unsafe ones need --unsafe-fixes
    (the editor still offers them as quick fixes); display-only fixes are never applied."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY = "display-only"


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Edit:
    start: int  # byte offsets into the source
    end: int
    text: str
    path: str | None = None  # None: the finding's file; else another file of the project (absolute)

    def overlaps(self, other: "Edit") -> bool:
        return self.start < other.end and other.start < self.end or (self.start == other.start and self.start == self.end == other.end)


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    applicability: Applicability = Applicability.SAFE
    snippet: bool = False  # edits hold LSP snippet placeholders: editor only

    @property
    def other_files(self) -> set[str]:
        """Files besides the finding's that the fix edits (a migration planned per artifact)."""
        return {e.path for e in self.edits if e.path is not None}

    @property
    def kind(self) -> str:
        """What the CLI shows: a snippet fix is never applied by --fix, so it is display-only."""
        return Applicability.DISPLAY.value if self.snippet or self.applicability == Applicability.DISPLAY else self.applicability.value

    def plain_edits(self) -> tuple[Edit, ...]:
        """The edits as code (snippet placeholders replaced by their defaults)."""
        if not self.snippet:
            return self.edits
        return tuple(Edit(e.start, e.end, plain_text(e.text)) for e in self.edits)


@dataclass(frozen=True)
class Related:
    start: int
    end: int
    message: str
    path: str | None = None  # None: same file


@dataclass
class Finding:
    code: str
    message: str
    start: int
    end: int
    fix: Fix | None = None
    related: list[Related] = field(default_factory=list)
    severity: Severity = Severity.WARNING
    deprecated: bool = False
    unnecessary: bool = False
    path: str = "<string>"
    # more quick fixes for the same problem, offered by the editor after `fix`; the CLI and
    # fix-all apply only `fix`
    alternatives: tuple[Fix, ...] = ()

    def sort_key(self) -> tuple:
        return (self.path, self.start, self.code)


def severity_of(finding: Finding) -> Severity:
    """One severity per rule, from the rule class, in every output format."""
    from aoti_lsp.rules import rule_by_code  # rules import this module

    rule = rule_by_code(finding.code)
    return rule.severity if rule is not None else finding.severity


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
