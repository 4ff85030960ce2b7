"""slice.py: an edit inside AOTI code re-analyses a slice of the file; the result must equal a
full analysis of the new text, field by field (lazy fixes' edits built), or be None.

Random edits inside the statements that hold AOTI code (of the generated benchmark file, of the
rule fixtures and the cross-file projects), each compared with a fresh full analysis. The edits
the slice handled are counted: the tests fail if too few were (they would prove nothing).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import inprocess
from differential import generated_source
import pytest
from aoti_lsp.analysis import slice as slice_mod
from aoti_lsp.lsp.convert import encoded
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import analyze
from aoti_lsp.project.project import Project, summarize
from aoti_lsp.analysis.findings import LazyFix
from aoti_lsp.analysis.source import Source

ROOT = Path(__file__).resolve().parents[1]
AOTI_LINE = re.compile(r"aot|torch\.|runner|export|forward|lengths|package|\.pt2|\.so\b")
TYPED = ["x", " ", "0", "_", "(", ")", '"', "'", ",", "runner", "cuda", "'cpu'", ", device='cuda'", "ep", "1",
         ".to('cuda')", "lengths", "m158"]


def _view(result, lazy_edits: bool = True) -> list:
    """`lazy_edits` False: a lazy fix by its title, applicability and files (a slice's result is
    `partial`: its lazy fixes' edits come from a full analysis, see the server test below)."""
    def fix(f):
        if f is None:
            return None
        if not lazy_edits and isinstance(f, LazyFix):
            return (f.title, f.applicability, tuple(sorted(f.other_files)))
        return (f.title, f.applicability, tuple(f.edits), tuple(sorted(f.other_files)), bool(getattr(f, "failed", None)))
    return [(f.code, f.message, f.start, f.end, tuple(f.related), fix(f.fix), tuple(map(fix, f.alternatives)))
            for f in result.findings]


def _edit(rng: random.Random, text: str) -> str:
    """An edit inside a line of AOTI code (past its indentation)."""
    lines = text.split("\n")
    candidates = [i for i, line in enumerate(lines) if AOTI_LINE.search(line)] or range(len(lines))
    i = rng.choice(candidates)
    offset = sum(len(line) + 1 for line in lines[:i])
    line = lines[i]
    indent = len(line) - len(line.lstrip())
    at = offset + rng.randint(indent, len(line))
    if rng.random() < 0.3 and at < offset + len(line):
        return text[:at] + text[at + rng.randint(1, 3):]
    return text[:at] + rng.choice(TYPED) + text[at:]


def _project(path: str, files: list[Path], config: Config) -> Project | None:
    if not files:
        return None
    project = Project(root=str(files[0].parent if len(files) == 1 else ROOT))
    for f in files:
        if str(f) != path:
            project.update(str(f), summarize(Source(f.read_bytes(), str(f)), config))
    return project


def _walk(text: str, path: str, steps: int, seed: int, files: list[Path] = (), edits=None,
          log: list | None = None) -> tuple[int, int]:
    """(edits the slice handled, edits) along one random walk; every handled one checked but
    the provisional ones (a syntax error inside the edited statements, slice.PROVISIONAL).
    `log` gets, per edit, whether the slice handled it (True), provisionally ("provisional")."""
    config, rng = Config(), random.Random(seed)
    project = _project(path, list(files), config)
    slicer = slice_mod.Slicer()

    def full_of(t: str):
        src = Source(t.encode(), path)
        if project is not None:
            project.update(path, summarize(src, config))
        return src, analyze(src, config, project=project)

    source, result = full_of(text)
    slicer.remember(path, source, config, result, project)
    handled = 0
    walk = edits if edits is not None else (None,) * steps
    clean = text
    for step in walk:
        if step is not None:
            text = step(text)
        elif text != clean:
            text = clean  # a syntax error typed: the next edit undoes it (the walk stays in valid code)
        else:
            text = _edit(rng, text)
        source, full = full_of(text)
        if not source.tree.root_node.has_error:
            clean = text
        got = slicer.result(path, Source(text.encode(), path), config, project)
        if log is not None:
            log.append(got is not None)
        if got is None:
            slicer.remember(path, source, config, full, project)
            continue
        handled += 1
        if getattr(got, "provisional", False):
            assert source.tree.root_node.has_error, "a provisional slice of a text without a syntax error"
            log is not None and log.__setitem__(-1, "provisional")
            continue
        assert _view(got, False) == _view(full, False), f"the slice differs from a full analysis ({path}, {got.sliced})"
    return handled, len(walk)


def test_bench_spot_edits():
    """The benchmark's keystroke in AOTI code: `x` before `self.runner = ...` in Scorer159, and
    after the closing paren (a syntax error: a full analysis, unless the slice handles it)."""
    text = generated_source(1100, 20_000)
    spot = text.index('self.runner = torch._inductor.aoti_load_package("artifacts/m158.pt2"')
    end = text.index("\n", spot)
    steps = [lambda t: t[:spot] + "x" + t[spot:], lambda t: t[:spot] + t[spot + 1:],
             lambda t: t[:end] + "x" + t[end:], lambda t: t[:end] + t[end + 1:]]
    log: list[bool] = []
    _walk(text, "bench.py", 0, 0, edits=steps, log=log)
    # the statement spells `load_package` (AOTI201/AOTI202's jagged.Model reads it): the
    # slice links it to the model it loads (slice._jagged_labels). The syntax error is sliced
    # provisionally; deleting the `x` is sliced from there, and equals a full analysis (_walk)
    assert log == [True, True, "provisional", True], f"the bench spot's keystrokes were not sliced: {log}"


def test_provisional_bursts_then_repairs():
    """Typing bursts inside AOTI statements that leave a syntax error (`)`, `(`, `:`, `x`, `,`,
    `"`), each then deleted char by char: every result that is not provisional (the text is
    clean again, or the error is elsewhere) must equal a full analysis; enough provisional
    slices must have happened for this to prove something."""
    text = generated_source(120, 3000)
    rng = random.Random(11)
    lines = text.split("\n")
    candidates = [i for i, line in enumerate(lines) if AOTI_LINE.search(line)]
    steps = []
    for _ in range(25):
        i = rng.choice(candidates)
        line = lines[i]
        indent = len(line) - len(line.lstrip())
        at = sum(len(x) + 1 for x in lines[:i]) + rng.randint(indent, len(line))
        typed = "".join(rng.choice(')(:x,"') for _ in range(rng.randint(1, 3)))
        for k in range(len(typed)):  # typed char by char, then deleted the same way
            steps.append(lambda t, at=at, k=k, c=typed[k]: t[:at + k] + c + t[at + k:])
        for k in reversed(range(len(typed))):
            steps.append(lambda t, at=at, k=k: t[:at + k] + t[at + k + 1:])
    log: list = []
    handled, n = _walk(text, "bursts.py", 0, 0, edits=steps, log=log)
    provisional = log.count("provisional")
    assert provisional >= 10, f"only {provisional} provisional slices of {n} edits ({slice_mod.WHY})"
    assert handled - provisional >= 10, f"only {handled - provisional} exact slices of {n} edits"


def test_server_verifies_a_provisional_slice():
    """A provisional slice's result is replaced by a full analysis once typing settles
    (verify_results): the diagnostics then equal a fresh server's; deleting the typo is sliced
    from the provisional entry and is exact."""
    from lsprotocol import types

    text = generated_source(120, 2500)
    path = str(ROOT / "provisional_generated.py")  # never written
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, text)
    lines = text.split("\n")
    line = next(i for i, t in enumerate(lines) if "self.runner = torch._inductor.aoti_load_package(" in t)
    col = len(lines[line])
    for version, (a, b, typed) in enumerate([(col, col, "x"), (col, col + 1, "")], 1):
        doc.apply([types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, a), types.Position(line, b)), text=typed)], version, "utf-16")
        ls.update_summary(doc.path, doc.source(), defer=True)
        items = ls.diagnostics(doc)
        result = ls.result(doc)
        assert result.sliced is not None, f"keystroke {version} was not sliced ({slice_mod.WHY})"
        if version == 1:
            assert result.provisional and doc.source().tree.root_node.has_error
            ls.flush_summaries()
            assert ls.verify_results() is True
            items = ls.diagnostics(doc)
            assert not getattr(ls.result(doc), "provisional", False)
            assert getattr(ls.result(doc), "sliced", None) is None  # a full analysis
        else:
            assert not result.provisional
            ls.flush_summaries()
        assert items == inprocess.fresh_diagnostics(doc), f"keystroke {version}: differs"


