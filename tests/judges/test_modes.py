"""Position swap in pairwise and reference mode, sample aggregation, and juries."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fake_llm import FakeLLM

from trajudge.calibration import item_verdicts
from trajudge.core import InputError
from trajudge.judges import (
    Aggregate,
    Judge,
    JudgeSpec,
    Judgment,
    Rubric,
    aggregate_judgments,
    aggregate_jury,
    load_rubric,
    parse_judge_arg,
)
from trajudge.trajectories import Step, Trajectory

pytestmark = pytest.mark.timeout(120)


def _traj(tid: str, marker: str) -> Trajectory:
    return Trajectory(
        id=tid,
        task_id="1",
        trial=int(tid[-1]),
        input="cancel my trip",
        steps=[Step(tool="cancel_reservation", args={"who": marker}, output=marker)],
    )


CAND = _traj("c0", "CANDIDATE")
OTHER = _traj("o1", "OTHERONE")


def _judge(fake: FakeLLM, rubric: str, **kw: object) -> Judge:
    spec = {"name": "j", "model": "openai/fake", "api_base": fake.api_base, "rubric": rubric}
    spec.update(kw)
    return Judge(JudgeSpec.model_validate(spec))


def _first_shown(user: str) -> str:
    a = user.index('<trajectory label="A">')
    b = user.index('<trajectory label="B">')
    return "CANDIDATE" if "CANDIDATE" in user[a:b] else "OTHERONE"


def test_pairwise_runs_both_orders_and_maps_the_second_back(fake_llm: FakeLLM) -> None:
    # a fair judge: always prefers the candidate, wherever it is shown
    def prefer_candidate(user: str, v: dict[str, Any]) -> dict[str, Any]:
        return {**v, "verdict": "A" if _first_shown(user) == "CANDIDATE" else "B"}

    fake_llm.decide = prefer_candidate
    result = _judge(fake_llm, "trajectory_preference").judge(CAND, other=OTHER)
    by_order = {j.order: j for j in result.judgments}
    assert set(by_order) == {"ab", "ba"}
    # raw verdicts as presented: A in ab, B in ba
    assert '"verdict": "A"' in (by_order["ab"].raw or "")
    assert '"verdict": "B"' in (by_order["ba"].raw or "")
    # mapped back to the original numbering: A (the candidate) both times, no score
    assert [by_order[o].verdict for o in ("ab", "ba")] == ["A", "A"]
    assert {j.score for j in result.judgments} == {None}
    assert result.aggregate.verdict == "A" and result.aggregate.passed is None
    assert result.aggregate.inconsistent is False


def test_pairwise_position_bias_is_flagged_inconsistent(fake_llm: FakeLLM) -> None:
    fake_llm.decide = lambda user, v: {**v, "verdict": "A"}  # always the first shown
    result = _judge(fake_llm, "trajectory_preference").judge(CAND, other=OTHER)
    verdicts = {j.order: j.verdict for j in result.judgments}
    # ab: the candidate is shown first and wins (A); ba: it is shown second and loses (B)
    assert verdicts == {"ab": "A", "ba": "B"}
    # a flip: the item is a tie (the default), or "inconsistent" on request
    assert result.aggregate.verdict == "tie" and result.aggregate.inconsistent is True
    again = aggregate_judgments(result.judgments, result_rubric(), inconsistent_as="inconsistent")
    assert again.verdict == "inconsistent"


def test_reference_mode_takes_the_candidates_score_from_its_slot(fake_llm: FakeLLM) -> None:
    def fair(user: str, v: dict[str, Any]) -> dict[str, Any]:
        cand_first = _first_shown(user) == "CANDIDATE"
        return {**v, "score_a": 2 if cand_first else 5, "score_b": 5 if cand_first else 2}

    fake_llm.decide = fair
    result = _judge(fake_llm, "trajectory_reasonableness_reference").judge(CAND, other=OTHER)
    assert sorted((j.order, j.score, j.other_score) for j in result.judgments) == [
        ("ab", 2.0, 5.0),
        ("ba", 2.0, 5.0),
    ]
    assert all(j.other_id == "o1" for j in result.judgments)
    assert result.aggregate.score == 2.0 and result.aggregate.inconsistent is False
    assert result.aggregate.passed is False  # 2 < pass_threshold 4


def test_reference_mode_position_bias_is_flagged(fake_llm: FakeLLM) -> None:
    fake_llm.decide = lambda user, v: {**v, "score_a": 5, "score_b": 1}
    result = _judge(fake_llm, "trajectory_reasonableness_reference").judge(CAND, other=OTHER)
    # ab: candidate in A = 5 (ref 1); ba: candidate in B = 1 (ref 5): mean 3, flip
    assert result.aggregate.by_order == {"ab": 5.0, "ba": 1.0}
    assert result.aggregate.score == 3.0 and result.aggregate.inconsistent is True


def test_no_swap_runs_one_order(fake_llm: FakeLLM) -> None:
    result = _judge(fake_llm, "trajectory_preference", swap=False).judge(CAND, other=OTHER)
    assert [j.order for j in result.judgments] == ["ab"]
    assert result.aggregate.inconsistent is None


def test_samples_per_order_mean_for_ordinal(fake_llm: FakeLLM) -> None:
    scores = iter([2, 4, 5])
    fake_llm.decide = lambda user, v: {**v, "score": next(scores)}
    result = _judge(fake_llm, "trajectory_reasonableness", samples=3, concurrency=1).judge(CAND)
    assert sorted(j.sample for j in result.judgments) == [0, 1, 2]
    assert result.aggregate.score == pytest.approx((2 + 4 + 5) / 3)


def _j(order: str, score: float | None, sample: int = 0, **kw: Any) -> Judgment:
    return Judgment("t", None, "j", "r", "v", "m", "pointwise", order, sample, score=score, **kw)  # type: ignore[arg-type]


def result_rubric() -> Rubric:
    return load_rubric("trajectory_preference")


def test_binary_samples_take_the_majority() -> None:
    rubric = load_rubric("answer_faithfulness")
    agg = aggregate_judgments([_j("ab", 1), _j("ab", 0), _j("ab", 1)], rubric)
    assert agg.score == pytest.approx(2 / 3) and agg.passed is True  # 2 of 3 pass
    tie = aggregate_judgments([_j("ab", 1), _j("ab", 0)], rubric)
    assert tie.score == 0.5 and tie.passed is False


def test_aggregate_is_the_per_item_verdict_of_every_figure() -> None:
    # ab: pass, fail (share 1/2); ba: pass -> order-balanced share (1/2 + 1) / 2 = 3/4, a
    # pass; before one aggregation for all, each order's majority (0.5, 1) was averaged and
    # compared with the binary threshold 1: a fail here, a pass in the report
    rubric = load_rubric("answer_faithfulness")
    calls = [_j("ab", 1), _j("ab", 0, sample=1), _j("ba", 1)]
    agg = aggregate_judgments(calls, rubric)
    assert agg.score == 0.75 and agg.passed is True
    rows = pd.DataFrame(
        {"item": "t", "order": [c.order for c in calls], "score": [c.score for c in calls]}
    )
    assert item_verdicts(rows).tolist() == [1.0]
    # ordinal: ab 5 and 4 (4.5), ba 3 (its second sample failed) -> 3.75 < 4, a fail
    ordinal = load_rubric("trajectory_reasonableness")
    calls = [_j("ab", 5), _j("ab", 4, sample=1), _j("ba", 3), _j("ba", None, error="x")]
    agg = aggregate_judgments(calls, ordinal)
    assert agg.score == 3.75 and agg.passed is False and agg.n_errors == 1


def test_all_errors_give_nan_never_a_pass_or_fail() -> None:
    rubric = load_rubric("trajectory_reasonableness")
    agg = aggregate_judgments([_j("ab", None, error="boom")], rubric)
    assert math.isnan(agg.score) and agg.passed is None and agg.n_errors == 1


def test_aggregate_jury_mean_majority_and_missing() -> None:
    def a(score: float) -> Aggregate:
        return Aggregate(score, 1, 0, {"ab": score}, None, None)

    ordinal = aggregate_jury([a(2.0), a(4.0), a(math.nan)])
    assert ordinal.score == 3.0 and ordinal.n_judges == 2 and ordinal.n_missing == 1
    binary = aggregate_jury([a(1.0), a(0.0), a(1.0), a(1.0)], binary=True)
    assert binary.score == 1.0 and binary.agreement == 0.75
    assert math.isnan(aggregate_jury([a(math.nan)]).score)


@pytest.mark.parametrize(
    ("text", "name", "model", "rubric"),
    [
        (
            "big=ollama/llama3:8b:trajectory_reasonableness",
            "big",
            "ollama/llama3:8b",
            "trajectory_reasonableness",
        ),
        ("l=local/gemma-3-270m:policy_compliance", "l", "local/gemma-3-270m", "policy_compliance"),
        ("x=openai/gpt-4o:rubrics/mine.yaml", "x", "openai/gpt-4o", "rubrics/mine.yaml"),
    ],
)
def test_parse_judge_arg_splits_the_rubric_off_the_last_colon(
    text: str, name: str, model: str, rubric: str
) -> None:
    spec = parse_judge_arg(text)
    assert (spec.name, spec.model, spec.rubric) == (name, model, rubric)


@pytest.mark.parametrize("text", ["noequals", "x=modelonly", "=m:r", "x=:r", "x=m:"])
def test_parse_judge_arg_rejects_malformed(text: str) -> None:
    with pytest.raises(InputError, match="NAME=MODEL:RUBRIC"):
        parse_judge_arg(text)


def test_reasoning_cap_leaves_room_for_the_scores_in_max_tokens() -> None:
    rubric = load_rubric("trajectory_reasonableness")  # 3 criteria + score = 4 fields
    small = Judge(JudgeSpec(name="s", model="m", max_tokens=128), rubric=rubric)
    # room = 128 - 24 - 12 * 4 = 56 tokens -> 2 characters per token = 112
    assert small.reasoning_chars == 112
    schema = small.verdict_model.model_json_schema()
    assert schema["properties"]["reasoning"]["maxLength"] == 112
    big = Judge(JudgeSpec(name="b", model="m", max_tokens=512), rubric=rubric)
    assert big.reasoning_chars == 800  # the spec's cap, which already fits


def test_nominal_judge_stores_the_category_and_samples_take_the_majority(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    import yaml

    rubric = {
        "id": "error_type",
        "description": "Which error, if any?",
        "scale": {
            "kind": "nominal",
            "levels": [
                {"value": v, "label": v, "anchor": f"the trajectory shows {v}"}
                for v in ("none", "wrong_tool", "wrong_args")
            ],
        },
    }
    path = tmp_path / "error_type.yaml"
    path.write_text(yaml.safe_dump(rubric))
    answers = iter(["wrong_tool", "none", "wrong_tool"])
    fake_llm.decide = lambda user, v: {**v, "verdict": next(answers)}
    result = _judge(fake_llm, str(path), samples=3, concurrency=1).judge(CAND)
    assert sorted(j.verdict or "" for j in result.judgments) == ["none", "wrong_tool", "wrong_tool"]
    assert all(j.score is None for j in result.judgments)
    assert result.aggregate.verdict == "wrong_tool"  # 2 of 3 samples
    assert result.aggregate.passed is None and math.isnan(result.aggregate.score)
