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


def _blank_edit(rng: random.Random, text: str) -> str:
    """Blank lines added or removed anywhere, AOTI statements included, and their near misses:
    Enter at a line's end or at its start, a blank line deleted, a line's indentation changed,
    a line split after its indentation's first space."""
    lines = text.split("\n")
    near = [k for k, line in enumerate(lines) if "aot" in line]  # mostly where the rules look
    i = min(max(rng.choice(near) + rng.randint(-3, 3), 0), len(lines) - 1) if near and rng.random() < 0.8 \
        else rng.randrange(len(lines))
    start = sum(len(line) + 1 for line in lines[:i])
    line = lines[i]
    indent = line[:len(line) - len(line.lstrip())]
    kind = rng.random()
    if kind < 0.4:  # Enter at the line's end, the next line indented as this one
        at = start + len(line)
        return text[:at] + "\n" + indent + text[at:]
    if kind < 0.55:  # Enter at the line's start
        return text[:start] + "\n" + text[start:]
    if kind < 0.8:  # the next blank line deleted
        j = next((k for k in range(i, len(lines)) if not lines[k].strip()), None)
        if j is None or j == len(lines) - 1:
            return text
        at = sum(len(line) + 1 for line in lines[:j])
        return text[:at] + text[at + len(lines[j]) + 1:]
    if kind < 0.9:  # indentation changed: not a blank-line edit
        return text[:start] + "  " + text[start:]
    at = line.find(" ", len(indent))  # a line split: not one either
    return text if at < 0 else text[:start + at] + "\n" + indent + text[start + at:]


def _walk(text: str, path: str, steps: int, seed: int, edit=_edit) -> tuple[int, int]:
    """(edits whose analysis was kept, edits) along one random walk of edits."""
    config, rng = Config(), random.Random(seed)
    tracker = incremental.Tracker()
    source = Source(text.encode(), path)
    result = analyze(source, config)
    tracker.remember(path, source, config, result)
    kept = 0
    for _ in range(steps):
        text = edit(rng, text)
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
        moved = incremental.shift_result(last, shift, Path(path).name)
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


# blank lines inside a docstring change its value; one after a `\\` continuation is an error
TRICKY = '''

def documented(model, x):
    """Compile it.

    The blank line above is inside the string.
    """
    so = torch._export.aot_compile(model, (x,), options={"aot_inductor.output_path": "doc.so"})
    total = 1 + \\
        2
    runner = torch._export.aot_load(so, "cuda")
    return runner(x.cpu()), total
'''


def test_blank_line_edits_inside_aoti_statements_match_full_analysis():
    """Enter in AOTI code (the commonest keystroke): its statements' tokens stay the same, so the
    last findings are moved, not sliced or analysed again; each must equal a full analysis."""
    kept, steps = _walk(generated_source(12, 400) + TRICKY, "big.py", 60, seed=5, edit=_blank_edit)
    assert kept >= 40, f"only {kept} of {steps} blank-line edits were kept: the test proves little"


@pytest.mark.parametrize("old, new, blank", [
    ("def f():\n    a = 1\n    b = 2\n", "def f():\n    a = 1\n    \n    b = 2\n", True),  # Enter at a line's end
    ("def f():\n    a = 1\n\n    b = 2\n", "def f():\n    a = 1\n    b = 2\n", True),  # a blank line deleted
    ("def f():\n    a = 1\n    b = 2\n", "def f():\n    a = 1\n      b = 2\n", False),  # indentation
    ("def f():\n    a = g(1, 2)\n", "def f():\n    a = g(1,\n 2)\n", False),  # a line split
    ("def f():\n    a = 1 + \\\n        2\n", "def f():\n    a = 1 + \\\n\n        2\n", False),  # after `\\`
    ('def f():\n    """a\n    b"""\n', 'def f():\n    """a\n\n    b"""\n', False),  # in a docstring
    ("def f():\r\n    a = 1\r\n", "def f():\r\n    a = 1\r\n\r\n", False),  # "\r": as the slice's follow, not read
])
def test_blank_only(old, new, blank):
    a, b = old.encode(), new.encode()
    start, old_end, new_end = incremental.edit_span(a, b)
    assert incremental.blank_only(a, b, start, old_end, new_end, [(0, len(a))]) is blank


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
        # a syntax error judged from its statements, or a statement being typed (the last findings
        # moved): provisional, verified once typing settles
        if ls.analysed.provisional(doc.uri) or getattr(ls.result(doc), "provisional", False):
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