def test_generated_file_random_aoti_edits():
    handled, n = _walk(generated_source(120, 3000), "big.py", 80, seed=5)
    assert handled >= 15, f"the slice handled only {handled} of {n} edits: the test proves little"


def test_fixture_random_aoti_edits():
    handled = total = 0
    for path in sorted((ROOT / "tests" / "fixtures").rglob("*.py")):
        text = path.read_text("utf-8")
        if not AOTI_LINE.search(text):
            continue
        h, n = _walk(text, str(path), 6, seed=len(text))
        handled, total = handled + h, total + n
    assert handled >= total // 5, f"the slice handled only {handled} of {total} fixture edits"


def test_jagged_random_edits():
    """Longer walks in the fixtures of AOTI201/AOTI202, whose findings read exports, packages,
    loads and runner calls across statements (slice._jagged_labels)."""
    handled = total = 0
    for path in sorted((ROOT / "tests" / "fixtures").glob("AOTI20[12]/**/*.py")):
        text = path.read_text("utf-8")
        for seed in range(2):
            h, n = _walk(text, str(path), 30, seed=len(text) + seed)
            handled, total = handled + h, total + n
    assert handled >= total // 4, f"the slice handled only {handled} of {total} jagged edits"


def test_project_random_aoti_edits():
    handled = total = 0
    for folder in sorted(p for p in (ROOT / "tests" / "projects").iterdir() if p.is_dir()):
        files = sorted(folder.rglob("*.py"))
        for path in files:
            text = path.read_text("utf-8")
            if not AOTI_LINE.search(text):
                continue
            h, n = _walk(text, str(path), 5, seed=len(text), files=files)
            handled, total = handled + h, total + n
    assert handled >= total // 5, f"the slice handled only {handled} of {total} project edits"


