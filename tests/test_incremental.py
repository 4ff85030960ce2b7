"""incremental.py: a keystroke the last analysis is kept for must give what a full analysis gives.

Random edits (typing, deleting, new lines, new statements, names that other code reads) on a
generated file with hundreds of AOTI sites and on the rule fixtures: after each, the kept and
moved findings must equal a fresh full analysis, field by field. The edits are counted: the
test fails if too few were kept (it would then prove nothing) or if a kept result differs.
"""

from __future__ import annotations

import random
from pathlib import Path

import inprocess
from differential import generated_source
import pytest
from aoti_lsp.analysis import incremental
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.source import Source

ROOT = Path(__file__).resolve().parents[1]


def _view(result) -> list:
    def fix(f):
        return None if f is None else (f.title, f.applicability, tuple(f.edits))
    return [(f.code, f.message, f.start, f.end, tuple(f.related), fix(f.fix), tuple(map(fix, f.alternatives)))
            for f in result.findings]


TYPED = ["x", " ", "\n", "\n\n", "(", ")", "'", '"', "#", ":", "=", "runner", "torch", "ep", "lengths",
         "def g():\n    return 1\n", "so_path = 'a.so'\n", "import os\n", "global runner\n", "pass", "0"]


def _edit(rng: random.Random, text: str) -> str:
    at = rng.randrange(len(text) + 1)
    kind = rng.random()
    if kind < 0.25 and at < len(text):  # delete a little
        return text[:at] + text[at + rng.randint(1, 4):]
    if kind < 0.45:  # at a line's first token, where tree-sitter reparses the rest of the file
        line_start = text.rfind("\n", 0, at) + 1
        line = text[line_start:text.find("\n", line_start) if "\n" in text[line_start:] else len(text)]
        at = line_start + len(line) - len(line.lstrip())
    return text[:at] + rng.choice(TYPED) + text[at:]


def _walk(text: str, path: str, steps: int, seed: int) -> tuple[int, int]:
    """(edits whose analysis was kept, edits) along one random walk of edits."""
    config, rng = Config(), random.Random(seed)
    tracker = incremental.Tracker()
    source = Source(text.encode(), path)
    result = analyze(source, config)
    tracker.remember(path, source, config, result)
    kept = 0
    for _ in range(steps):
        text = _edit(rng, text)
        source = Source(text.encode(), path)
        hit = tracker.reuse(path, source, config)
        full = analyze(Source(text.encode(), path), config)
        if hit is None:
            tracker.remember(path, source, config, full)
            continue
        shift, last = hit
        kept_state = tracker._last[path][2]
        children = Source(text.encode(), path).tree.root_node.named_children
        assert (kept_state.starts, kept_state.ends) == ([c.start_byte for c in children], [c.end_byte for c in children]), \
            "the statements incremental.py sees differ from the file's parse"
        moved = incremental.shift_result(last, shift)
        if moved is None:  # a message names a line the edit moved
            tracker.remember(path, source, config, full)
            continue
        assert _view(moved) == _view(full), f"kept findings differ from a full analysis after an edit at {shift}"
        tracker.update(path, moved)
        kept += 1
    return kept, steps


def test_generated_file_edits_match_full_analysis():
    kept, steps = _walk(generated_source(60, 2500), "big.py", 100, seed=3)
    assert kept >= 10, f"only {kept} of {steps} edits were kept: the test proves little"


def _typing(base: str, path: str, bursts: int, seed: int) -> dict:
    """The server's way: a burst of keystrokes at one place, each judged provisionally (a syntax
    error from its own statements), typing settles and the file's tree verifies the guess
    (Tracker.verify); then the burst is undone, as one edit, and verified again. After each
    settle the result held must be a full analysis's."""
    config, rng = Config(), random.Random(seed)
    tracker = incremental.Tracker()
    tracker.remember(path, Source(base.encode(), path), config, analyze(Source(base.encode(), path), config))
    count = {"kept": 0, "guessed": 0, "wrong": 0}

    def keystroke(text: str) -> bool:
        source = Source(text.encode(), path)
        hit = tracker.reuse(path, source, config, provisional=True)
        moved = incremental.shift_result(hit[1], hit[0]) if hit is not None else None
        if moved is None:  # as the server: a full analysis
            tracker.remember(path, source, config, analyze(Source(text.encode(), path), config))
            return False
        count["guessed"] += tracker.provisional(path)
        tracker.update(path, moved)
        return True

    def settle(text: str, kept: bool) -> None:
        if tracker.provisional(path) and not tracker.verify(path, Source(text.encode(), path)):
            count["wrong"] += 1  # the server analyses again, and refreshes
            tracker.remember(path, Source(text.encode(), path), config, analyze(Source(text.encode(), path), config))
        elif kept:
            full = analyze(Source(text.encode(), path), config)
            assert _view(tracker._last[path][3]) == _view(full), "a verified result differs from a full analysis"
            count["kept"] += 1

    for _ in range(bursts):
        text, at = base, rng.randrange(len(base) + 1)
        if rng.random() < 0.5:  # a line's first token
            line_start = text.rfind("\n", 0, at) + 1
            line = text[line_start:].split("\n", 1)[0]
            at = line_start + len(line) - len(line.lstrip())
        kept = True
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.2 and at < len(text):
                text = text[:at] + text[at + 1:]
            else:
                typed = rng.choice(TYPED)
                text, at = text[:at] + typed + text[at:], at + len(typed)
            kept &= keystroke(text)
        settle(text, kept)
        settle(base, keystroke(base))  # undone
    return count


