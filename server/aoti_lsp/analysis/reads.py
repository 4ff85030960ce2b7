"""The `.pt2` packages a check reads on disk while its result is recorded for the cache
(cache.recording): a cached result depends on them too. Kept apart from pt2.py so that a check
which reads no package imports no zipfile."""

from __future__ import annotations

current: set[str] | None = None  # while a result is recorded: every package path asked for