def test_server_diagnostics_of_sliced_edits_match_a_fresh_server():
    """The editor's path: a sliced result's diagnostics keep the old ones of the findings it
    moved (lsp/convert.moved_diagnostics, `origin`) and make the others: each must equal what a
    fresh server computes."""
    from aoti_lsp.analysis import incremental
    from lsprotocol import types

    text = generated_source(120, 2500)
    path = str(ROOT / "big_generated.py")  # never written: the document is the editor's
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, text)
    rng, sliced, clean = random.Random(7), 0, text
    for version in range(1, 41):
        new = clean if text != clean else _edit(rng, text)
        start, old_end, new_end = incremental.edit_span(text.encode(), new.encode())
        a, b = doc.lines.position(start, "utf-16"), doc.lines.position(old_end, "utf-16")
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(*a), types.Position(*b)), text=new.encode()[start:new_end].decode())
        doc.apply([change], version, "utf-16")
        text = new
        ls.update_summary(doc.path, doc.source())
        items = ls.diagnostics(doc)
        if ls.analysed.provisional(doc.uri) or getattr(ls.result(doc), "provisional", False):
            ls.flush_summaries()
            ls.verify_results()
            items = ls.diagnostics(doc)
        if not doc.source().tree.root_node.has_error:
            clean = text
        sliced += getattr(ls.result(doc), "sliced", None) is not None
        assert items == inprocess.fresh_diagnostics(doc), f"edit {version}: diagnostics differ from a fresh server's"
    assert sliced >= 8, f"only {sliced} of 40 edits were sliced"


