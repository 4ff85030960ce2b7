"""CPU time of one whole-file analysis in-process: the summary pass, then the check (what
`--check` does for a file, and the server before a file's first diagnostics), on a tree parsed
beforehand. Medians and minimums of several runs; CPU time, since a shared machine's wall time
hides what the code costs.

  python scripts/analysis_time.py FILE [--runs 9] [--no-migration] [--two-sources] [--profile]

--no-migration: the deprecated-API migration (fixes/plan.py, libcst) raises CannotFix instead of
being planned, to see the rest alone. --two-sources: the summary and the check get two Source
objects over the same tree, as the server's Document.source() hands out today (the check then
builds its names and facts again). --profile: one run under cProfile, by cumulative time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--no-migration", action="store_true")
    ap.add_argument("--two-sources", action="store_true")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()

    from aoti_lsp.project.config import Config
    from aoti_lsp.analysis.engine import analyze
    from aoti_lsp.project.project import Project, summarize
    from aoti_lsp.analysis.source import Source

    if args.no_migration:
        from aoti_lsp.fixes.migrate import CannotFix
        from aoti_lsp.rules import _deprecated, aoti003

        def migration(ctx, call):
            raise CannotFix("not planned (--no-migration)")

        _deprecated.migration = aoti003.migration = migration

    path = os.path.abspath(args.file)
    with open(path, "rb") as fh:
        data = fh.read()
    tree = Source(data, path).tree

    def once() -> tuple[float, float, int]:
        source = Source(data, path, tree=tree)
        project = Project(root=os.path.dirname(path))
        start = time.process_time()
        project.update(path, summarize(source, Config()))
        middle = time.process_time()
        checked = Source(data, path, tree=tree) if args.two_sources else source
        found = len(analyze(checked, Config(), project=project).findings)
        return middle - start, time.process_time() - middle, found

    once()  # imports and first-time tables
    if args.profile:
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.enable()
        once()
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
        return
    rows = [once() for _ in range(args.runs)]
    for label, values in (("summary", [r[0] for r in rows]), ("check", [r[1] for r in rows]),
                          ("both", [r[0] + r[1] for r in rows])):
        print(f"{label:8s} median {statistics.median(values) * 1000:6.1f} ms   min {min(values) * 1000:6.1f} ms")
    print(f"{rows[0][2]} findings", file=sys.stderr)


if __name__ == "__main__":
    main()
