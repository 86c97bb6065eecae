"""Reports: weighted score, gates, does-not-apply, custom checks and dataset resolution."""

from __future__ import annotations

import pytest
from rules_helpers import ref, report, traj

from trajudge.rules import (
    DEFAULT_WEIGHTS,
    CheckResult,
    RuleReport,
    check_dataset,
    merge_specs,
    register_check,
    run_checks,
    unregister_check,
)
from trajudge.trajectories import TaskSpec


def test_empty_spec_runs_only_the_always_on_checks():
    # loops always applies (loop_threshold has a default); failed_calls needs >= 1 call
    assert [r.check for r in report(traj()).results] == ["loops"]
    assert [r.check for r in report(traj("a")).results] == ["loops", "failed_calls"]


def test_weighted_score_hand_worked():
    t = traj("a", "rm", "b", "rm")
    rep = report(t, forbidden_tools=["rm"], required_tools=["a", "c"])
    # forbidden: score 2/4 = 0.5, weight 2; required: 1/2 = 0.5, weight 1;
    # loops: 1.0, weight 1; failed_calls: 1.0, weight 0.5
    # mean = (2*0.5 + 1*0.5 + 1*1 + 0.5*1) / 4.5 = 3 / 4.5 = 2/3
    assert DEFAULT_WEIGHTS["forbidden_tools"] == 2.0
    assert rep.score == pytest.approx(2 / 3)
    assert not rep.gates_passed and not rep.passed and rep.failed_gates == ["forbidden_tools"]


def test_spec_weights_and_severities_override_defaults():
    t = traj("a", "rm", "b", "rm")
    rep = report(
        t,
        forbidden_tools=["rm"],
        weights={"forbidden_tools": 0, "loops": 0, "failed_calls": 0},
        severities={"forbidden_tools": "diagnostic"},
        required_tools=["a"],
    )
    # only required_tools (1.0) carries weight; no gate failed
    assert rep.score == 1.0 and rep.gates_passed and rep.passed


def test_pass_threshold():
    t = traj("a")
    spec = {"required_tools": ["a", "b", "c", "d"], "weights": {"loops": 0, "failed_calls": 0}}
    assert report(t, **spec).score == pytest.approx(0.25)
    assert report(t, **spec, pass_threshold=0.25).passed
    rep = report(t, **spec, pass_threshold=0.3)
    assert rep.gates_passed and not rep.passed


def test_regression_does_not_fail_gates():
    t = traj("a", "b", "c")
    rep = report(t, budgets={"baseline": {"steps": 1}})
    assert rep.regressions == ["budget_regression"] and rep.gates_passed and rep.passed


def test_custom_check_registry_and_severity_from_spec():
    calls: list[dict] = []

    @register_check("starts_with")
    def _starts_with(trajectory, spec, *, tool):
        calls.append({"tool": tool, "task": spec.task_id})
        ok = bool(trajectory.steps) and trajectory.steps[0].tool == tool
        return CheckResult(check="whatever", passed=ok, score=1.0 if ok else 0.0)

    try:
        spec = {"task_id": "t", "checks": [{"name": "starts_with", "params": {"tool": "a"}}]}
        rep = report(traj("b", "a"), **spec)
        r = rep.result("starts_with")  # renamed to the registered name
        assert r is not None and not r.passed and r.severity == "diagnostic"
        assert calls == [{"tool": "a", "task": "t"}]
        spec["checks"][0]["severity"] = "gate"
        rep = report(traj("b"), **spec)
        assert not rep.gates_passed and rep.failed_gates == ["starts_with"]
        assert report(traj("a"), **spec).gates_passed
    finally:
        unregister_check("starts_with")


def test_builtin_custom_checks():
    spec = {"checks": [{"name": "max_calls", "params": {"tool": "a", "limit": 1}}]}
    r = report(traj("a", "a"), **spec).result("max_calls")
    assert r is not None and not r.passed and r.data["count"] == 2
    spec = {
        "checks": [{"name": "final_answer_regex", "params": {"pattern": "booked", "flags": "i"}}]
    }
    assert report(traj(final_answer="BOOKED: X1"), **spec).result("final_answer_regex").passed


def test_check_result_validates_score_and_severity():
    with pytest.raises(ValueError, match="score"):
        CheckResult(check="x", passed=True, score=1.5)
    with pytest.raises(ValueError, match="severity"):
        CheckResult(check="x", passed=True, severity="fatal")  # type: ignore[arg-type]


def test_report_round_trips_through_dict():
    rep = report(traj("a", "a", "a"), forbidden_tools=["a"])
    assert RuleReport.from_dict(rep.to_dict()) == rep


def test_merge_specs_lists_replace_dicts_merge():
    defaults = TaskSpec(
        forbidden_tools=["rm"],
        budgets={"max_steps": 10, "tolerance": 2.0},
        weights={"loops": 0.5},
        output_schema={"type": "object", "required": ["a"]},
    )
    entry = TaskSpec(
        forbidden_tools=["drop"],
        budgets={"max_steps": 5},
        weights={"tool_f1": 3},
        output_schema={"type": "array"},
    )
    merged = merge_specs(defaults, entry)
    assert merged.forbidden_tools == ["drop"]
    assert merged.budgets is not None
    assert (merged.budgets.max_steps, merged.budgets.tolerance) == (5, 2.0)
    assert merged.weights == {"loops": 0.5, "tool_f1": 3}
    assert merged.output_schema == {"type": "array"}  # a schema replaces as a whole
    assert merge_specs(defaults, TaskSpec()).forbidden_tools == ["rm"]


def test_check_dataset_resolves_per_task_specs_over_defaults():
    trajs = [traj("a", "rm", id="1", task_id="t1"), traj("a", "rm", id="2", task_id="t2")]
    specs = {"t1": TaskSpec(reference=ref("a", "b"))}
    defaults = TaskSpec(forbidden_tools=["rm"])
    reps = check_dataset(trajs, specs, defaults)
    r1, r2 = reps
    assert [r.trajectory_id for r in reps] == ["1", "2"]
    # t1: its reference plus the default forbidden tools
    assert r1.result("reference_match") is not None and not r1.gates_passed
    # t2 has no entry: defaults only
    assert r2.result("reference_match") is None and not r2.gates_passed
    assert r1.spec_sha256 != r2.spec_sha256
    assert r1 == run_checks(trajs[0], merge_specs(defaults, specs["t1"]))