def test_server_slices_between_keystrokes_elsewhere_match_a_fresh_server():
    """Keystrokes in other code (incremental.py moves the findings) between keystrokes in AOTI code
    (sliced): the slice's diagnostics are moved from what the editor shows, through the analysis
    both come from (`base`, `origin`). Each must equal what a fresh server computes."""
    from lsprotocol import types

    text = generated_source(120, 2500)
    lines = text.split("\n")
    aoti = [i for i, l in enumerate(lines) if "self.runner = torch._inductor.aoti_load_package(" in l]
    other = [i for i, l in enumerate(lines) if l.startswith("    total = 0")]
    assert aoti and other
    path = str(ROOT / "big_generated.py")
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, text)
    rng, version, sliced = random.Random(3), 0, 0
    for k in range(24):
        line = rng.choice(aoti if k % 2 == 0 else other)
        # a line's first token, and a blank line above the other code (lines move: `base` lines shift)
        col = len(lines[line]) - len(lines[line].lstrip())
        typed = "x" if k % 2 == 0 else rng.choice(["x", "\n"])
        version += 1
        at = types.Position(line, col)
        doc.apply([types.TextDocumentContentChangePartial(range=types.Range(at, at), text=typed)], version, "utf-16")
        ls.update_summary(doc.path, doc.source(), defer=True)
        items = ls.diagnostics(doc)
        sliced += getattr(ls.result(doc), "sliced", None) is not None and k % 2 == 0
        assert items == inprocess.fresh_diagnostics(doc), f"keystroke {k}: diagnostics differ from a fresh server's"
        lines = doc.data.decode().split("\n")
        aoti = [i for i, l in enumerate(lines) if "self.runner = torch._inductor.aoti_load_package(" in l]
        other = [i for i, l in enumerate(lines) if l.startswith("    total = 0")]
    assert sliced >= 6, f"only {sliced} of 12 keystrokes in AOTI code were sliced"


def test_keystrokes_all_over_the_file_then_in_aoti_code_are_sliced_from_the_text_they_follow():
    """Keystrokes in other code spread through the file (the findings moved, incremental.py),
    then keystrokes in AOTI code: the slice follows each moved keystroke (Slicer.follow), so the
    next keystroke in AOTI code is sliced from the text before it, not from one many edits old
    (whose single edit span reached from the first edit to the last: a whole analysis, ~300 ms
    in a 20k-line file). Each keystroke's diagnostics equal a fresh server's."""
    from lsprotocol import types

    text = generated_source(120, 2500)
    path = str(ROOT / "big_spread.py")
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, text, pause=True)
    rng, version, sliced, aoti_keys = random.Random(5), 0, 0, 0
    for k in range(16):
        lines = doc.data.decode().split("\n")
        aoti = [i for i, l in enumerate(lines) if "self.runner = torch._inductor.aoti_load_package(" in l]
        other = [i for i, l in enumerate(lines) if l.startswith("    total = 0")]
        in_aoti = k % 4 == 3  # three keystrokes far apart in other code, then one in AOTI code
        line = rng.choice(aoti if in_aoti else other)
        col = len(lines[line]) - len(lines[line].lstrip()) + 1
        version += 1
        at = types.Position(line, col)
        doc.apply([types.TextDocumentContentChangePartial(range=types.Range(at, at), text="q")], version, "utf-16")
        items = ls.diagnostics(doc)
        if in_aoti:
            aoti_keys += 1
            sliced += getattr(ls.result(doc), "sliced", None) is not None
        assert items == inprocess.fresh_diagnostics(doc), f"keystroke {k}: diagnostics differ from a fresh server's"
    assert sliced == aoti_keys == 4, f"{sliced} of {aoti_keys} keystrokes in AOTI code were sliced: {slice_mod.WHY}"


