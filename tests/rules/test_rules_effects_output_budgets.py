"""Side effects, output schema, failed calls and budgets."""

from __future__ import annotations

import pytest
from rules_helpers import check, traj

from trajudge.trajectories import Step, Trajectory, Usage

BEFORE = {"src/a.py": "h1", "src/b.py": "h2", "README.md": "h3", "build/x.o": "h4"}
AFTER = {"src/a.py": "h1*", "README.md": "h3*", "notes.txt": "h5", "build/y.o": "h6"}


def test_side_effects_lists_unexpected_changes():
    t = traj("edit", files_before=BEFORE, files_after=AFTER)
    r = check(t, "side_effects", allowed_file_changes=["src/*", "build/*"])
    assert r is not None and not r.passed and r.severity == "gate"
    # changes: added notes.txt, build/y.o; deleted src/b.py, build/x.o; modified src/a.py,
    # README.md. Allowed by globs: build/y.o, src/b.py, build/x.o, src/a.py.
    # unexpected: added notes.txt, modified README.md -> 2 of 6 -> score 2/3
    assert r.data["unexpected"] == {
        "added": ["notes.txt"],
        "deleted": [],
        "modified": ["README.md"],
    }
    assert r.score == pytest.approx(4 / 6)
    assert "unexpected added: notes.txt" in r.detail
    assert "unexpected modified: README.md" in r.detail


def test_side_effects_empty_allow_list_means_nothing_may_change():
    t = traj(files_before={"a": "1"}, files_after={"a": "1"})
    assert check(t, "side_effects", allowed_file_changes=[]).passed
    t = traj(files_before={"a": "1"}, files_after={})
    r = check(t, "side_effects", allowed_file_changes=[])
    assert r is not None and not r.passed and r.data["unexpected"]["deleted"] == ["a"]
    assert check(t, "side_effects") is None  # None: does not apply


def test_side_effects_without_snapshots_cannot_pass():
    r = check(traj("edit"), "side_effects", allowed_file_changes=["*"])
    assert r is not None and not r.passed and "files_before and files_after" in r.detail


SCHEMA = {
    "type": "object",
    "properties": {"status": {"enum": ["ok", "refused"]}, "id": {"type": "integer"}},
    "required": ["status"],
}


def test_output_schema():
    ok = traj(final_answer='{"status": "ok", "id": 3}')
    assert check(ok, "output_schema", output_schema=SCHEMA).passed
    bad = traj(final_answer='{"status": "maybe", "id": "x"}')
    r = check(bad, "output_schema", output_schema=SCHEMA)
    assert r is not None and not r.passed and r.severity == "gate"
    assert "at $.id: 'x' is not of type 'integer'" in r.detail
    assert "at $.status" in r.detail


def test_output_schema_not_json_fails_with_reason():
    r = check(traj(final_answer="Done!"), "output_schema", output_schema=SCHEMA)
    assert r is not None and not r.passed and r.detail.startswith("final answer is not JSON")
    r = check(traj(), "output_schema", output_schema=SCHEMA)
    assert r is not None and not r.passed and r.detail == "no final answer"


def test_failed_calls_count_and_rate():
    t = Trajectory(
        id="x", task_id="t", steps=[Step(tool="a", ok=False), Step(tool="b"), Step(tool="c")] * 2
    )
    # 2 of 6 calls failed
    r = check(t, "failed_calls")
    assert r is not None and not r.passed
    assert r.data["failed"] == 2 and r.data["rate"] == pytest.approx(1 / 3)
    assert r.score == pytest.approx(2 / 3) and "2 of 6 calls failed" in r.detail
    assert check(t, "failed_calls", max_failure_rate=0.5).passed
    assert check(traj(), "failed_calls") is None  # no calls: a 0/0 rate does not apply


def _run(**usage):
    return traj("a", "b", "c", usage=Usage(**usage))


def test_budget_limits():
    t = _run(prompt_tokens=900, completion_tokens=200, cost_usd=0.02, latency_s=3.0)
    budgets = {"max_steps": 3, "max_tokens": 1000, "max_cost_usd": 0.05, "max_latency_s": 2}
    r = check(t, "budget_limits", budgets=budgets)
    # steps 3 <= 3 ok, tokens 1100 > 1000, cost ok, latency 3 > 2 -> 2 of 4 met
    assert r is not None and not r.passed and r.severity == "gate"
    assert r.score == 0.5
    assert "tokens 1100 > limit 1000" in r.detail and "latency_s 3 > limit 2" in r.detail


def test_budget_unknown_figure_is_not_met():
    r = check(_run(), "budget_limits", budgets={"max_cost_usd": 1})
    assert r is not None and not r.passed and "cost_usd unknown" in r.detail


def test_budget_regression_against_baseline():
    t = _run(prompt_tokens=100, completion_tokens=60, cost_usd=0.01, latency_s=10)
    baseline = {"steps": 2, "tokens": 100, "cost_usd": 0.01, "latency_s": 5}
    r = check(t, "budget_regression", budgets={"baseline": baseline})
    # ratios: steps 1.5 (not > 1.5), tokens 1.6 > 1.5, cost 1.0, latency 2.0 > 1.5
    assert r is not None and not r.passed and r.severity == "regression"
    assert r.score == 0.5
    assert "tokens 160 is 1.60x baseline 100" in r.detail and "latency_s" in r.detail
    assert "steps" not in r.detail
    r = check(t, "budget_regression", budgets={"baseline": baseline, "tolerance": 2.0})
    assert r is not None and r.passed


def test_turns_have_a_limit_and_a_baseline():
    t = _run(turns=9)
    r = check(t, "budget_limits", budgets={"max_turns": 8})
    assert r is not None and not r.passed and "turns 9 > limit 8" in r.detail
    r = check(t, "budget_regression", budgets={"baseline": {"turns": 4}})
    # 9 / 4 = 2.25 > 1.5
    assert r is not None and not r.passed and "turns 9 is 2.25x baseline 4" in r.detail
    r = check(_run(turns=6), "budget_regression", budgets={"baseline": {"turns": 4}})
    assert r is not None and r.passed  # 1.5x exactly is within
    r = check(_run(), "budget_regression", budgets={"baseline": {"turns": 4}})
    assert r is not None and not r.passed and "turns unknown" in r.detail


def test_budgets_do_not_apply_when_unset():
    assert check(_run(), "budget_limits") is None
    assert check(_run(), "budget_limits", budgets={"tolerance": 2}) is None
    assert check(_run(), "budget_regression", budgets={"max_steps": 3}) is None
