"""Canonical keys (numbers by value), equality and diffs."""

from __future__ import annotations

import json
import random

from trajudge.rules import call_key, diff_values, values_equal
from trajudge.rules._values import MISSING, normalize


def _slow_key(value):
    return json.dumps(normalize(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_call_key_fast_path_agrees_with_full_normalisation():
    # the fast path skips normalisation when the JSON text cannot hold an integral float
    cases = [
        {"a": 250.0},
        {"a": 1e16},  # prints as 1e+16, integral
        {"a": 1.5e16},  # 1.5e+16, integral
        {"a": -0.0},
        {"a": 0.5, "b": "v1.0 text"},
        {"a": [1.25, {"b": 3.0}]},
        {"a": 1e-5},
        {"b": "no floats", "n": 3},
    ]
    rng = random.Random(3)
    for _ in range(200):
        cases.append(
            {f"k{i}": rng.choice([rng.random(), float(rng.randint(0, 9)), 7]) for i in range(3)}
        )
    for case in cases:
        assert call_key(case) == _slow_key(case), case
    assert call_key({"a": 250.0}) == call_key({"a": 250}) == '{"a":250}'
    assert call_key({"a": 1e16}) == '{"a":10000000000000000}'


def test_values_equal():
    assert values_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not values_equal(True, 1) and not values_equal(0, False)
    assert not values_equal([1], [1, 1]) and not values_equal({"a": 1}, {"b": 1})
    assert not values_equal("1", 1)


def test_diff_values_paths():
    expected = {"flights": [{"n": "A"}, {"n": "B"}], "x": 1}
    actual = {"flights": [{"n": "A", "o": "JFK"}], "x": 1.0}
    assert diff_values(expected, actual) == [
        ("flights[0].o", MISSING, "JFK"),
        ("flights[1]", {"n": "B"}, MISSING),
    ]
