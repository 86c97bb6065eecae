"""One verdict per item (mean over orders and samples) and where ordinal scales are cut."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from trajudge.calibration import (
    Threshold,
    analyze,
    item_verdicts,
    judge_threshold,
    label_threshold,
)
from trajudge.core import InputError

BOOT = {"n_boot": 100, "seed": 0}

# two orders per item; the verdict is the mean of the two scores against the threshold 4
PAIRS = {
    "x": (5, 3),  # mean 4.0: a pass (each call alone: one pass, one fail)
    "y": (3, 4),  # mean 3.5: a fail
    "z": (4, 4),  # 4.0: a pass
    "w": (1, 5),  # 3.0: a fail
    "v": (2, 2),  # 2.0: a fail
    "u": (5, 4),  # 4.5: a pass
}
PASSES = {"x", "z", "u"}


def _pairs() -> pd.DataFrame:
    rows = []
    for item, (ab, ba) in PAIRS.items():
        rows += [
            {"item": item, "judge": "j", "order": "ab", "sample": 0, "score": ab},
            {"item": item, "judge": "j", "order": "ba", "sample": 0, "score": ba},
        ]
    return pd.DataFrame(rows)


def test_ordinal_verdict_is_the_mean_over_orders_against_the_threshold() -> None:
    verdicts = item_verdicts(_pairs(), threshold=4)
    assert {i for i, v in verdicts.items() if v == 1.0} == PASSES


def test_mean_is_balanced_over_orders_then_samples() -> None:
    # ab: 5 and 4 (mean 4.5); ba: 3 (its second sample errored) -> (4.5 + 3) / 2 = 3.75
    rows = pd.DataFrame(
        {
            "item": ["x"] * 4,
            "order": ["ab", "ab", "ba", "ba"],
            "sample": [0, 1, 0, 1],
            "score": [5.0, 4.0, 3.0, None],
            "error": [None, None, None, "timeout"],
        }
    )
    assert item_verdicts(rows, threshold=3.75).tolist() == [1.0]
    assert item_verdicts(rows, threshold=3.76).tolist() == [0.0]
    # pass/fail verdicts: a pass when more than half pass; pass in one order, fail in the
    # other is a tie, a fail
    binary = pd.DataFrame({"item": ["a", "a", "b", "b"], "order": ["ab", "ba"] * 2,
                           "verdict": ["pass", "fail", "pass", "pass"], "score": None})  # fmt: skip
    assert item_verdicts(binary).tolist() == [0.0, 1.0]


def test_a_pair_scored_5_and_3_counts_as_a_pass_in_every_figure() -> None:
    labels = pd.DataFrame(
        {"item": list(PAIRS), "annotator": "h", "label": [5 if i in PASSES else 2 for i in PAIRS]}
    )
    judgments = _pairs().assign(task_id=[f"t{i // 4}" for i in range(2 * len(PAIRS))])
    result = analyze(judgments, labels, rubric_threshold=4, ks=[1], **BOOT)
    report = result.judges["j"]
    # by hand: the per-item verdicts match the labels on all six items
    assert report.kappa.value == 1.0 and report.agreement.value == 1.0
    assert (report.rates.tp, report.rates.tn, report.rates.fp, report.rates.fn) == (3, 3, 0, 0)
    assert report.corrected_rate is not None and report.corrected_rate.raw.value == 0.5
    judge_pass = result.reliability["judge:j"].per_task.set_index("task_id")["c"]
    # tasks t0 = x, y; t1 = z, w; t2 = v, u: one pass each
    assert judge_pass.to_dict() == {"t0": 1, "t1": 1, "t2": 1}
    # x alone: every call against the cut would make it 1 pass of 2 calls, a tie, a fail
    assert report.confusion == [[3, 0], [0, 3]]


def test_label_cut_comes_from_the_rubric_or_the_threshold_only() -> None:
    labels = [1.0, 2.0, 4.0, 5.0]
    assert label_threshold(labels, rubric_threshold=4) == Threshold(4.0, "rubric")
    assert label_threshold(labels, threshold=3, rubric_threshold=4) == Threshold(3.0, "given")
    assert label_threshold([0.0, 1.0, 1.0]) == Threshold(None, "binary")
    with pytest.raises(InputError, match="need a pass threshold"):
        label_threshold(labels)


def test_judge_cut_precedence_and_refusal() -> None:
    rows = _pairs()
    assert judge_threshold("j", rows, threshold=3, rubric_threshold=4) == Threshold(3, "given")
    assert judge_threshold("j", rows, rubric_threshold=4) == Threshold(4, "rubric")
    # dev items: the cut of the per-item mean with the best kappa (means 4, 3.5, 4, 3, 2,
    # 4.5; truth = PASSES: a cut at 4 separates them exactly)
    truth = pd.Series({i: float(i in PASSES) for i in PAIRS})
    assert judge_threshold("j", rows, rubric_threshold=3, dev_truth=truth) == Threshold(4, "dev")
    with pytest.raises(InputError, match="judge 'j' gives ordinal scores"):
        judge_threshold("j", rows)
    binary = rows.assign(score=[1.0, 0.0] * len(PAIRS))
    assert judge_threshold("j", binary) == Threshold(None, "binary")


def _ordinal_world() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Judge A scores 1..5 (one call per item), judge B gives only pass/fail verdicts."""
    items = [f"i{n}" for n in range(12)]
    human = [1, 2, 3, 3, 4, 5, 5, 4, 2, 3, 4, 5]
    a_scores = [1, 3, 3, 4, 4, 5, 4, 3, 2, 2, 5, 5]
    a = pd.DataFrame({"item": items, "judge": "A", "order": "ab", "sample": 0, "score": a_scores})
    b = pd.DataFrame(
        {"item": items, "judge": "B", "order": "ab", "sample": 0, "verdict": [1, 0] * 6}
    )
    labels = pd.DataFrame({"item": items, "annotator": "h", "label": human})
    return a, b, labels