def test_enter_keystrokes_keep_their_analysis_and_the_slice_follows():
    """Enter (a new line, indented as the one above) at the end of lines in AOTI code and after
    a function's last line, each followed by a keystroke in AOTI code: messages that name a
    line of the file ("compiled for `cuda` (line 12)") have it moved, a blank line between
    statements moves the slice's statements (Slicer.follow), and no keystroke needs a whole
    analysis. Each keystroke's diagnostics equal a fresh server's."""
    from lsprotocol import types

    text = generated_source(120, 2500)
    path = str(ROOT / "big_enter.py")
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, text, pause=True)
    rng, version, whole = random.Random(7), 0, 0
    real = ls.sliced.remember

    def remember(*args):  # called after each whole analysis of this server's
        nonlocal whole
        whole += 1
        return real(*args)

    ls.sliced.remember = remember
    for k in range(12):
        lines = doc.data.decode().split("\n")
        aoti = [i for i, l in enumerate(lines) if "self.runner = torch._inductor.aoti_load_package(" in l]
        ends = [i for i, l in enumerate(lines[:-1]) if l.startswith("    return ") and lines[i + 1] == ""]
        line = rng.choice(ends if k % 2 else aoti)
        indent = lines[line][:len(lines[line]) - len(lines[line].lstrip())]
        for typed, at in (("\n" + indent, types.Position(line, len(lines[line]))),
                          ("q", types.Position(rng.choice(aoti), 9))):
            version += 1
            doc.apply([types.TextDocumentContentChangePartial(range=types.Range(at, at), text=typed)], version, "utf-16")
            items = ls.diagnostics(doc)
            fresh = inprocess.fresh_diagnostics(doc)
            assert items == fresh, f"edit {version}: diagnostics differ from a fresh server's"
            # and so does what is sent: the JSON of a diagnostic whose message was rewritten in place
            assert [json.loads(encoded(d)) for d in items] == [json.loads(encoded(d)) for d in fresh]
    assert whole == 0, f"{whole} of 24 keystrokes needed a whole analysis: {slice_mod.WHY}"


@pytest.mark.parametrize("ask", ["resolve", "hover"])
def test_quick_fix_after_a_slice_comes_from_a_full_analysis(ask):
    """A slice's lazy fixes were planned on other texts: the quick fix resolved after a sliced
    keystroke (codeAction/resolve), and the fix a hover shows, come from a full analysis of the
    text and equal a fresh server's. The edit here is inside the call the migration rewrites: a
    plan made before it would write the old arguments back."""
    from aoti_lsp.lsp import hover as hover_mod, server as server_mod
    from lsprotocol import types

    text = generated_source(120, 2500)
    call = "so_path = torch._export.aot_compile(Net1(), (torch.randn(2, 16),))"
    at = text.index(call) + len(call) - 2  # between `,` and `)`
    path = str(ROOT / "big_generated.py")
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, text)
    line, col = doc.lines.position(at, "utf-16")
    doc.apply([types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(line, col), types.Position(line, col)), text=" ")], 1, "utf-16")
    ls.update_summary(doc.path, doc.source(), defer=True)
    items = ls.diagnostics(doc)
    assert getattr(ls.result(doc), "partial", False), "the keystroke was not sliced: the test proves nothing"
    fresh = inprocess.server()
    other = inprocess.opened(fresh, doc.uri, path, doc.data.decode(), 1)
    assert items == fresh.diagnostics(other)
    d = next(d for d in items if ((d.data or {}).get("fix") or {}).get("lazy") and d.range.start.line == line)
    if ask == "hover":
        mine, theirs = hover_mod.hover(ls, doc, d.range.start), hover_mod.hover(fresh, other, d.range.start)
        assert mine is not None and mine == theirs
    else:
        data = {"code": d.code, "range": server_mod._plain_range(d.range), "title": d.data["fix"]["title"]}
        mine, theirs = server_mod._lazy_edit(ls, doc, data), server_mod._lazy_edit(fresh, other, data)
        assert mine is not None and mine == theirs
    assert "(torch.randn(2, 16), )" in str(mine)


