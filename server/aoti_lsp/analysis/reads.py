"""The files a check reads on disk, beyond its own, while its result is recorded for the cache
(cache.recording): `.pt2` packages, and other modules read for their constants or trees (a
module holding only paths has no summary, so the project digest does not cover it). A cached
result depends on them too. Kept apart from pt2.py so that a check which reads no package
imports no zipfile."""

from __future__ import annotations

current: set[str] | None = None  # while a result is recorded: every such path asked for


def record(path: str) -> None:
    """A check being recorded for the cache read (or looked for) `path`: its cached result is
    valid only while that file's stamp is unchanged."""
    if current is not None:
        current.add(path)
