"""Boundary tags detected from hand-made trajectories, and coverage with pass^k per kind."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from evalset_helpers import case, traj

from trajudge.calibration import pass_hat_k
from trajudge.evalset import BOUNDARY_KINDS, coverage, detect_boundary_tags
from trajudge.trajectories import Message, Step


def tags(*steps: Step, **kw: object) -> list[str]:
    return detect_boundary_tags(traj("t", steps=list(steps)), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("out", ["", "   ", "[]", "{}", "null", " [] \n"])
def test_empty_outputs_are_empty_results(out: str) -> None:
    assert tags(Step(tool="search", output=out)) == ["empty_result"]


def test_what_is_not_an_empty_result() -> None:
    assert tags(Step(tool="search", output=None)) == []  # output not recorded
    assert tags(Step(tool="search", output="[1]")) == []
    assert tags(Step(tool="search", output="0")) == []
    assert tags(Step(tool="think", output="")) == []  # empty by design
    assert tags(Step(tool="think", output=""), silent_tools=()) == ["empty_result"]
    # a failed call with no output is a failure, not an empty result
    assert tags(Step(tool="search", ok=False, output="", error="boom")) == ["tool_failure"]


def test_oversized_output_is_strictly_over_the_limit() -> None:
    assert tags(Step(tool="dump", output="x" * 20_000)) == []
    assert tags(Step(tool="dump", output="x" * 20_001)) == ["oversized_output"]
    assert tags(Step(tool="dump", output="x" * 11), max_output_chars=10) == ["oversized_output"]


@pytest.mark.parametrize(
    "error",
    [
        "Timeout",
        "request timed out",
        "ReadTimeout after 30s",
        "TimeoutError",
        "time out",
        "timed_out",
        "deadline exceeded",
    ],
)
def test_timeouts_in_the_error(error: str) -> None:
    assert tags(Step(tool="api", ok=False, error=error)) == ["tool_failure", "timeout"]


def test_timeout_in_an_ok_output_is_a_timeout_but_not_a_failure() -> None:
    assert tags(Step(tool="api", output="upstream timed out, partial data")) == ["timeout"]
    assert tags(Step(tool="api", output="at this time outbound flights are full")) == []


@pytest.mark.parametrize(
    "error",
    [
        "Permission denied",
        "HTTP 403",
        "403",
        "Unauthorized",
        "unauthorised user",
        "Forbidden",
        "access denied to bucket",
    ],
)
def test_permission_denied_in_the_error(error: str) -> None:
    assert tags(Step(tool="api", ok=False, error=error)) == ["permission_denied", "tool_failure"]


def test_a_bare_403_in_an_output_is_a_number_not_a_refusal() -> None:
    # from τ-bench airline: a business fare of 403
    fare = '{"prices": {"economy": 109, "business": 403}}'
    assert tags(Step(tool="search_direct_flight", output=fare)) == []
    assert tags(Step(tool="api", output="status: 403")) == ["permission_denied"]
    assert tags(Step(tool="api", output="HTTP 403 Forbidden")) == ["permission_denied"]


def test_ambiguous_request_is_never_detected_and_order_is_canonical() -> None:
    t = traj(
        "t",
        steps=[
            Step(tool="a", ok=False, error="timed out"),
            Step(tool="b", output="[]"),
            Step(tool="c", output="y" * 30_000),
            Step(tool="d", ok=False, error="permission denied"),
        ],
    )
    t = t.model_copy(update={"input": "book me something, whatever " + "x" * 10_000})
    found = detect_boundary_tags(t)
    assert found == [k for k in BOUNDARY_KINDS if k != "ambiguous_request"]


def test_a_long_user_turn_is_a_long_input() -> None:
    plain = traj("t", steps=[Step(tool="a", output="ok")])
    assert detect_boundary_tags(plain) == []
    # 50,000 characters as the input, or as a later user turn of the conversation
    as_input = plain.model_copy(update={"input": "summarise this log: " + "e" * 50_000})
    assert detect_boundary_tags(as_input) == ["long_input"]
    turns = [Message(role="user", content="hi"), Message(role="user", content="z" * 50_000)]
    as_turn = plain.model_copy(update={"messages": turns})
    assert detect_boundary_tags(as_turn) == ["long_input"]
    # the edge: exactly max_input_chars is not long, one more is
    edge = plain.model_copy(update={"input": "q" * 10_000})
    assert detect_boundary_tags(edge) == []
    assert detect_boundary_tags(edge, max_input_chars=9_999) == ["long_input"]


def test_coverage_shares_and_pass_hat_k_by_hand() -> None:
    # 10 cases; timeout on task T (3 trials: pass, pass, fail) and on task U (1 trial, pass);
    # tool_failure on task V (2 trials: fail, fail); 4 plain cases. So 6 of 10 are tagged.
    cases = [
        case("T", 0, outcome=True, tags=("timeout",)),
        case("T", 1, outcome=True, tags=("timeout",)),
        case("T", 2, outcome=False, tags=("timeout",)),
        case("U", 0, outcome=True, tags=("timeout",)),
        case("V", 0, outcome=False, tags=("tool_failure",)),
        case("V", 1, outcome=False, tags=("tool_failure",)),
        *(case(f"plain{i}", outcome=True) for i in range(4)),
    ]
    r = coverage(cases, ks=[1, 2])
    table = r.table.set_index("kind")
    assert table.loc["timeout", "cases"] == 4
    assert table.loc["timeout", "share"] == pytest.approx(0.4)
    # pass^1: T 2/3, U 1 -> mean 5/6. pass^2: T C(2,2)/C(3,2) = 1/3; U has 1 trial (left out)
    assert table.loc["timeout", "pass^1"] == pytest.approx(5 / 6)
    assert table.loc["timeout", "pass^2"] == pytest.approx(pass_hat_k(3, 2, 2)) == 1 / 3
    assert table.loc["tool_failure", "pass^1"] == 0.0
    assert table.loc["tool_failure", "share"] == pytest.approx(0.2)
    assert math.isnan(table.loc["empty_result", "pass^1"])
    assert table.loc["empty_result", "cases"] == 0
    assert r.n_boundary == 6
    assert r.boundary_share == pytest.approx(0.6)
    assert r.warnings == []
    assert r.missing == [
        "empty_result",
        "oversized_output",
        "ambiguous_request",
        "long_input",
        "permission_denied",
    ]


def test_warning_below_ten_percent_and_not_at_ten() -> None:
    nine = [case("b", tags=("timeout",)), *(case(f"p{i}") for i in range(10))]  # 1 of 11
    r = coverage(nine)
    assert len(r.warnings) == 1
    assert "9%" in r.warnings[0] and "1 of 11" in r.warnings[0]
    ten = [case("b", tags=("timeout",)), *(case(f"p{i}") for i in range(9))]  # 1 of 10
    assert coverage(ten).warnings == []


def test_success_from_labels_a_mapping_of_runs_or_a_frame_column() -> None:
    cases = [
        case("T", 0, outcome=False, tags=("timeout",)),
        case("T", 1, outcome=True, tags=("timeout",)),
    ]
    by_label = coverage(cases, success="label", ks=[1]).table.set_index("kind")
    assert by_label.loc["timeout", "pass^1"] == pytest.approx(0.5)
    # repeated runs of each case; None is an error and is left out
    runs = {"ds/T-0": [True, True, None], "ds/T-1": [True, False]}
    r = coverage(cases, success=runs, ks=[1, 2]).table.set_index("kind")
    # task T: 4 verdicts, 3 passes -> pass^1 3/4, pass^2 C(3,2)/C(4,2) = 1/2
    assert r.loc["timeout", "pass^1"] == pytest.approx(0.75)
    assert r.loc["timeout", "pass^2"] == pytest.approx(0.5)
    frame = pd.DataFrame(
        {
            "id": ["x", "y"],
            "task_id": ["1", "2"],
            "tags": [["empty_result"], []],
            "ok": [1.0, math.nan],
        }
    )
    fr = coverage(frame, success="ok", ks=[1]).table.set_index("kind")
    assert fr.loc["empty_result", "pass^1"] == 1.0
    with pytest.raises(ValueError, match="no column"):
        coverage(frame, success="nope")
