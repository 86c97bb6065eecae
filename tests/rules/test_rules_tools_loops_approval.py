"""Required and forbidden tools, loops and approvals."""

from __future__ import annotations

import pytest
from rules_helpers import check, traj

from trajudge.trajectories import Step, Trajectory


def test_required_tools():
    r = check(traj("a", "b"), "required_tools", required_tools=["a", "c", "d"])
    # 1 of 3 distinct required tools called
    assert r is not None and not r.passed and r.score == pytest.approx(1 / 3)
    assert r.data["missing"] == ["c", "d"] and "missing: c, d" in r.detail
    assert check(traj("a", "b"), "required_tools", required_tools=["b"]).passed
    assert check(traj("a"), "required_tools") is None  # empty list: does not apply


def test_required_tool_needs_a_successful_call():
    failed = Step(tool="lookup_order", ok=False, error="timeout")
    t = Trajectory(id="t-0", task_id="t", steps=[failed, failed, Step(tool="refund")])
    r = check(t, "required_tools", required_tools=["lookup_order", "refund", "notify"])
    # lookup_order: 2 calls, both failed; refund: 1 ok call; notify: never called -> 1 of 3
    assert r is not None and not r.passed and r.score == pytest.approx(1 / 3)
    assert r.data == {"missing": ["lookup_order", "notify"], "failed": {"lookup_order": 2}}
    assert r.detail == (
        "missing: lookup_order, notify (lookup_order was called 2 times but never succeeded)"
    )
    # one success among failures is enough
    retried = Trajectory(id="t-1", task_id="t", steps=[failed, Step(tool="lookup_order")])
    assert check(retried, "required_tools", required_tools=["lookup_order"]).passed
    once = Trajectory(id="t-2", task_id="t", steps=[failed])
    r = check(once, "required_tools", required_tools=["lookup_order"])
    assert r is not None and "called 1 time but never succeeded" in r.detail


def test_forbidden_tools_is_a_gate_with_counts():
    r = check(traj("a", "rm", "b", "rm"), "forbidden_tools", forbidden_tools=["rm", "drop"])
    # 2 of 4 calls forbidden -> score 0.5
    assert r is not None and not r.passed and r.severity == "gate"
    assert r.score == 0.5 and r.data["called"] == {"rm": 2} and "rm called 2x" in r.detail
    assert check(traj("a"), "forbidden_tools", forbidden_tools=["rm"]).passed


def test_loops_over_threshold_lists_tool_and_count():
    t = traj(*[("get", {"id": 1, "x": 2.0})] * 3, ("get", {"x": 2, "id": 1}), ("get", {"id": 2}))
    # get(id=1, x=2) four times (key order and 2.0 vs 2 do not matter), threshold 2
    r = check(t, "loops")
    assert r is not None and not r.passed
    assert r.data["loops"] == [{"tool": "get", "args": '{"id":1,"x":2}', "count": 4}]
    assert "get x4" in r.detail
    # excess = 4 - 2 = 2 of 5 calls -> score 0.6
    assert r.score == pytest.approx(0.6)
    assert check(t, "loops", loop_threshold=4).passed


def test_loops_at_threshold_pass():
    r = check(traj(("get", {"id": 1}), ("get", {"id": 1})), "loops")
    assert r is not None and r.passed and r.score == 1.0


def _steps(*items: tuple[str, bool | None]) -> Trajectory:
    return Trajectory(
        id="x", task_id="t", steps=[Step(tool=tool, approved=ok) for tool, ok in items]
    )


def test_high_risk_without_earlier_approval_fails_the_gate():
    spec = {"high_risk_tools": ["delete"], "approval_tools": ["ask_user"]}
    r = check(_steps(("delete", None), ("ask_user", None), ("delete", None)), "approval", **spec)
    # first delete comes before the approval, the second after it: 1 of 2 approved
    assert r is not None and not r.passed and r.severity == "gate"
    assert r.score == 0.5
    assert r.data["unapproved"] == [{"step": 0, "tool": "delete", "reason": "no earlier approval"}]
    assert "delete at step 0 without approval" in r.detail


def test_step_approved_flag_counts_and_explicit_refusal_does_not():
    spec = {"high_risk_tools": ["delete"], "approval_tools": ["ask_user"]}
    assert check(_steps(("delete", True)), "approval", **spec).passed
    r = check(_steps(("ask_user", None), ("delete", False)), "approval", **spec)
    assert r is not None and not r.passed
    # the approval call itself does not approve a high-risk call made at the same step
    assert not check(_steps(("delete", None)), "approval", **spec).passed


def test_approval_does_not_apply_without_high_risk_tools():
    assert check(_steps(("delete", None)), "approval", approval_tools=["ask"]) is None


_RISK = {"high_risk_tools": ["refund"], "approval_tools": ["request_approval"]}


def _ask(**fields: object) -> Step:
    return Step(tool="request_approval", **fields)  # type: ignore[arg-type]


def _approval_of(*steps: Step) -> tuple[bool, list[dict[str, object]]]:
    r = check(Trajectory(id="x", task_id="t", steps=list(steps)), "approval", **_RISK)
    assert r is not None
    return r.passed, r.data["unapproved"]


@pytest.mark.parametrize(
    "asked",
    [
        _ask(ok=False, error="denied"),  # the approval call failed: the case
        _ask(ok=False, output="denied"),
        _ask(ok=True, error="approval service unavailable"),  # errored, even with ok left True
        _ask(ok=True, approved=False),  # recorded as refused
        _ask(ok=True, output="Request denied by the supervisor."),
        _ask(ok=True, output="The customer declined."),
        _ask(ok=True, output='{"approved": false, "by": "lead"}'),
        _ask(ok=True, output="not approved"),
    ],
)
def test_refused_or_failed_approval_does_not_approve_a_high_risk_call(asked: Step):
    passed, unapproved = _approval_of(asked, Step(tool="refund"))
    assert not passed
    assert unapproved == [{"step": 1, "tool": "refund", "reason": "approval at step 0 refused"}]


@pytest.mark.parametrize(
    "asked",
    [
        _ask(),
        _ask(output="approved"),
        _ask(output='{"approved": true}'),
        # an explicit approved=True on the approval call outranks the wording of its output
        _ask(output="previous request denied; this one approved", approved=True),
    ],
)
def test_granted_approval_approves_the_later_high_risk_call(asked: Step):
    assert _approval_of(asked, Step(tool="refund")) == (True, [])


def test_the_latest_approval_decides_and_one_after_the_call_does_not_count():
    granted, refused = _ask(output="approved"), _ask(ok=False, error="denied")
    # a refusal after a grant withdraws it: the refund after the refusal is unapproved
    passed, unapproved = _approval_of(granted, Step(tool="refund"), refused, Step(tool="refund"))
    assert not passed
    assert unapproved == [{"step": 3, "tool": "refund", "reason": "approval at step 2 refused"}]
    # asked again and granted: approved again
    assert _approval_of(refused, granted, Step(tool="refund"))[0]
    # an approval that comes after the high-risk call does not cover it
    passed, unapproved = _approval_of(Step(tool="refund"), granted)
    assert unapproved == [{"step": 0, "tool": "refund", "reason": "no earlier approval"}]
    # the high-risk call's own approved=False is a refusal whatever came before
    passed, unapproved = _approval_of(granted, Step(tool="refund", approved=False))
    assert unapproved == [{"step": 1, "tool": "refund", "reason": "refused"}]