def test_a_pause_after_opening_prepares_the_slice():
    """What the first keystroke in AOTI code would read (the statements, names, artifacts of the
    last analysed text) is read when typing pauses (AotiServer.settled), and the keystroke after
    it is sliced from it, equal to a fresh server's diagnostics."""
    from lsprotocol import types

    text = generated_source(120, 2500)
    path = str(ROOT / "big_generated.py")
    ls = inprocess.server()
    doc = inprocess.opened(ls, Path(path).as_uri(), path, text)
    assert ls.sliced._last[doc.uri].starts is None  # not read yet: the first keystroke would
    ls.settled()
    assert ls.sliced._last[doc.uri].starts is not None
    line = next(i for i, l in enumerate(text.split("\n")) if "self.runner = torch._inductor.aoti_load_package(" in l)
    at = types.Position(line, 8)
    doc.apply([types.TextDocumentContentChangePartial(range=types.Range(at, at), text="x")], 1, "utf-16")
    ls.update_summary(doc.path, doc.source(), defer=True)
    items = ls.diagnostics(doc)
    assert getattr(ls.result(doc), "sliced", None) is not None
    assert items == inprocess.fresh_diagnostics(doc)


def test_non_ascii_names_link_statements():
    """`dévice` read whole (not `d` and `vice`): the statement that reads it is linked to the one
    that binds it, as for any name. The constant is the compile's device: editing it changes
    the finding."""
    text = ("import torch\n\ndévice = \"cuda\"\n\n\n"
            "class Net(torch.nn.Module):\n    def forward(self, x):\n        return x.relu()\n\n\n"
            "ep = torch.export.export(Net(), (torch.randn(3, 8, device=dévice),))\n"
            "pkg = torch._inductor.aoti_compile_and_package(ep, package_path=\"m.pt2\")\n"
            "runner = torch._inductor.aoti_load_package(pkg)\n"
            "out = runner(torch.randn(3, 8))\n")
    assert analyze(Source(text.encode(), "t.py")).findings, "no finding to change: the test proves nothing"
    edited = text.replace('dévice = "cuda"', 'dévice = "cpu"')
    assert not analyze(Source(edited.encode(), "t.py")).findings
    log: list = []
    _walk(text, "t.py", 0, 0, edits=[lambda t: edited], log=log)  # each sliced result checked there
    assert log == [True], f"not sliced: {log} {slice_mod.WHY}"


# -- AOTI201/AOTI202's model labels: only a model that may have findings links its sites ---------
_QUIET = "class Net{k}(torch.nn.Module):\n    def forward(self, x):\n        return x.relu() * {k}\n\n\n"
_LOUD = ("class Pool(torch.nn.Module):\n    def forward(self, values, lengths):\n"
         "        offsets = torch.cumsum(lengths, 0)\n        return values.sum(0) / offsets[-1]\n\n\n")
_GUARDED = ("class Early(torch.nn.Module):\n    def forward(self, x):\n        if x.numel() == 0:\n"
            "            return x\n        return x.relu()\n\n\n")


def _serve(i: int, model: str, args: str = "torch.randn(4, 16)") -> str:
    return (f"def serve_{i}(batch):\n"
            f"    ep = torch.export.export({model}(), (torch.randn(4, 16, device=\"cuda\"),))\n"
            f"    pkg = torch._inductor.aoti_compile_and_package(ep, package_path=\"artifacts/s{i}.pt2\")\n"
            f"    runner = torch._inductor.aoti_load_package(pkg)\n"
            f"    return runner({args})\n\n\n")


