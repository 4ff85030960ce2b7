"""The `aoti-lsp.explain` command (workspace/executeCommand): log text + package path in, the
trace out, with LSP locations for the steps that point into the user's source."""

from __future__ import annotations

import os
from dataclasses import asdict

from pygls.uris import from_fs_path

COMMAND = "aoti-lsp.explain"
MAX_LOG = 16 * 1024 * 1024


def run(ls, args: list) -> dict:
    """args: [{"log": str, "package": str | None, "sources": [paths]}] (or [log, package])."""
    from aoti_lsp.triage import explain  # its tables and the .pt2 reader: not part of the server's start

    spec = args[0] if args and isinstance(args[0], dict) else {
        "log": args[0] if args else "", "package": args[1] if len(args) > 1 else None}
    log = spec.get("log") if isinstance(spec.get("log"), str) else ""
    package = spec.get("package") if isinstance(spec.get("package"), str) and spec.get("package") else None
    sources = [s for s in spec.get("sources") or [] if isinstance(s, str)]
    open_py = {d.path: d.data for d in ls.docs.values() if d.path.endswith(".py")}
    if not sources:  # the open Python documents: the model and the code that loads it usually are
        sources = sorted(p for p in open_py if os.path.isfile(p))
    # their editor text, saved or not: the lines of the trace are the lines the user sees
    items = explain.explain(log[:MAX_LOG], package, sources, open_py)
    out = []
    for e in items:
        entry = asdict(e)
        for step in entry["trace"]:
            path, line = step.get("path"), step.get("line")
            if path and line and "!" not in path and os.path.isfile(path):
                step["location"] = {"uri": from_fs_path(path),
                                    "range": {"start": {"line": line - 1, "character": 0},
                                              "end": {"line": line - 1, "character": 0}}}
        out.append(entry)
    return {"text": explain.render_text(items), "items": out}
