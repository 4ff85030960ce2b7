"""re.compile, compiled on first use: a module's patterns for rare paths (a notebook, a fix's
edits, a noqa comment) cost ~0.1-0.3 ms each to compile, paid at import by every check. `re`
itself is imported then too: it costs ~7 ms (enum), more than a one-file run's own work."""

from __future__ import annotations


class _Later:
    __slots__ = ("_args", "_compiled")

    def __init__(self, args: tuple):
        self._args = args
        self._compiled = None

    def __getattr__(self, name: str):  # .match, .search, .sub, .pattern ...: the compiled pattern's
        if self._compiled is None:
            import re

            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)

    def __repr__(self) -> str:
        return f"lazyre.compile{self._args!r}"


def compile(pattern, flags: int = 0):  # as re.compile (a re.Pattern when used): the call sites keep their spelling
    return _Later((pattern, flags))