def _models_file(loud: str = "", snippets: int = 80, filler: int = 0) -> str:
    """`snippets` functions exporting, packaging, loading and calling one of three quiet models
    (and of `loud`'s class, every fourth, when given), `filler` plain functions between them:
    more than 50 statements."""
    parts = ["import torch\n\n\n", *(_QUIET.format(k=k) for k in range(3)), loud]
    name = loud.split("(")[0].removeprefix("class ") if loud else None
    for i in range(snippets):
        parts.append(_serve(i, name if name and i % 4 == 0 else f"Net{i % 3}"))
        parts += [f"def helper_{i}_{j}(a):\n    return a + {j}\n\n\n" for j in range(filler)]
    return "".join(parts)


def _line_edit(old: str, new: str, nth: int = 0):
    def step(text: str) -> str:
        at = -1
        for _ in range(nth + 1):
            at = text.index(old, at + 1)
        return text[:at] + new + text[at + len(old):]
    return step


def test_quiet_models_link_nothing():
    """Every snippet exports one of three models whose `forward` has no jagged input and no
    guard: AOTI201/AOTI202 report nothing for them, whatever their exports and calls say, so a
    keystroke in one snippet re-analyses that snippet, not the ~27 others of its model (the
    dense bench file: ~200 of 3,000 statements, each keystroke a whole analysis before)."""
    text = _models_file()
    steps = [_line_edit("runner(torch.randn(4, 16))", "runner(torch.randn(4, 17))", 5),
             _line_edit('package_path="artifacts/s7.pt2"', 'package_path="artifacts/s7x.pt2"'),
             _line_edit("aoti_load_package(pkg)", "aoti_load_package(pkgx)", 9)]
    sizes: list = []
    log: list = []
    orig = slice_mod.slice_result

    def spy(*a):
        got = orig(*a)
        sizes.append(getattr(got, "sliced", None))
        return got
    slice_mod.slice_result = spy
    try:
        _walk(text, "t.py", 0, 0, edits=steps, log=log)  # each sliced result compared with a full analysis
    finally:
        slice_mod.slice_result = orig
    assert log == [True] * len(steps), f"not sliced: {log} {slice_mod.WHY}"
    assert all(s is not None and s[0] <= 5 for s in sizes), f"quiet models still linked: {sizes}"


def test_loud_models_still_linked_and_verdicts_change():
    """Adversarial edits beside quiet models, each compared with a full analysis: a guard typed
    before a call of the loud model's package (AOTI201's verdict for Pool), its `forward`
    edited, a quiet `forward` made loud (a jagged parameter with a site, or an empty-input
    guard: AOTI202), a snippet switched from a quiet model to the loud one and back."""
    text = _models_file(_LOUD + _GUARDED, snippets=40, filler=3)  # evidence in the slice: under half the file
    # callers of Pool's packages that never name Pool: linked to it by its label only
    text += "".join(f"def call_{i}(v, lens):\n    runner = torch._inductor.aoti_load_package(\"artifacts/s{i}.pt2\")\n"
                    f"    return runner(v, lens)\n\n\n" for i in range(0, 40, 4))
    # a keyword argument named like Pool's input: whether every caller passes complete offsets
    text += "def feed(f, v, lens):\n    return f(v, lengths=lens)\n"
    complete = _line_edit("lengths=lens)", "lengths=torch.nn.functional.pad(lens, (1, 0)))")
    assert _view(analyze(Source(text.encode(), "t.py"))) != _view(analyze(Source(complete(text).encode(), "t.py")))
    found = {f.code for f in analyze(Source(text.encode(), "t.py")).findings}
    assert {"AOTI201"} <= found, found
    steps = [
        _line_edit("    return runner(v, lens)", "    return runner(v, lens) if lens.numel() > 0 else v", 0),
        _line_edit("    return runner(v, lens)", "    return runner(v, lens) if lens.numel() > 0 else v", 1),
        _line_edit("    return runner(torch.randn(4, 16))",
                   "    return runner(torch.randn(4, 16)) if batch.numel() > 0 else batch", 0),
        _line_edit("offsets[-1]", "offsets[-2]"),
        _line_edit("def forward(self, x):\n        return x.relu() * 1",
                   "def forward(self, x, lengths):\n        return x[lengths.cumsum(0)[-1]]"),
        _line_edit("def forward(self, x):\n        return x.relu() * 2",
                   "def forward(self, x):\n        if x.numel() == 0:\n            return x\n        return x.relu() * 2"),
        _line_edit("Net1(), (torch.randn", "Pool(), (torch.randn"),
        _line_edit("Pool(), (torch.randn", "Net1(), (torch.randn", 1),
        complete, _line_edit("(lens, (1, 0))", "(lens, (0, 0))"),
        _line_edit("values, lengths):", "values, sizes):"),
    ]
    log: list = []
    _walk(text, "t.py", 0, 0, edits=steps, log=log)  # each sliced result compared with a full analysis
    assert sum(map(bool, log)) >= 4, f"too few sliced: the test proves little {log} {slice_mod.WHY}"