def test_adding_a_verdict_only_judge_leaves_other_judges_alone() -> None:
    a, b, labels = _ordinal_world()
    alone = analyze(a, labels, rubric_threshold=4, ks=[1], **BOOT).judges["A"]
    both = analyze(pd.concat([a, b]), labels, rubric_threshold=4, ks=[1], **BOOT).judges["A"]
    # by hand: labels and A's scores cut at the rubric's 4
    want = cohen_kappa_score(
        [int(v >= 4) for v in labels["label"]], [int(s >= 4) for s in a["score"]]
    )
    assert alone.kappa.value == pytest.approx(want, abs=1e-12)
    assert both.kappa.value == alone.kappa.value
    assert both.threshold == alone.threshold == Threshold(4.0, "rubric")
    # no rubric, no --threshold: no cut is guessed from the pooled scores (0..5 with B's
    # verdicts would have put it at 3)
    with pytest.raises(InputError, match="need a pass threshold"):
        analyze(pd.concat([a, b]), labels, ks=[1], **BOOT)


def test_all_errors_and_no_labels_are_nan_not_a_crash() -> None:
    a, _, labels = _ordinal_world()
    dead = a.assign(judge="dead", score=math.nan, error="401 Unauthorized")
    tasks = [f"t{i // 4}" for i in range(len(a))]
    both = pd.concat([a, dead]).assign(task_id=tasks * 2)
    result = analyze(both, labels, rubric_threshold=4, ks=[1, 2], **BOOT)
    d = result.judges["dead"]
    assert d.n_errors == len(a) and d.n_rows == 0 and d.n_items == 0
    for est in (d.kappa, d.ac1, d.agreement, d.tpr, d.tnr):
        assert math.isnan(est.value) and math.isnan(est.low)
    assert d.corrected_pass_hat is not None
    assert all(math.isnan(e.value) for e in d.corrected_pass_hat.corrected.values())
    assert math.isnan(d.corrected_pass_hat.raw[1])
    assert math.isnan(result.reliability["judge:dead"].pass_hat[1])