def test_the_editor_moves_its_findings_past_an_enter_in_aoti_code_and_slices_the_next_keystroke():
    """An Enter inside an AOTI statement moves the last findings (no slice, no analysis), and the
    slice entry follows it: the next keystroke in AOTI code is sliced, not analysed whole (it
    was, ~1.2 s in a dense file, when the entry was dropped)."""
    from lsprotocol import types

    text = generated_source(12, 400)
    path = str(ROOT / "enter_generated.py")  # never written: the document is the editor's
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, text, pause=True)
    lines = text.split("\n")
    row = next(i for i, line in enumerate(lines) if "aoti_load_package(" in line and lines[i + 1].strip())
    indent = lines[row][:len(lines[row]) - len(lines[row].lstrip())]

    def type_(version, line, col, new):
        doc.apply([types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, col), types.Position(line, col)), text=new)], version, "utf-16")
        return ls.result(doc)

    moved = type_(1, row, len(lines[row]), "\n" + indent)
    # moved from the full analysis: a slice's result is partial, a whole analysis has no `moved`
    assert getattr(moved, "moved", None) is not None and not moved.partial, "the Enter was analysed, not moved"
    assert ls.diagnostics(doc) == inprocess.fresh_diagnostics(doc)
    col = lines[row].index("artifacts/") + len("artifacts/")
    sliced = type_(2, row, col, "x")  # into the path of the load the Enter followed: AOTI code
    assert getattr(sliced, "partial", False), "the keystroke after the Enter was analysed whole, not sliced"
    assert ls.diagnostics(doc) == inprocess.fresh_diagnostics(doc)


def _editing(name: str, text: str):
    """(server, document, edit(line, col, end, new[, end_line]) -> the server's result): a
    document of the generated source opened as an editor does, typing settled; the edit ends on
    `line` unless `end_line` says another."""
    from lsprotocol import types

    path = str(ROOT / name)  # never written: the document is the editor's
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, text, pause=True)
    versions = iter(range(1, 1000))

    def edit(line, col, end, new, end_line=None):
        doc.apply([types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, col), types.Position(line if end_line is None else end_line, end)),
            text=new)], next(versions), "utf-16")
        return ls.result(doc)

    return ls, doc, edit


def test_a_statement_no_rule_reads_left_broken_keeps_the_next_aoti_keystroke_sliced():
    """`x` typed at the start of an ordinary statement (`xreturn ...`: a syntax error no rule
    sees) moves the last findings; the slice entry follows it with that statement broken, so a
    keystroke in AOTI code next is sliced (provisionally) instead of analysing the whole file
    (~300 ms in 20k lines, when the entry was dropped: bench.py section c's AOTI first token).
    Once typing settles the diagnostics are a fresh server's; deleting the `x` again is clean."""
    text = generated_source(12, 400)
    ls, doc, edit = _editing("broken_generated.py", text)
    lines = text.split("\n")

    def top(i):  # the top-level statement holding line i
        while not lines[i].startswith(("def ", "class ")):
            i -= 1
        return lines[i]

    plain = next(i for i, line in enumerate(lines) if line.startswith("    return ") and top(i).startswith("def helper_"))
    aoti = next(i for i, line in enumerate(lines) if "aoti_load_package(" in line and i > plain)
    at = len(lines[plain]) - len(lines[plain].lstrip())
    broken = edit(plain, at, at, "x")  # `xreturn ...`
    assert getattr(broken, "moved", None) is not None, "the broken ordinary statement was analysed, not moved"
    col = lines[aoti].index("artifacts/") + len("artifacts/")
    sliced = edit(aoti, col, col, "y")
    assert getattr(sliced, "partial", False), "the AOTI keystroke after the broken statement was analysed whole"
    assert getattr(sliced, "provisional", False), "a result with a broken statement in the text must be provisional"
    ls.settled()  # typing pauses: verified against the file's own analysis
    assert ls.diagnostics(doc) == inprocess.fresh_diagnostics(doc)
    edit(plain, at, at + 1, "")  # the `x` deleted: clean again
    edit(aoti, col, col + 1, "")
    assert ls.diagnostics(doc) == inprocess.fresh_diagnostics(doc)


