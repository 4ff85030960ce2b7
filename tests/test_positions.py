"""positions.py: the one place that converts between byte offsets and editor positions."""

from hypothesis import given, settings
from hypothesis import strategies as st

from aoti_lsp.analysis.positions import UTF8, UTF16, UTF32, LineIndex

TEXT = st.text(alphabet=st.sampled_from(list("ab \n\r\té😀中")), max_size=60)


def test_known_line():
    data = 's = "é😀"; so = f()\n'.encode()
    idx = LineIndex(data)
    at = data.index(b"so")
    assert idx.position(at, UTF8) == (0, 14)
    assert idx.position(at, UTF16) == (0, 11)
    assert idx.position(at, UTF32) == (0, 10)
    for enc, col in ((UTF8, 14), (UTF16, 11), (UTF32, 10)):
        assert idx.offset(0, col, enc) == at


def test_clamping_and_never_splitting_a_character():
    idx = LineIndex("é😀\nx".encode())
    assert idx.offset(0, 1, UTF16) == 2  # after é
    assert idx.offset(0, 2, UTF16) == 2  # inside the surrogate pair: stays before 😀
    assert idx.offset(0, 3, UTF8) == 2  # inside the bytes of 😀: stays before it
    assert idx.offset(0, 99, UTF32) == len("é😀".encode())
    assert idx.offset(9, 0, UTF16) == len(idx.data)
    assert idx.offset(-1, 0, UTF16) == 0


@settings(max_examples=300)
@given(TEXT, st.data())
def test_round_trip_every_encoding(text, data):
    raw = text.encode()
    idx = LineIndex(raw)
    # every character boundary survives byte -> position -> byte in every encoding
    boundaries = [len(text[:i].encode()) for i in range(len(text) + 1)]
    at = data.draw(st.sampled_from(boundaries))
    for enc in (UTF8, UTF16, UTF32):
        line, col = idx.position(at, enc)
        back = idx.offset(line, col, enc)
        # a "\r" before "\n" is not addressable inside the line: it maps to the line end
        assert back == at or raw[back:at] == b"\r"


@settings(max_examples=300)
@given(TEXT, TEXT, st.data())
def test_incremental_update_matches_a_rebuild(text, insert, data):
    raw = text.encode()
    boundaries = [len(text[:i].encode()) for i in range(len(text) + 1)]
    start = data.draw(st.sampled_from(boundaries))
    end = data.draw(st.sampled_from([b for b in boundaries if b >= start]))
    new = insert.encode()
    out = raw[:start] + new + raw[end:]
    assert LineIndex(raw).edited(start, end, new, out).starts == LineIndex(out).starts



@settings(max_examples=300)
@given(TEXT, st.data())
def test_line_ends_are_what_the_ending_regex_finds(text, data):
    """_ends (split and running sums where no "\\r" is in the range) finds the ends the regex finds."""
    import re

    from aoti_lsp.analysis.positions import _ends

    raw = text.encode()
    lo = data.draw(st.integers(0, len(raw)))
    hi = data.draw(st.integers(lo, len(raw)))
    ending = re.compile(rb"\r\n?|\n")
    assert _ends(raw, lo, hi) == [m.end() for m in ending.finditer(raw, lo, hi)]
    assert LineIndex(raw).starts == [0, *(m.end() for m in re.finditer(rb"\r\n?|\n", raw))]