@pytest.mark.parametrize("seed", [3, 4])
def test_typing_through_syntax_errors_matches_full_analysis_once_verified(seed):
    count = _typing(generated_source(60, 5000), "big.py", 60, seed)
    assert count["kept"] >= 10 and count["guessed"] >= 10, f"{count}: the test proves little"


@pytest.mark.parametrize("path", sorted((ROOT / "tests" / "fixtures").rglob("*.py"))[::7], ids=lambda p: p.parent.name + "/" + p.name)
def test_fixture_edits_match_full_analysis(path):
    text = path.read_text("utf-8")
    _walk(text, str(path), 12, seed=len(text))


def test_edit_span_is_the_one_differing_region():
    rng = random.Random(1)
    for _ in range(2000):
        n = rng.choice([0, 1, 5, 100, 9000, 20000])
        a = bytes(rng.choice(b"ab\n") for _ in range(n))
        i = rng.randint(0, n)
        j = rng.randint(i, n)
        b = a[:i] + bytes(rng.choice(b"ab\n") for _ in range(rng.choice([0, 1, 3, 9000]))) + a[j:]
        s, old_end, new_end = incremental.edit_span(a, b)
        assert a[:s] == b[:s] and a[old_end:] == b[new_end:] and old_end >= s and new_end >= s
        k = 0
        while k < min(len(a), len(b)) and a[k] == b[k]:
            k += 1
        assert s == k


def test_a_name_relevant_code_reads_is_never_kept():
    """Binding a name an AOTI call reads (here the path constant) needs a full analysis."""
    text = ("import torch\n\nOUT = 'm.so'\n\n\ndef helper():\n    return 1\n\n\n"
            "so = torch._export.aot_compile(M(), (x,), options={'aot_inductor.output_path': OUT})\n")
    config = Config()
    tracker = incremental.Tracker()
    src = Source(text.encode(), "t.py")
    tracker.remember("t.py", src, config, analyze(src, config))
    inside_helper = text.replace("return 1", "return 2")
    assert tracker.reuse("t.py", Source(inside_helper.encode(), "t.py"), config) is not None
    rebinds = text.replace("    return 1\n", "    return 1\n\n\nOUT = 'n.so'\n")
    assert tracker.reuse("t.py", Source(rebinds.encode(), "t.py"), config) is None


def test_server_diagnostics_after_edits_match_a_fresh_server():
    """The editor's path: Document edits (a deferred, incremental reparse), the kept result,
    the kept or moved LSP diagnostics. Each must equal what a fresh server computes."""
    from lsprotocol import types

    text = generated_source(120, 2500)
    path = str(ROOT / "big_generated.py")  # never written: the document is the editor's
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, text)
    rng, moved = random.Random(11), 0
    for version in range(1, 61):
        new = _edit(rng, text)
        start, old_end, new_end = incremental.edit_span(text.encode(), new.encode())
        lines = doc.lines
        a, b = lines.position(start, "utf-16"), lines.position(old_end, "utf-16")
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(*a), types.Position(*b)), text=new.encode()[start:new_end].decode())
        doc.apply([change], version, "utf-16")
        text = new
        assert doc.data == text.encode()
        ls.update_summary(doc.path, doc.source())
        items = ls.diagnostics(doc)
        moved += getattr(ls.result(doc), "moved", None) is not None
        if ls.analysed.provisional(doc.uri):  # a syntax error judged from its statements: settle first
            ls.flush_summaries()
            ls.verify_results()
            items = ls.diagnostics(doc)
        assert items == inprocess.fresh_diagnostics(doc), f"edit {version}: kept diagnostics differ from a fresh server's"
    assert moved >= 10, f"only {moved} of 60 edits kept their analysis"