def test_a_new_statement_typed_and_deleted_keeps_the_next_aoti_keystroke_sliced():
    """`x` typed at column 0 of a blank line inside a class (a new top-level statement: the class
    ends there) and deleted again: the slice entry, which cannot follow the first edit, is kept
    for one edit and the second restores its text, so the next keystroke in AOTI code is sliced
    (it was a whole analysis: bench.py section c's spots). Any other next edit forgets it."""
    text = generated_source(12, 400)
    ls, doc, edit = _editing("blank_generated.py", text)
    lines = text.split("\n")
    blank = next(i for i, line in enumerate(lines) if not line and lines[i - 1].startswith("        ")
                 and lines[i + 1].startswith("    def "))
    aoti = next(i for i, line in enumerate(lines) if "aoti_load_package(" in line and i > blank)
    edit(blank, 0, 0, "x")
    assert ls.sliced._last[doc.uri].behind
    edit(blank, 0, 1, "")
    col = lines[aoti].index("artifacts/") + len("artifacts/")
    sliced = edit(aoti, col, col, "y")
    assert getattr(sliced, "partial", False), "the AOTI keystroke after the typed-and-deleted `x` was analysed whole"
    assert ls.diagnostics(doc) == inprocess.fresh_diagnostics(doc)
    edit(blank, 0, 0, "x")  # typed again, then another edit: forgotten, never sliced from
    kept = ls.sliced._last[doc.uri]
    assert kept.behind
    whole = edit(aoti, col, col + 1, "")
    assert not getattr(whole, "partial", False) and ls.sliced._last.get(doc.uri) is not kept
    edit(blank, 0, 1, "")
    assert ls.diagnostics(doc) == inprocess.fresh_diagnostics(doc)


SERVE = 'import torch\n\n\ndef serve(so_path, x):\n    y = x + 1\n    runner = torch._export.aot_load(so_path, "cpu")\n    return runner(y)\n'


def test_a_new_statement_typed_and_kept_keeps_the_next_aoti_keystroke_sliced():
    """A line of code typed between two top-level functions (a new statement no rule reads),
    kept, then an AOTI keystroke: sliced, not analysed whole; the same after the statement grows
    and after a whole function is deleted. Each time the diagnostics equal a fresh server's.
    The slice entry could not follow a change in the number of statements: the AOTI keystroke
    after one was a whole analysis (~300 ms in 20k lines)."""
    ls, doc, edit = _editing("recount_generated.py", generated_source(12, 400))

    def lines():
        return doc.source().data.decode().split("\n")

    def aoti_keystroke():
        now = lines()
        at = next(i for i, line in enumerate(now) if "aoti_load_package(" in line and "artifacts/" in line)
        col = now[at].index("artifacts/") + len("artifacts/")
        sliced = edit(at, col, col, "y")
        assert getattr(sliced, "partial", False), "the AOTI keystroke was analysed whole"
        assert ls.diagnostics(doc) == inprocess.fresh_diagnostics(doc)

    now = lines()
    blank = next(i for i, line in enumerate(now) if i > 60 and not line and not now[i - 1]
                 and now[i + 1].startswith("def helper_"))
    count = len(ls.sliced._last[doc.uri].starts)
    edit(blank, 0, 0, "p")  # a new statement, kept
    entry = ls.sliced._last[doc.uri]
    assert not entry.behind and len(entry.starts) == count + 1
    aoti_keystroke()
    edit(blank, 1, 1, "rint(len(sys.argv))")  # it grows (the same statements)
    aoti_keystroke()
    now = lines()
    first = next(i for i, line in enumerate(now) if line.startswith("def helper_3("))
    last = next(i for i in range(first + 1, len(now)) if now[i] and not now[i].startswith(" ")) - 1
    edit(first, 0, 0, "", end_line=last)  # a whole function deleted, its blank lines kept
    assert len(ls.sliced._last[doc.uri].starts) == count  # +1 typed, -1 deleted
    aoti_keystroke()


