"""Write or compare the golden of the differential check (tests/differential.py).

REGENERATE THE GOLDEN ONLY WHEN A CHANGE OF RESULTS IS INTENDED (a rule finds more or less, a
message or a fix changes on purpose), and read the diff of tests/golden/ before committing
it. A speed-up, a refactoring or a clean-up must leave it as it is: that is what it checks.

  python scripts/golden_findings.py --write            # tests/golden/findings.json, generated.json
  python scripts/golden_findings.py                    # compare with them (exit 1 on a difference)
  python scripts/golden_findings.py --dump OUT.json [--sites N --lines L]
      # the full results of the small inputs and of a generated file of N sites, to compare two
      # trees of the code (run it with each on PYTHONPATH, then --against)
  python scripts/golden_findings.py --against OUT.json [--sites N --lines L]

tests/golden/generated.json keeps only digests of the generated file's results (the full
results are large): the sha256 of the generated source, so that a change of
scripts/bench.py's generator is told apart from a change of results, and of the results.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import differential as d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite tests/golden/ (only for an intended change of results)")
    ap.add_argument("--dump", metavar="OUT", help="write the full results (small inputs and a generated file) to OUT")
    ap.add_argument("--against", metavar="OUT", help="compare with a --dump made by other code")
    ap.add_argument("--sites", type=int, default=d.GENERATED_SIZE["sites"])
    ap.add_argument("--lines", type=int, default=d.GENERATED_SIZE["lines"])
    args = ap.parse_args()

    small = d.small()
    digest, gen = d.generated(args.sites, args.lines)
    if args.dump:
        Path(args.dump).write_text(d.dumps({"small": small, "generated": {"source": digest, "results": gen}}), "utf-8")
        return 0
    if args.against:
        other = __import__("json").loads(Path(args.against).read_text("utf-8"))
        problems = d.differences(other["small"], small)
        if other["generated"]["source"] != digest:
            problems.append("the generated sources differ (other --sites/--lines, or another generator)")
        else:
            problems += d.differences({"generated": other["generated"]["results"]}, {"generated": gen})
        return _report(problems)
    if args.write:
        d.GOLDEN.mkdir(exist_ok=True)
        d.SMALL.write_text(d.dumps(small), "utf-8")
        d.GENERATED.write_text(d.dumps({**d.GENERATED_SIZE, "source_sha256": digest, "results_sha256": d.sha(gen),
                                        "findings": _count(gen)}), "utf-8")
        print(f"wrote {d.SMALL.relative_to(d.ROOT)} and {d.GENERATED.relative_to(d.ROOT)}: read the diff")
        return 0
    import json

    problems = d.differences(json.loads(d.SMALL.read_text("utf-8")), small)
    want = json.loads(d.GENERATED.read_text("utf-8"))
    if (args.sites, args.lines) == (want["sites"], want["lines"]):
        if want["source_sha256"] != digest:
            problems.append("the generator (scripts/bench.py) changed: the generated file's digest cannot be compared")
        elif want["results_sha256"] != d.sha(gen):
            problems.append(f"the generated file's results differ ({_count(gen)} findings, golden {want['findings']})")
    return _report(problems)


def _count(results: dict) -> int:
    return sum(len(r["findings"]) for r in results["check"].values())


def _report(problems: list[str]) -> int:
    for p in problems:
        print(p)
    print("differences found" if problems else "identical")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
