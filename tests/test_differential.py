"""The differential check (tests/differential.py): the findings of every small input and of a
generated file are exactly those of the golden in tests/golden/. A speed-up must not change
one; scripts/golden_findings.py rewrites the golden, only for an intended change of results."""

import json

import differential as d
import pytest


def test_small_inputs_give_the_golden_findings():
    want = json.loads(d.SMALL.read_text("utf-8"))
    got = d.small()
    problems = d.differences(want, got)
    assert not problems, "\n".join(problems)
    assert got == want


def test_generated_file_gives_the_golden_findings():
    want = json.loads(d.GENERATED.read_text("utf-8"))
    text = d.generated_source(want["sites"], want["lines"])
    if d.sha(text) != want["source_sha256"]:
        pytest.skip("scripts/bench.py's generator changed: make the golden again from trusted code "
                    "(scripts/golden_findings.py)")
    results = d.check_text(text)
    count = sum(len(r["findings"]) for r in results["check"].values())
    assert (count, d.sha(results)) == (want["findings"], want["results_sha256"]), \
        "results differ: compare with a --dump of trusted code (scripts/golden_findings.py --against)"