STATEMENTS = ["p", "print(len(rows))\n", "def g():\n    return 1\n", "log = []\n", "class K:\n    pass\n",
              "if DEBUG:\n    print(1)\n", "x", "import sys\n", "torch.set_default_device('cuda')\n"]


def test_statements_typed_and_deleted_between_aoti_keystrokes_match_a_fresh_server():
    """A random walk through the editor's path: whole top-level statements typed on blank lines
    (kept) or deleted, other keystrokes, pauses, and keystrokes inside AOTI code; after each
    edit the diagnostics equal a fresh server's. It counts the statement-count changes the slice
    entry followed (slice._recounted): too few and it proves nothing."""
    from lsprotocol import types
    from aoti_lsp.analysis import slice as slice_mod

    followed = []
    real = slice_mod._recounted

    def counted(*args):
        moved = real(*args)
        followed.append(moved)
        return moved

    text = generated_source(40, 900)
    path = str(ROOT / "walk_generated.py")  # never written: the document is the editor's
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, text, pause=True)
    rng = random.Random(5)
    slice_mod._recounted = counted
    try:
        for version in range(1, 81):
            text = doc.data.decode()
            lines = text.split("\n")
            kind = rng.random()
            if kind < 0.45:  # a statement typed at the start of a blank line between two top-level ones
                i = rng.choice([k for k, line in enumerate(lines) if not line and k
                                and next((x for x in lines[k:] if x), "x")[:1] not in " \t"])
                start = end = sum(len(line) + 1 for line in lines[:i])
                new = rng.choice(STATEMENTS)
            elif kind < 0.7:  # a top-level statement deleted, its line break with it
                node = rng.choice(doc.source().tree.root_node.named_children)
                start, end, new = node.start_byte, node.end_byte + 1, ""
            else:  # a keystroke inside AOTI code
                at = rng.choice([k for k, line in enumerate(lines) if "artifacts/" in line])
                start = end = sum(len(line) + 1 for line in lines[:at]) + lines[at].index("artifacts/") + len("artifacts/")
                new = rng.choice("yz")
            data = doc.data
            a, b = doc.lines.position(start, "utf-16"), doc.lines.position(min(end, len(data)), "utf-16")
            doc.apply([types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(*a), types.Position(*b)), text=new)], version, "utf-16")
            ls.update_summary(doc.path, doc.source())
            items = ls.diagnostics(doc)
            if ls.analysed.provisional(doc.uri) or getattr(ls.result(doc), "provisional", False) or rng.random() < 0.5:
                ls.flush_summaries()
                ls.verify_results()
                ls.settled()  # typing pauses: what the next keystroke's slice reads is read now
                items = ls.diagnostics(doc)
            assert items == inprocess.fresh_diagnostics(doc), f"edit {version}: diagnostics differ from a fresh server's"
    finally:
        slice_mod._recounted = real
    assert sum(followed) >= 5, f"the entry followed only {sum(followed)} of {len(followed)} statement-count changes"


def test_an_enter_moves_the_line_a_fix_title_cites():
    """A display-only migration's title cites its load as `serve.py:6`; an Enter above it moves
    the finding, and the title (the code action's, in the diagnostic's data) says line 7, as a
    fresh analysis does. It said 6 until the file was analysed whole again."""
    from lsprotocol import types

    path = str(ROOT / "serve.py")  # never written: the document is the editor's
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, SERVE, pause=True)
    assert "(serve.py:6)" in ls.result(doc).findings[0].fix.title
    doc.apply([types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(4, 13), types.Position(4, 13)), text="\n    ")], 1, "utf-16")
    moved = ls.result(doc)
    assert getattr(moved, "moved", None) is not None and not moved.partial, "the Enter was analysed, not moved"
    assert "(serve.py:7)" in moved.findings[0].fix.title
    items = ls.diagnostics(doc)
    assert "(serve.py:7)" in items[0].data["fix"]["title"]
    assert items == inprocess.fresh_diagnostics(doc)