@pytest.mark.parametrize("seed", [1, 2])
def test_single_edits_of_a_clean_file_keep_the_files_structure(seed):
    """One random edit at a time on a clean file (the common case: the file parsed before the
    keystroke): whenever the analysis is kept, the statements incremental.py believes in are the
    file's parse's, and the moved findings are a full analysis's."""
    text, path, config = generated_source(80, 2500), "big.py", Config()
    base = Source(text.encode(), path)
    full = analyze(base, config)
    state = incremental.state_of(base, config)
    rng, kept = random.Random(seed), 0
    for _ in range(150):
        new = _edit(rng, text).encode()
        source = Source(new, path)
        hit = incremental.reusable(state, new, config, lambda: source.tree)
        if hit is None:
            continue
        shift, moved_state = hit
        children = Source(new, path).tree.root_node.named_children
        assert (moved_state.starts, moved_state.ends) == ([c.start_byte for c in children], [c.end_byte for c in children])
        moved = incremental.shift_result(full, shift)
        if moved is not None:
            assert _view(moved) == _view(analyze(Source(new, path), config))
            kept += 1
    assert kept >= 30, f"only {kept} of 150 edits kept their analysis"


def test_server_settles_a_guessed_syntax_error_with_the_files_tree():
    """An unclosed `(` typed in a helper: the keystroke keeps the last findings (a guess from the
    helper's own parse); tree-sitter's recovery of the whole file swallows the deprecated call
    after it, and verify_results() (what the server runs once typing settles) makes the result
    that of a full analysis."""
    from aoti_lsp.lsp.documents import Document
    from aoti_lsp.lsp.server import AotiServer
    from lsprotocol import types

    text = ("import torch\n\n\ndef helper(rows):\n    total = 0\n    for row in rows:\n        total += sum(row)\n"
            "    return total\n\n\ndef legacy(model, x):\n    so_path = torch._export.aot_compile(model, (x,))\n    return so_path\n")
    ls = AotiServer()
    doc = ls.docs["file:///ws/serve.py"] = Document("file:///ws/serve.py", "/ws/serve.py", text, 1)
    assert [d.code for d in ls.diagnostics(doc)] == ["AOTI001"]
    at = types.Position(4, len("    total = "))
    doc.apply([types.TextDocumentContentChangePartial(range=types.Range(at, at), text="(")], 2, "utf-16")
    assert [d.code for d in ls.diagnostics(doc)] == ["AOTI001"] and ls.analysed.provisional(doc.uri)
    assert analyze(Source(doc.data, doc.path)).findings == []  # what the file's tree gives
    assert ls.verify_results()
    assert ls.diagnostics(doc) == []
    at = types.Position(4, len("    total = (0"))
    doc.apply([types.TextDocumentContentChangePartial(range=types.Range(at, at), text=")")], 3, "utf-16")
    assert [d.code for d in ls.diagnostics(doc)] == ["AOTI001"]


def test_lines_a_message_names_move_with_the_edit():
    """Enter typed above a device mismatch: the compile's line its message names moves with the
    text (and the keystroke keeps its analysis); a line before the edit keeps its number, another
    file's line is not this edit's, and a line the edit spans, or this file named as `name:N`
    past it, cannot be told (the caller analyses again)."""
    from aoti_lsp.analysis.findings import Finding, Related

    old = b"a = 1\nb = 2\nc = 3\nd = 4\n"
    at = old.index(b"b = 2") + len(b"b = 2")
    enter = incremental.shift_of(old, old[:at] + b"\n" + old[at:], at, at, at + 1)  # Enter at the end of line 2
    assert (enter.lines, enter.kept, enter.moved) == (1, 1, 2)

    def f(message, note="compiled here"):
        return Finding("AOTI101", message, 0, 1, related=[Related(0, 1, note)])

    def said(finding):
        got = incremental.recited(finding, enter, "serve.py")
        return None if got is None else (got.message, [r.message for r in got.related])

    assert said(f("compiled for `cuda` (line 3) loaded on cpu")) == ("compiled for `cuda` (line 4) loaded on cpu",
                                                                      ["compiled here"])
    assert said(f("compiled for `cuda` (line 2), loaded (line 1)")) == ("compiled for `cuda` (line 2), loaded (line 1)",
                                                                         ["compiled here"])
    assert said(f("compiled in build.py (build.py:7)")) == ("compiled in build.py (build.py:7)", ["compiled here"])
    assert said(f("x", "loaded at line 4")) == ("x", ["loaded at line 5"])
    assert said(f("compiled in serve.py (serve.py:7)")) is None  # this file by name: which one
    mid = b"a = (1,\n     2)\nb = 3\n"
    inside = incremental.shift_of(mid, mid[:10] + b"\n" + mid[10:], 10, 10, 11)  # a line break inside line 2
    assert incremental.recited(f("compiled (line 2)"), inside, "serve.py") is None
    assert said(f("compiled (line 3)")) == ("compiled (line 4)", ["compiled here"])
    before = incremental.shift_of(mid, mid[:8] + b"\n" + mid[8:], 8, 8, 9)  # a new line before line 2
    assert incremental.recited(f("compiled (line 2)"), before, "serve.py").message == "compiled (line 3)"
    plain = f("no line named")
    assert incremental.recited(plain, enter, "serve.py") is plain
