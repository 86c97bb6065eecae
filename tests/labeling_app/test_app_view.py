"""The item view model and the review tables."""

from __future__ import annotations

import json

import pandas as pd
from labeling_helpers import IMG, LINK, SCRIPT, xss_trajectory

from trajudge.judges import load_rubric
from trajudge.labeling_app import (
    annotator_disagreements,
    build_item_view,
    judge_human_disagreements,
)
from trajudge.trajectories import Step, Trajectory


def test_item_view_keeps_text_and_truncates_long_outputs() -> None:
    long = "".join(f"line {i}\n" for i in range(1000))
    t = Trajectory(
        id="a",
        task_id="k",
        input="hi",
        steps=[Step(tool="read", args={"b": 1, "a": [1, 2]}, output=long, tokens=7)],
    )
    v = build_item_view(t, preview_chars=100)
    s = v.steps[0]
    assert json.loads(s.args_json) == {"b": 1, "a": [1, 2]} and "\n  " in s.args_json
    assert s.output_preview.startswith(long[:100]) and len(s.output_preview) < 200
    assert f"{len(long) - 100:,} more characters" in s.output_preview
    assert s.output_full == long
    assert s.meta == "7 tokens"
    short = build_item_view(t, preview_chars=len(long))
    assert short.steps[0].output_full is None


def test_item_view_of_the_xss_sample_is_verbatim() -> None:
    v = build_item_view(
        xss_trajectory(),
        rule_result={
            "gates_passed": False,
            "score": 0.5,
            "data": {"results": [{"check": "c", "passed": False, "detail": {"x": SCRIPT}}]},
        },
        judgments=[
            {"rubric_id": "r", "judge": "j", "score": 2.0, "reasoning": IMG},
            {"rubric_id": "other", "judge": "j", "score": 5.0},
        ],
        rubric_id="r",
    )
    assert SCRIPT in v.input and LINK in (v.final_answer or "") and v.steps[0].output_preview == IMG
    assert not v.steps[1].ok and SCRIPT in (v.steps[1].error or "")
    assert v.rule is not None and v.rule.checks[0]["detail"] == json.dumps({"x": SCRIPT})
    assert [j["reasoning"] for j in v.judgments] == [IMG]  # the other rubric is left out
    assert v.usage == {"prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.01, "turns": 2}


def _labels(rows: list[tuple[str, str, float | None, bool, bool]]) -> pd.DataFrame:
    cols = ["trajectory_id", "annotator", "value", "skipped", "adjudication"]
    return pd.DataFrame(rows, columns=cols).assign(rubric_id="trajectory_reasonableness")


def test_judge_vs_human_disagreements() -> None:
    rubric = load_rubric("trajectory_reasonableness")  # pass when >= 4
    labels = _labels(
        [
            ("t1", "a", 5.0, False, False),
            ("t1", "b", 4.0, False, False),  # humans 4.5: pass
            ("t2", "a", 2.0, False, False),  # humans fail
            ("t3", "a", None, True, False),  # skipped: not a human verdict
            ("t2", "c", 4.0, False, True),  # adjudication, not counted as a human label
        ]
    )
    j = pd.DataFrame(
        {
            "trajectory_id": ["t1", "t1", "t2", "t3", "t1"],
            "judge": ["j1", "j1", "j1", "j1", "j2"],
            "rubric_id": rubric.id,
            "score": [2.0, 3.0, 2.0, 5.0, 5.0],
            "error": None,
            "other_id": None,
        }
    )
    out = judge_human_disagreements(labels, j, rubric)
    # t1/j1: judge mean 2.5 (fail) vs humans 4.5 (pass) -> a disagreement; j2 agrees;
    # t2: both fail; t3 has no human value
    assert out[
        ["trajectory_id", "judge", "judge_score", "human_mean", "n_humans"]
    ].values.tolist() == [["t1", "j1", 2.5, 4.5, 2]]
    assert not out.loc[0, "adjudicated"]


def test_annotator_disagreements() -> None:
    rubric = load_rubric("trajectory_reasonableness")
    labels = _labels(
        [
            ("t1", "b", 2.0, False, False),
            ("t1", "a", 5.0, False, False),
            ("t2", "a", 3.0, False, False),
            ("t2", "b", 3.0, False, False),
            ("t3", "a", 1.0, False, False),
            ("t3", "b", 2.0, False, False),
            ("t3", "z", 2.0, False, True),
        ]
    )
    out = annotator_disagreements(labels, rubric)
    assert out["trajectory_id"].tolist() == ["t1", "t3"]  # widest spread first; t2 agrees
    assert out.loc[0, "labels"] == "a=5, b=2"
    assert out["adjudicated"].tolist() == [False, True]


def test_rule_view_reads_what_the_rules_engine_stores() -> None:
    """The stored rule data is RuleReport.to_dict(); the view must show its checks."""
    from trajudge.labeling_app._view import rule_view
    from trajudge.rules import run_checks
    from trajudge.trajectories import Step, TaskSpec, Trajectory

    traj = Trajectory(id="x", task_id="t", steps=[Step(tool="delete_all")])
    report = run_checks(traj, TaskSpec(forbidden_tools=["delete_all"]))
    view = rule_view(
        {"gates_passed": report.gates_passed, "score": report.score, "data": report.to_dict()}
    )
    by_name = {c["check"]: c for c in view.checks}
    assert by_name["forbidden_tools"]["passed"] is False
    assert "delete_all" in by_name["forbidden_tools"]["detail"]
    assert view.gates_passed is False


def test_item_view_shows_the_conversation_with_its_user_turns() -> None:
    from trajudge.labeling_app import TurnView
    from trajudge.trajectories import Message

    t = Trajectory(
        id="c",
        task_id="c",
        input="Cancel ABC123.",
        messages=[
            Message(role="user", content="Cancel ABC123."),
            Message(role="assistant", content="Shall I cancel it?"),
            Message(role="user", content="yes"),
            Message(role="assistant", steps=[0]),
            Message(role="tool", step=0),
            Message(role="assistant", content="<b>Done</b>"),
        ],
        steps=[Step(tool="cancel_reservation", args={"id": "ABC123"}, output="cancelled")],
    )
    view = build_item_view(t)
    assert [(v.role, v.text, [s.tool for s in v.steps]) for v in view.turns] == [
        ("user", "Cancel ABC123.", []),
        ("assistant", "Shall I cancel it?", []),
        ("user", "yes", []),
        ("assistant", "", ["cancel_reservation"]),
        ("assistant", "<b>Done</b>", []),  # text stays text
    ]
    assert all(isinstance(v, TurnView) for v in view.turns)
    assert build_item_view(Trajectory(id="s", task_id="s")).turns == []
