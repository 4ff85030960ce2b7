"""jsonc.py writes and reads what the json package does (the cache and the rules' tables go
through it, without importing json and its `re`)."""

from __future__ import annotations

import json
import math

import pytest

from aoti_lsp import jsonc

VALUES = [
    None, True, False, 0, -1, 10**30, 2.5, -0.0, 1e300, "", "plain", "é \"q\" \\ \n\t\x00", "\ud800 lone", "😀",
    [], {}, [1, [2, [3, {"a": [None]}]]], {"k": {"d": [1.5, "x"]}, "": 0}, list(range(50)),
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_dumps_and_loads_are_json_s(value):
    text = jsonc.dumps(value)
    assert text == json.dumps(value, separators=(",", ":"))
    assert jsonc.loads(text) == json.loads(text) and jsonc.loads(f" \n{text}\t ") == value


def test_non_finite_floats_as_json_writes_them():
    text = jsonc.dumps([math.inf, -math.inf])
    assert text == json.dumps([math.inf, -math.inf], separators=(",", ":"))
    assert jsonc.loads(text) == [math.inf, -math.inf] and math.isnan(jsonc.loads("NaN"))


@pytest.mark.parametrize("bad", ["", " ", "{", "[1,]", "{}x", "1 2", "'a'", "[\"\x01\"]", "nan", "{1: 2}"])
def test_what_is_not_one_json_value_is_a_value_error(bad):
    with pytest.raises(ValueError):
        json.loads(bad)
    with pytest.raises(ValueError):
        jsonc.loads(bad)


def test_what_json_cannot_write_is_a_type_error():
    with pytest.raises(TypeError):
        jsonc.dumps({1, 2})
    with pytest.raises(TypeError):
        jsonc.dumps({(1, 2): 3})
