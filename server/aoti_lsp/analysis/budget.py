"""Bounds on the work spent on one file: a size cap (the CLI's and the server's) and a time
budget. Past either, the file gets a clear "analysis skipped" note instead of a hang.

The time budget is a SIGALRM timer, so it can stop pure-Python work that never returns (a
look-up that loops); it is armed only on a main thread (the CLI, its workers, the server's
event loop) and not nested: an inner `deadline()` under an armed one does nothing."""

from __future__ import annotations

import os
MAX_BYTES = 10 * 1024 * 1024
SECONDS = float(os.environ.get("AOTI_LSP_TIME_BUDGET", "20"))  # per file and per fix run; 0: none
SERVER_SECONDS = min(SECONDS, 5.0) if SECONDS > 0 else 0  # per analysis in the server: it must answer

_armed = False


class OverBudget(BaseException):
    """The file's analysis went past the time budget. A BaseException, so that the
    `except Exception` guards around each rule do not swallow it."""


def too_large(size: int) -> str | None:
    if size > MAX_BYTES:
        return f"analysis skipped: too large ({size / 1024 / 1024:.1f} MB, the limit is {MAX_BYTES // 1024 // 1024} MB)"
    return None


def too_slow(seconds: float = SECONDS) -> str:
    return f"analysis skipped: too slow (over the {seconds:g} s budget)"


def armed() -> bool:
    return _armed


class deadline:
    """Raise OverBudget in the body after `seconds` (default SECONDS). A class, not
    @contextmanager: contextlib costs ~0.4 ms of a run's start."""

    def __init__(self, seconds: float | None = None):
        self.seconds = SECONDS if seconds is None else seconds
        self._disarm = None

    def __enter__(self) -> None:
        try:
            _arm(self)
        except BaseException:  # the alarm of a tiny budget, before the body
            self.__exit__()
            raise

    def __exit__(self, *exc) -> None:
        disarm, self._disarm = self._disarm, None
        if disarm is not None:
            disarm()


def _arm(owner: deadline) -> None:
    """Arms the timer for owner.seconds, its undo kept as owner._disarm first; none where the
    timer cannot be armed."""
    global _armed
    # here: a run that analyses nothing needs it not. _signal, the C module under signal.py, has
    # the same functions without signal.py's enums (~0.4 ms of a hook run): the previous handler
    # is put back as the object it was
    try:
        import _signal as signal
    except ImportError:  # pragma: no cover (another interpreter)
        import signal

    seconds = owner.seconds
    if _armed or not hasattr(signal, "setitimer") or seconds <= 0:
        return
    live = [True]

    def expire(signum, frame):
        if live[0]:
            raise OverBudget(too_slow(seconds))

    try:
        previous = signal.signal(signal.SIGALRM, expire)
    except ValueError:  # not the main thread (of the main interpreter): no timer there
        return
    _armed = True

    def disarm():
        # the timer is one-shot: it fires at most once, maybe right here (a tiny budget); the
        # handler is put back whatever happens, so a late alarm never escapes a later caller
        global _armed
        try:
            live[0] = False
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            _armed = False

    owner._disarm = disarm
    signal.setitimer(signal.ITIMER_REAL, seconds)
