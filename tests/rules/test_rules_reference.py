"""Reference match in six modes, tool-call F1, step accuracy and step count."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from rules_helpers import check, ref, traj
from scipy.optimize import linear_sum_assignment

from trajudge.rules import run_checks
from trajudge.rules._compile import Prepared, compile_spec
from trajudge.rules._reference import lcs_pairs, multiset_pairs
from trajudge.trajectories import Step, TaskSpec, Trajectory

A, B, C, D = "a", "b", "c", "d"


def match(calls: list[str], reference: list[str], mode: str) -> tuple[bool, float]:
    r = check(traj(*calls), "reference_match", reference=ref(*reference), match_mode=mode)
    assert r is not None
    assert r.score is not None
    return r.passed, r.score


# actual   reference   mode        expected (passed, score), worked by hand
CASES = [
    # exact: identical sequence only; score LCS / max(len)
    ([A, B, C], [A, B, C], "exact", (True, 1.0)),
    ([A, C, B], [A, B, C], "exact", (False, 2 / 3)),  # LCS "ab" or "ac" = 2, max len 3
    ([A, B, C, D], [A, B, C], "exact", (False, 3 / 4)),  # LCS 3, max len 4
    # in_order: reference is a subsequence; score LCS / len(ref)
    ([A, D, B, D, C], [A, B, C], "in_order", (True, 1.0)),
    ([A, C, B], [A, B, C], "in_order", (False, 2 / 3)),
    ([C, B, A], [A, B, C], "in_order", (False, 1 / 3)),  # LCS of cba, abc = 1
    ([D], [A, B], "in_order", (False, 0.0)),
    # any_order: same multiset; score matched / max(len)
    ([C, A, B], [A, B, C], "any_order", (True, 1.0)),
    ([C, A, B, B], [A, B, C], "any_order", (False, 3 / 4)),
    ([A, A], [A, B], "any_order", (False, 1 / 2)),  # one a matched, b missing
    # subset: every actual call is in the reference; score matched / len(actual)
    ([B], [A, B, C], "subset", (True, 1.0)),
    ([], [A, B], "subset", (True, 1.0)),  # the empty multiset is a subset
    ([B, D], [A, B, C], "subset", (False, 1 / 2)),
    ([B, B], [A, B, C], "subset", (False, 1 / 2)),  # only one b in the reference
    # superset: every reference call made, any order; score matched / len(ref)
    ([D, C, B, A], [A, B, C], "superset", (True, 1.0)),
    ([C, D], [A, B, C], "superset", (False, 1 / 3)),
    # prefix: actual starts with the reference; score matching prefix / len(ref)
    ([A, B, C, D], [A, B], "prefix", (True, 1.0)),
    ([A, C, B], [A, B], "prefix", (False, 1 / 2)),
    ([B, A], [A, B], "prefix", (False, 0.0)),
    ([A], [A, B], "prefix", (False, 1 / 2)),
]


@pytest.mark.parametrize(("calls", "reference", "mode", "expected"), CASES)
def test_modes_hand_worked(calls, reference, mode, expected):
    passed, score = match(calls, reference, mode)
    assert passed is expected[0]
    assert score == pytest.approx(expected[1])


def test_args_match_by_canonical_json_with_numbers_by_value():
    t = traj(("pay", {"amount": 250.0, "ids": [1, 2], "to": "x"}))
    same = [("pay", {"to": "x", "ids": [1.0, 2], "amount": 250})]  # key order, 250 vs 250.0
    r = check(t, "reference_match", reference=ref(*same), match_mode="exact")
    assert r is not None and r.passed
    other = [("pay", {"to": "x", "ids": [1, 2], "amount": 251})]
    r = check(t, "reference_match", reference=ref(*other), match_mode="exact")
    assert r is not None and not r.passed
    # the detail names the differing field with expected and actual values
    assert "amount: expected 251, got 250.0" in r.detail


def test_bool_is_not_a_number_in_args():
    t = traj(("set", {"flag": True}))
    r = check(t, "reference_match", reference=ref(("set", {"flag": 1})), match_mode="exact")
    assert r is not None and not r.passed


def test_args_none_matches_any_args():
    t = traj(("search", {"q": "x"}), ("book", {"id": 7}))
    r = check(
        t, "reference_match", reference=ref("search", ("book", {"id": 7})), match_mode="exact"
    )
    assert r is not None and r.passed


def test_wildcard_matching_is_optimal_in_any_order():
    # reference: search(any) and search(q=x); actual: search(q=x), search(q=y).
    # A greedy pass that gives search(q=x) to the wildcard leaves search(q=x) unmatched;
    # the optimal matching pairs wildcard<->q=y and q=x<->q=x.
    t = traj(("search", {"q": "x"}), ("search", {"q": "y"}))
    for order in (ref("search", ("search", {"q": "x"})), ref(("search", {"q": "x"}), "search")):
        r = check(t, "reference_match", reference=order, match_mode="any_order")
        assert r is not None and r.passed and r.score == 1.0


def test_missing_call_detail_names_tool_and_never_called():
    t = traj("a")
    r = check(t, "reference_match", reference=ref("a", "book"), match_mode="in_order")
    assert r is not None and not r.passed
    assert "book (never called)" in r.detail
    assert r.data["missing"][0]["tool"] == "book"


def test_empty_reference_does_not_apply():
    assert check(traj("a"), "reference_match", reference=[]) is None
    assert check(traj("a"), "reference_match") is None
    assert check(traj("a"), "tool_f1") is None


def _brute_max_matching(compat: np.ndarray) -> int:
    rows, cols = linear_sum_assignment(-compat.astype(float))
    return int(compat[rows, cols].sum())


def test_multiset_matching_equals_linear_sum_assignment_on_random_cases():
    rng = random.Random(7)
    for _ in range(300):
        tools = ["a", "b"]
        actual = [(rng.choice(tools), {"x": rng.randint(0, 2)}) for _ in range(rng.randint(0, 6))]
        reference = [
            (rng.choice(tools), None if rng.random() < 0.4 else {"x": rng.randint(0, 2)})
            for _ in range(rng.randint(1, 6))
        ]
        spec = TaskSpec(reference=ref(*reference), match_mode="any_order")
        p, c = Prepared(traj(*actual)), compile_spec(spec)
        compat = np.array(
            [[rt == at and (ra is None or ra == aa) for at, aa in actual] for rt, ra in reference]
        ).reshape(len(reference), len(actual))
        assert len(multiset_pairs(c, p)) == _brute_max_matching(compat)


def _lcs_brute(actual: list[str], reference: list[str]) -> int:
    best = 0
    for k in range(len(reference) + 1):
        for sub in itertools.combinations(range(len(reference)), k):
            it = iter(actual)
            if all(reference[i] in it for i in sub):
                best = max(best, k)
    return best


def test_lcs_equals_brute_force_on_random_cases():
    rng = random.Random(11)
    for _ in range(300):
        actual = [rng.choice("abc") for _ in range(rng.randint(0, 7))]
        reference = [rng.choice("abc") for _ in range(rng.randint(1, 5))]
        spec = TaskSpec(reference=ref(*reference), match_mode="in_order")
        pairs = lcs_pairs(compile_spec(spec), Prepared(traj(*actual)))
        assert len(pairs) == _lcs_brute(actual, reference)
        # pairs are a valid alignment: increasing on both sides, same tools
        assert all(actual[j] == reference[i] for i, j in pairs)
        assert all(a[0] < b[0] and a[1] < b[1] for a, b in itertools.pairwise(pairs))


def test_tool_f1_hand_worked():
    # actual a, b, b, d; reference a, b, c -> matched a, b = 2
    # precision 2/4, recall 2/3, F1 = 2 * 0.5 * 0.6667 / 1.1667 = 4/7
    r = check(traj(A, B, B, D), "tool_f1", reference=ref(A, B, C))
    assert r is not None and not r.passed
    assert r.data["precision"] == pytest.approx(0.5)
    assert r.data["recall"] == pytest.approx(2 / 3)
    assert r.score == pytest.approx(4 / 7)
    r = check(traj(), "tool_f1", reference=ref(A))
    assert r is not None and r.score == 0.0 and r.data["precision"] is None


def test_step_accuracy_by_position_hand_worked():
    # reference a(x=1), b, c; actual a(x=2), b, d, c
    # position 0: tool a == a (tool hit), args differ (no param hit); 1: b == b (both);
    # 2: d != c. tool accuracy 2/3, parameter accuracy 1/3
    t = traj(("a", {"x": 2}), "b", "d", "c")
    r = check(t, "step_accuracy", reference=ref(("a", {"x": 1}), "b", "c"))
    assert r is not None and not r.passed
    assert r.data["tool_accuracy"] == pytest.approx(2 / 3)
    assert r.data["param_accuracy"] == pytest.approx(1 / 3)
    assert r.score == pytest.approx(1 / 3)


def test_step_count_ratio():
    # 5 steps for a 2-call reference: ratio 2.5 > 2.0 -> fails; score 2/5
    r = check(traj(A, B, C, D, A), "step_count", reference=ref(A, B))
    assert r is not None and not r.passed
    assert r.data["ratio"] == 2.5 and r.score == pytest.approx(0.4)
    r = check(traj(A, B, C, D, A), "step_count", reference=ref(A, B), max_step_ratio=3)
    assert r is not None and r.passed


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # steps: a (failed), a (ok), b (ok); reference a, b
        ("in_order", (True, 1.0)),  # the successful a, then b
        ("superset", (True, 1.0)),
        ("exact", (False, 2 / 3)),  # the failed a is still a call made: 3 actual
        ("any_order", (False, 2 / 3)),
        ("subset", (False, 2 / 3)),  # the failed a is in no expected call
        ("prefix", (False, 0.0)),  # step 0 failed, so nothing of the reference starts the run
    ],
)
def test_a_failed_call_satisfies_no_expected_call(mode: str, expected: tuple) -> None:
    steps = [Step(tool=A, ok=False, error="timeout"), Step(tool=A), Step(tool=B)]
    t = Trajectory(id="t-0", task_id="t", steps=steps)
    r = run_checks(t, TaskSpec(reference=ref(A, B), match_mode=mode)).result("reference_match")
    assert r is not None and (r.passed, r.score) == (expected[0], pytest.approx(expected[1]))


def test_only_failed_calls_are_missing_and_said_so() -> None:
    # a failed: the reference [a] is not met in any mode, and the detail says why
    steps = [Step(tool=A, args={"x": 1}, ok=False, error="denied")]
    t = Trajectory(id="t-0", task_id="t", steps=steps)
    spec = TaskSpec(reference=ref((A, {"x": 1})), match_mode="superset", required_tools=[A])
    rep = run_checks(t, spec)
    r = rep.result("reference_match")
    assert r is not None and not r.passed and r.score == 0.0
    assert "a (closest: step 0, which failed)" in r.detail
    req = rep.result("required_tools")
    assert req is not None and not req.passed  # the same rule as required_tools
