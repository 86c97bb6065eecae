"""Argument checks: nested paths, the five ops, and optimal assignment of calls."""

from __future__ import annotations

import itertools

import pytest
from rules_helpers import check, traj

BOOKING = {
    "passengers": [{"first_name": "Mia", "dob": "1990-04-05"}],
    "flights": [
        {"flight_number": "HAT136", "date": "2024-05-20"},
        {"flight_number": "HAT039", "date": "2024-05-20"},
    ],
    "amount": 255.0,
    "insurance": "no",
}


def args_result(checks, *calls):
    t = traj(*calls) if calls else traj(("book", BOOKING))
    r = check(t, "arg_checks", arg_checks=checks)
    assert r is not None
    return r


def test_nested_paths_pass():
    r = args_result(
        [
            {"tool": "book", "path": "passengers[0].dob", "value": "1990-04-05"},
            {"tool": "book", "path": "flights[1].flight_number", "value": "HAT039"},
            {"tool": "book", "path": "amount", "op": "approx", "value": 255.004, "tolerance": 0.01},
            {"tool": "book", "path": "flights[0].date", "op": "regex", "value": r"2024-05-\d\d"},
            {"tool": "book", "path": "insurance", "op": "any"},
            {"tool": "book", "path": "passengers[1]", "op": "absent"},
        ]
    )
    assert r.passed and r.score == 1.0 and r.data["fields"] == 6


def test_wrong_value_names_field_expected_and_actual():
    r = args_result([{"tool": "book", "path": "passengers[0].dob", "value": "1990-05-04"}])
    assert not r.passed and r.score == 0.0
    assert 'passengers[0].dob: expected "1990-05-04", got "1990-04-05"' in r.detail


@pytest.mark.parametrize(
    ("check_", "needle"),
    [
        ({"path": "flights[2].flight_number", "value": "X"}, 'expected "X", got <absent>'),
        ({"path": "insurance", "op": "absent"}, 'insurance: expected absent, got "no"'),
        ({"path": "nope", "op": "any"}, "nope: expected present, got <absent>"),
        ({"path": "amount", "op": "approx", "value": 250, "tolerance": 1}, "expected 250 ± 1"),
        ({"path": "insurance", "op": "regex", "value": "yes|maybe"}, "/yes|maybe/"),
        # regex is a full match: "n" alone does not match "no"
        ({"path": "insurance", "op": "regex", "value": "n"}, "/n/"),
        # a number never satisfies a regex: only text does
        ({"path": "amount", "op": "regex", "value": ".*"}, "amount: expected to match"),
    ],
)
def test_each_op_fails_with_a_reason(check_, needle):
    r = args_result([{"tool": "book", **check_}])
    assert not r.passed
    assert needle in r.detail


def test_equals_compares_numbers_by_value_and_keeps_bools_apart():
    assert args_result([{"tool": "book", "path": "amount", "value": 255}]).passed
    r = args_result([{"tool": "f", "path": "x", "value": 1}], ("f", {"x": True}))
    assert not r.passed


def test_score_is_share_of_fields():
    # 3 field checks, 1 wrong -> 2/3
    r = args_result(
        [
            {"tool": "book", "path": "insurance", "value": "no"},
            {"tool": "book", "path": "amount", "value": 255},
            {"tool": "book", "path": "flights[0].flight_number", "value": "HAT999"},
        ]
    )
    assert r.score == pytest.approx(2 / 3)


def test_no_call_of_the_tool_fails_every_field():
    r = args_result([{"tool": "cancel", "path": "id", "op": "any"}], ("book", {"id": 1}))
    assert not r.passed and r.score == 0.0
    assert "no call of cancel left" in r.detail


# Two expectations on `pay`: "any" = amount present with any value, "exact" = amount == 1.
# Calls: pay(amount=1) then pay(amount=2). A greedy pass in list order that serves "any"
# first takes pay(amount=1) and leaves pay(amount=2) for "exact", which fails; the optimal
# assignment gives pay(amount=2) to "any" and pay(amount=1) to "exact": everything passes.
EXPECTATIONS = [
    {"tool": "pay", "call": "any", "path": "amount", "op": "any"},
    {"tool": "pay", "call": "exact", "path": "amount", "value": 1},
    {"tool": "pay", "call": "exact", "path": "currency", "value": "usd"},
]
CALLS = [("pay", {"amount": 1, "currency": "usd"}), ("pay", {"amount": 2, "currency": "eur"})]


def test_assignment_is_optimal_not_greedy():
    r = args_result(EXPECTATIONS, *CALLS)
    assert r.passed and r.score == 1.0
    steps = {a["call"]: a["step"] for a in r.data["assignment"]}
    assert steps == {"any": 1, "exact": 0}


def test_permuting_expectations_gives_identical_results():
    base = args_result(EXPECTATIONS, *CALLS)
    failing = [*EXPECTATIONS, {"tool": "pay", "call": "third", "path": "amount", "value": 3}]
    base_failing = args_result(failing, *CALLS)
    assert not base_failing.passed
    for perm in itertools.permutations(EXPECTATIONS):
        assert args_result(list(perm), *CALLS) == base
    for perm in itertools.permutations(failing):
        assert args_result(list(perm), *CALLS) == base_failing


def test_checks_without_a_call_label_form_one_expectation():
    # both fields must hold on ONE call: no call has amount 1 and currency eur
    r = args_result(
        [
            {"tool": "pay", "path": "amount", "value": 1},
            {"tool": "pay", "path": "currency", "value": "eur"},
        ],
        *CALLS,
    )
    assert not r.passed and r.score == pytest.approx(1 / 2)