def test_a_title_citing_a_file_of_the_same_name_elsewhere_is_not_moved():
    """A fix that also edits another `serve.py`: which of the two its title's `serve.py:6` means
    is not told, so the finding is analysed again, not moved."""
    from aoti_lsp.analysis.findings import Applicability, Edit, Finding, Fix

    def finding(other: str):
        return Finding("AOTI002", "m", 80, 90, fix=Fix("Migrate (the path (serve.py:6) ...)",
                                                          (Edit(80, 90, "x", path=other),), Applicability.UNSAFE))

    shift = incremental.Shift(40, 40, 5, lines=1, kept=4, moved=5)
    assert "(serve.py:7)" in incremental.recited(finding("lib/loader.py"), shift, "serve.py").fix.title
    assert incremental.recited(finding("lib/serve.py"), shift, "serve.py") is None


def test_a_module_level_aoti_statement_being_typed_moves_the_last_findings_until_typing_pauses(monkeypatch):
    """`RUNNER_11 = torch._export.aot_load(so_11, "cuda").` typed at module level: the statement's
    error is the module's, not a statement's own, so slice.py refuses it, and every keystroke
    was a whole analysis (~0.8 s in the dense 20k-line file). Now the last findings are moved,
    provisionally (no analysis), and once typing pauses a whole analysis replaces them; typing
    on to a clean text is exact again."""
    from lsprotocol import types

    from aoti_lsp.lsp import server as server_mod

    text = generated_source(120, 2500)
    path = str(ROOT / "typing_generated.py")  # never written
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, text)
    lines = text.split("\n")
    line = next(i for i, t in enumerate(lines) if t.startswith("RUNNER_") and "aot_load(" in t)
    col = len(lines[line])
    before = ls.diagnostics(doc)
    analyses = []
    real = server_mod.analyze
    monkeypatch.setattr(server_mod, "analyze", lambda *a, **k: analyses.append(1) or real(*a, **k))
    at = col
    for version, typed in enumerate((".", "to(", "x"), 1):  # each a statement Python rejects
        doc.apply([types.TextDocumentContentChangePartial(range=types.Range(
            types.Position(line, at), types.Position(line, at)), text=typed)], version, "utf-16")
        at += len(typed)
        ls.update_summary(doc.path, doc.source(), defer=True)
        items = ls.diagnostics(doc)
        # (tree-sitter reads the file's `...).` and the next line as one attribute: no error there;
        # Python, and the statement's own parse, say it is broken)
        assert ls.result(doc).provisional
        # nothing before the typed text moved (a noqa edit at the line's end does)
        assert [(d.range, d.message) for d in items] == [(d.range, d.message) for d in before]
    assert not analyses, "a keystroke in a broken module-level statement analysed the whole file"
    ls.flush_summaries()
    assert ls.verify_results() is True
    assert ls.diagnostics(doc) == inprocess.fresh_diagnostics(doc) and analyses
    for version, typed in enumerate((")",), 4):  # `.to(x)`: clean again, exact
        doc.apply([types.TextDocumentContentChangePartial(range=types.Range(
            types.Position(line, at), types.Position(line, at)), text=typed)], version, "utf-16")
        ls.update_summary(doc.path, doc.source(), defer=True)
        items = ls.diagnostics(doc)
        assert not getattr(ls.result(doc), "provisional", False)
        ls.flush_summaries()
        assert items == inprocess.fresh_diagnostics(doc)


def test_broken_edit():
    old = b"import torch\nr = torch._export.aot_load(so, 'cuda')\nx = 1\n"
    state = incremental.state_of(Source(old, "t.py"), Config())
    assert incremental.broken_edit(state, old.replace(b"'cuda')", b"'cuda').")) is not None
    assert incremental.broken_edit(state, old.replace(b"'cuda')", b"'cpu')")) is None  # parses: the slice's
    assert incremental.broken_edit(state, old) is None
    assert incremental.broken_edit(state, old.replace(b"x = 1\n", b"x = 1\n\n")) is None  # after every statement
