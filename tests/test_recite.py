"""incremental._recite (the lines a message or a fix's title cites, moved past an edit) reads
each text's citations once and remembers those of the texts it writes: it must say exactly
what a regex substitution over the text says, through a chain of edits too."""

from __future__ import annotations

import random
import re

import pytest

from aoti_lsp.analysis import incremental
from aoti_lsp.analysis.incremental import Shift, _recite, _Unsure

CITED = re.compile(r"\bline (\d+)|([^\s(:]+):(\d+)\)")


def reference(text: str, shift: Shift, name: str, titles: bool) -> str:
    """The substitution the marks replace: re.sub with a callback per citation."""
    def line(m) -> str:
        number = int(m.group(1) or m.group(3))
        if number - 1 <= shift.kept or (m.group(2) is not None and m.group(2) != name):
            return m.group()
        if number - 1 < shift.moved or (m.group(2) is not None and not titles):
            raise _Unsure
        return f"line {number + shift.lines}" if m.group(2) is None else f"{name}:{number + shift.lines})"
    return CITED.sub(line, text)


WORDS = ["compiled for `cuda`", "(line {n})", "(serve.py:{n})", "(other.py:{n})", "line {n}", "loaded on", "é",
         "newline{n}", "(a:b:{n})", "plain"]


def _text(rng: random.Random) -> str:
    # numbers about to gain or lose a digit: a later citation's offsets move
    return " ".join(rng.choice(WORDS).format(n=rng.choice([rng.randint(1, 40), rng.randint(8, 11), rng.randint(98, 101)]))
                    for _ in range(rng.randint(0, 6)))


def _outcome(fn, *args):
    try:
        return fn(*args)
    except _Unsure:
        return "unsure"


@pytest.mark.parametrize("seed", range(30))
def test_recite_says_what_the_regex_says_through_a_chain_of_edits(seed):
    rng = random.Random(seed)
    incremental._MARKS.clear()
    for _ in range(40):
        text, name, titles = _text(rng), rng.choice(["serve.py", "other.py"]), rng.random() < 0.5
        for _ in range(4):  # each result is the next edit's text: its remembered marks are read
            kept = rng.choice([rng.randint(-1, 40), rng.randint(-1, 10), rng.randint(90, 100)])
            shift = Shift(0, 0, 0, rng.choice([-3, -1, 1, 2, 5]), kept, kept + 1 + rng.choice([0, 0, 1, 3]))
            want, got = _outcome(reference, text, shift, name, titles), _outcome(_recite, text, shift, name, titles)
            assert got == want, (text, shift)
            if got == "unsure":
                break
            assert (got is text) == (got == text)  # unchanged: the same object (recited keeps the finding)
            text = got