def test_quiet_file_made_loud_after_slices():
    """Slices of a file without a loud function keep no record of what AOTI201/AOTI202 read
    file-wide: once a function turns loud, every edit is compared with a full analysis."""
    text = _models_file(snippets=60)
    steps = [_line_edit("runner(torch.randn(4, 16))", "runner(torch.randn(4, 17))", 3),
             _line_edit('package_path="artifacts/s2.pt2"', 'package_path="artifacts/s2x.pt2"'),
             _line_edit("def forward(self, x):\n        return x.relu() * 0",
                        "def forward(self, x, lengths):\n        return x[lengths.cumsum(0)[-1]]"),
             _line_edit("runner(torch.randn(4, 16))", "runner(torch.randn(4, 18))", 0),
             _line_edit("torch.export.export(Net0()", "torch.export.export(Net1()", 0),
             _line_edit("torch.export.export(Net1()", "torch.export.export(Net0()", 0)]
    log: list = []
    _walk(text, "t.py", 0, 0, edits=steps, log=log)
    assert log[:2] == [True, True], f"not sliced: {log} {slice_mod.WHY}"


FALLBACK = """import torch


def load(p, device):
    last = None
    try:
        from torch._inductor import aoti_load_package
        x = aoti_load_package(p)
    except Exception as e:
        last = e
    try:
        from torch._export import aot_load
        return aot_load(p, device)
    except Exception as e:
        raise RuntimeError(f"no loader ({last} / {e})")


def build(gm, args):
    if hasattr(torch._inductor, "aoti_compile_and_package"):
        pkg = 1
    else:
        so = torch._export.aot_compile(gm, args)
        return torch._export.aot_load(so, "cuda")
"""


def test_a_fallback_follows_edits_of_the_statements_before_it():
    """compat.py: whether an old call is a fallback depends on the try/if before it; an edit
    there (a return added or taken away, the new API named or not) must give a full analysis's
    findings."""
    edits = [lambda t: t.replace("x = aoti_load_package(p)", "return aoti_load_package(p)"),
             lambda t: t.replace("pkg = 1", "pkg = torch._inductor.aoti_compile_and_package(ep)"),
             lambda t: t.replace("return aoti_load_package(p)", "x = aoti_load_package(p)"),
             lambda t: t.replace("pkg = torch._inductor.aoti_compile_and_package(ep)", "pkg = 2")]
    log: list = []
    assert _walk(FALLBACK, "/tmp/m.py", 0, 0, edits=edits, log=log) == (4, 4), log
