"""What rules produce: findings with byte ranges, and fixes as byte-range edits."""

from __future__ import annotations

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
