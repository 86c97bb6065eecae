"""The driver checks every verdict against the rubric's schema, whatever engine produced it
(a local call, a Ray worker's answer, a provider batch line, a cache entry): a score of 999 on
a 1..5 scale, a category the scale does not have or a missing field is stored as an error,
never as a pass or a fail."""

from __future__ import annotations

from typing import Any

import pytest

from trajudge.judges import JudgeSpec, build_judges, load_rubric
from trajudge.judges.calls._call import PreparedCall, finish
from trajudge.judges.calls._result import CallResult

CRITERIA = {c.id: 4 for c in load_rubric("trajectory_reasonableness").criteria}


def _call(rubric: str) -> PreparedCall:
    (judge,) = build_judges([JudgeSpec(name="j", model="openai/fake", rubric=rubric)])
    return PreparedCall(judge, "t", None, "ab", 0, ("t",), [], {}, "key")


@pytest.mark.parametrize(
    ("verdict", "where"),
    [
        ({"reasoning": "fine", "criteria": CRITERIA, "score": 999}, "score"),
        ({"reasoning": "fine", "criteria": CRITERIA, "score": 0}, "score"),
        ({"reasoning": "fine", "criteria": CRITERIA}, "score"),
        ({"criteria": CRITERIA, "score": 5}, "reasoning"),
        ({"reasoning": "fine", "criteria": {**CRITERIA, "x": 1}, "score": 5}, "criteria.x"),
    ],
)
def test_a_verdict_outside_the_scale_is_an_error_not_a_pass(
    verdict: dict[str, Any], where: str
) -> None:
    j = finish(_call("trajectory_reasonableness"), CallResult(verdict, "{}", "key"))
    assert j.error is not None and f"{where}: " in j.error, j.error
    assert (j.score, j.verdict) == (None, None)


def test_a_verdict_on_the_scale_is_scored() -> None:
    j = finish(
        _call("trajectory_reasonableness"),
        CallResult({"reasoning": "ok", "criteria": CRITERIA, "score": 5}, "{}", "k"),
    )
    assert (j.error, j.score, j.verdict) == (None, 5.0, "pass")
