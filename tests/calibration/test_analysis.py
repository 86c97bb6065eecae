"""``analyze``: every number of a judge report checked against an independent computation."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from trajudge.calibration import (
    SyntheticJudge,
    Threshold,
    analyze,
    calibrate_files,
    gwet_ac1,
    synthetic_judgments,
    synthetic_labels,
    synthetic_world,
)
from trajudge.core import InputError

BOOT = {"n_boot": 200, "seed": 0}
PASS = 4  # the synthetic 1..5 scale's pass threshold (its rubric's, trajudge.calibration)


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    world = synthetic_world(120, seed=5)
    judges = [SyntheticJudge("a", noise=0.6), SyntheticJudge("b", noise=0.4, leniency=0.5)]
    return synthetic_judgments(world, judges, seed=6), synthetic_labels(world, error=0.2, seed=7)


def _human(labels: pd.DataFrame, cut: float) -> pd.Series:
    """Binary majority per item by hand; items whose two annotators split are dropped."""
    votes = (labels["label"] >= cut).groupby(labels["item"]).agg(["sum", "size"])
    decided = votes[votes["sum"] * 2 != votes["size"]]
    return (decided["sum"] * 2 > decided["size"]).astype(int)


def _verdicts(rows: pd.DataFrame, cut: float) -> pd.Series:
    """The judge's verdict per item by hand: the mean score of each order (over its samples),
    averaged over the two orders, against the cut."""
    by_order = {
        key: sum(s) / len(s)
        for key, s in rows.groupby(["item", "order"])["score"].apply(list).items()
    }
    means: dict[str, list[float]] = {}
    for (item, _), m in by_order.items():
        means.setdefault(item, []).append(m)
    return pd.Series({i: int(sum(m) / len(m) >= cut) for i, m in means.items()})


def test_judge_numbers_match_independent_computation(tables) -> None:
    judgments, labels = tables
    result = analyze(judgments, labels, ks=[1, 2], rubric_threshold=PASS, **BOOT)
    human = _human(labels, PASS)
    assert result.label_threshold is not None and result.label_threshold.source == "rubric"
    for name, report in result.judges.items():
        assert report.threshold.value == PASS and report.threshold.source == "rubric"
        verdict = _verdicts(judgments[judgments["judge"] == name], PASS)
        items = sorted(set(human.index) & set(verdict.index))
        h, j = human.loc[items], verdict.loc[items]
        assert report.kappa.value == pytest.approx(cohen_kappa_score(h, j), abs=1e-12)
        assert report.ac1.value == pytest.approx(gwet_ac1(h, j), abs=1e-12)
        assert report.agreement.value == pytest.approx(float((h == j).mean()))
        tn, fp, fn, tp = confusion_matrix(h, j, labels=[0, 1]).ravel()
        assert report.confusion == [[tn, fp], [fn, tp]]
        assert report.tpr.value == pytest.approx(tp / (tp + fn))
        assert report.tnr.value == pytest.approx(tn / (tn + fp))
        assert report.rates.tpr == report.tpr.value and report.rates.tnr == report.tnr.value
        assert report.n_items == len(items) and report.n_errors == 0
        assert report.cost_per_1k == pytest.approx(2.0) and report.median_latency_s == 1.5
        all_rows = judgments[judgments["judge"] == name]
        flips = (all_rows["score"] >= PASS).groupby(all_rows["item"]).nunique()
        assert set(report.unstable_items) == set(flips.index[flips > 1])
        for est in (report.kappa, report.ac1, report.agreement, report.tpr, report.tnr):
            assert est.low <= est.value <= est.high
            assert est.n == judgments["task_id"].nunique()  # intervals resample tasks
        assert report.budget.n == len(items)
    assert result.n_labeled_items == len(human)
    assert len(result.tied_items) == labels["item"].nunique() - len(human)


def test_weighted_kappa_uses_the_ordinal_consensus(tables) -> None:
    judgments, labels = tables
    result = analyze(judgments, labels, ks=[1], rubric_threshold=PASS, **BOOT)
    wide = labels.pivot(index="item", columns="annotator", values="label")
    agreed = wide[wide["h0"] == wide["h1"]]["h0"]  # 2 annotators: a consensus iff they agree
    human_bin = _human(labels, PASS)
    for name, report in result.judges.items():
        rows = judgments[(judgments["judge"] == name) & judgments["item"].isin(agreed.index)]
        rows = rows[rows["item"].isin(human_bin.index)]
        # every call counts, each item weighing one: its 6 calls (2 orders x 3 samples)
        weight = 1.0 / rows.groupby("item")["item"].transform("size")
        assert set(weight) == {1 / 6}
        assert report.kappa_quadratic is not None and report.kappa_linear is not None
        for kind, est in (("quadratic", report.kappa_quadratic), ("linear", report.kappa_linear)):
            expected = cohen_kappa_score(
                rows["item"].map(agreed),
                rows["score"],
                weights=kind,
                labels=[1, 2, 3, 4, 5],
                sample_weight=weight,
            )
            assert est.value == pytest.approx(expected, abs=1e-12)


def test_errors_are_counted_and_left_out(tables) -> None:
    judgments, labels = tables
    extra = judgments[judgments["judge"] == "a"].head(7).copy()
    extra["sample"] = 99
    extra["score"] = np.nan
    extra["error"] = "timeout after 3 retries"
    with_errors = pd.concat([judgments, extra], ignore_index=True)
    clean = analyze(judgments, labels, ks=[1], rubric_threshold=PASS, **BOOT).judges["a"]
    noisy = analyze(with_errors, labels, ks=[1], rubric_threshold=PASS, **BOOT).judges["a"]
    assert noisy.n_errors == 7 and clean.n_errors == 0
    assert noisy.n_rows == clean.n_rows
    assert noisy.kappa == clean.kappa
    # an errored call still cost money: 7 more calls at 0.002 in the mean
    assert noisy.cost_per_1k == pytest.approx(2.0)


def test_given_threshold_and_dev_search(tables) -> None:
    judgments, labels = tables
    given = analyze(judgments, labels, threshold=3, rubric_threshold=PASS, ks=[1], **BOOT)
    assert given.judges["b"].threshold == Threshold(3, "given")
    assert given.label_threshold == Threshold(3, "given")  # --threshold cuts labels too
    dev = sorted(judgments["item"].unique())[:40]
    result = analyze(judgments, labels, dev_items=dev, rubric_threshold=PASS, ks=[1], **BOOT)
    report = result.judges["b"]
    assert report.threshold.source == "dev" and result.n_dev_items == 40
    assert result.label_threshold == Threshold(PASS, "rubric")  # labels keep the rubric's cut
    # the search picks the cut of the per-item mean score with the best kappa on the dev
    # items, by brute force here
    human = _human(labels, PASS)
    rows = judgments[(judgments["judge"] == "b") & judgments["item"].isin(dev)]
    means = rows.groupby(["item", "order"])["score"].mean().groupby(level="item").mean()
    means = means[means.index.isin(human.index)]
    kappas = {
        t: cohen_kappa_score(means.index.map(human), (means >= t).astype(int))
        for t in sorted(means.unique())
    }
    assert report.threshold.value == max(kappas, key=lambda t: kappas[t])
    assert report.n_items == len(set(human.index) - set(dev))  # dev items left out


def test_tau_bench_outcome_source_reproduces_published_pass_hat_k(tau_bench_file: Path) -> None:
    records = json.loads(tau_bench_file.read_text())
    items = [f"{r['task_id']}:{r['trial']}" for r in records]
    reward = [int(r["reward"] == 1.0) for r in records]
    judgments = pd.DataFrame(
        {
            "item": items,
            "judge": "oracle",
            "order": "ab",
            "sample": 0,
            "verdict": reward,
            "task_id": [str(r["task_id"]) for r in records],
        }
    )
    labels = pd.DataFrame({"item": items[::3], "annotator": "h", "label": reward[::3]})
    outcomes = pd.DataFrame({"item": items, "outcome": reward})
    result = analyze(judgments, labels, outcomes=outcomes, **BOOT)
    published = {1: 0.420, 2: 0.273, 3: 0.220, 4: 0.200}  # tau-bench README, airline gpt-4o
    for source in ("outcome", "judge:oracle"):
        got = result.reliability[source].pass_hat
        assert {k: round(v, 3) for k, v in got.items()} == published
    assert result.reliability["human"].n_unknown == len(items) - len(items[::3])
    corrected = result.judges["oracle"].corrected_pass_hat
    assert corrected is not None  # a perfect judge: nothing to correct
    assert corrected.corrected[4].value == pytest.approx(0.2, abs=1e-9)
    assert result.judges["oracle"].kappa.value == 1.0


def test_to_dict_is_strict_json(tables) -> None:
    judgments, labels = tables
    d = analyze(judgments, labels, ks=[1, 2], rubric_threshold=PASS, **BOOT).to_dict()
    text = json.dumps(d, allow_nan=False)
    assert json.loads(text)["judges"]["a"]["probes"]["position"]["flagged"] in (True, False)
    assert set(d["reliability"]) == {"judge:a", "judge:b", "human"}
    no_tasks = analyze(
        judgments.drop(columns="task_id"), labels, ks=[1], rubric_threshold=PASS, **BOOT
    ).to_dict()
    json.dumps(no_tasks, allow_nan=False)
    assert no_tasks["reliability"] == {}  # no task ids: pass^k does not apply
    assert no_tasks["judges"]["a"]["corrected_pass_hat"] is None


def test_verdict_only_tables_and_degenerate_kappa() -> None:
    judgments = pd.DataFrame(
        {"item": ["x", "y"], "judge": "j", "order": "ab", "sample": 0, "verdict": ["pass", "pass"]}
    )
    labels = pd.DataFrame({"item": ["x", "y"], "annotator": "h", "label": ["pass", "pass"]})
    report = analyze(judgments, labels, **BOOT).judges["j"]
    assert report.threshold.source == "binary"
    assert math.isnan(report.kappa.value) and report.agreement.value == 1.0  # one class
    assert report.probes["position"] is None and report.kappa_linear is None


def test_a_judge_with_one_verdict_has_no_label_budget() -> None:
    """The demo's shape: 20 items in 5 tasks, half passing by the labels, a judge that fails
    all. Its κ is 0 whatever the labels and its interval ([-1, 1] here: a bound over judges
    that could have shown a pass, not a bootstrap spread) is no basis for n (h / 0.05)^2: the
    budget is n/a, and a judge that errs both ways on the same items gets a number."""
    items = [f"t{t}-{i}" for t in range(5) for i in range(4)]
    tasks = [i.split("-")[0] for i in items]
    labels = pd.DataFrame(
        {"item": items, "annotator": "h", "label": ["pass", "fail"] * 10, "task_id": tasks}
    )
    verdicts = {"flat": ["fail"] * 20, "mixed": ["pass", "fail", "fail", "pass"] * 5}
    judgments = pd.concat(
        pd.DataFrame(
            {
                "item": items,
                "judge": name,
                "order": "ab",
                "sample": 0,
                "verdict": v,
                "task_id": tasks,
            }
        )
        for name, v in verdicts.items()
    )
    result = analyze(judgments, labels, **BOOT)
    flat, mixed = result.judges["flat"], result.judges["mixed"]
    assert flat.kappa.value == 0.0 and flat.kappa.high - flat.kappa.low > 0
    assert math.isnan(flat.budget.n_more) and math.isnan(flat.budget.n_total)
    assert flat.budget.half_width == (flat.kappa.high - flat.kappa.low) / 2  # still shown
    half = (mixed.kappa.high - mixed.kappa.low) / 2
    assert half > 0
    assert mixed.budget.n_total == max(20, math.ceil(round(20 * (half / 0.05) ** 2, 9)))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda df: df.drop(columns="order"), "order"),
        (lambda df: df.assign(order="xy"), "order"),
        (lambda df: df.assign(sample=-1), "sample"),
        (lambda df: df.assign(verdict="maybe"), "verdict"),
        (lambda df: df.assign(verdict=None), "score"),
        (lambda df: pd.concat([df, df]), "item, judge, order, sample"),
        (lambda df: df.assign(task_id=[None, "t"]), "task_id"),
    ],
)
def test_bad_judgments_raise_input_error(change, field: str) -> None:
    good = pd.DataFrame(
        {"item": ["x", "y"], "judge": "j", "order": "ab", "sample": 0, "verdict": [1, 0]}
    )
    labels = pd.DataFrame({"item": ["x", "y"], "annotator": "h", "label": [1, 0]})
    with pytest.raises(InputError) as info:
        analyze(change(good), labels, **BOOT)
    assert info.value.field == field


def test_calibrate_files_equals_analyze(tables, tmp_path: Path) -> None:
    judgments, labels = tables
    judgments.to_parquet(tmp_path / "j.parquet")
    labels.to_csv(tmp_path / "l.csv", index=False)
    from_files = calibrate_files(
        tmp_path / "j.parquet", tmp_path / "l.csv", ks=[1], rubric_threshold=PASS, **BOOT
    )
    direct = analyze(judgments, labels, ks=[1], rubric_threshold=PASS, **BOOT)
    assert from_files.to_dict() == direct.to_dict()


def test_a_judge_whose_calls_all_failed_is_reported_not_dropped() -> None:
    judgments = pd.DataFrame(
        {
            "item": ["x", "y", "x", "y"],
            "judge": ["ok", "ok", "broken", "broken"],
            "order": "ab",
            "sample": 0,
            "verdict": [1, 0, None, None],
            "error": [None, None, "rate limited", "rate limited"],
        }
    )
    labels = pd.DataFrame({"item": ["x", "y"], "annotator": "h", "label": [1, 0]})
    result = analyze(judgments, labels, **BOOT)
    broken = result.judges["broken"]
    assert (broken.n_errors, broken.n_rows, broken.n_items) == (2, 0, 0)
    assert math.isnan(broken.kappa.value) and math.isnan(broken.agreement.value)
    assert broken.corrected_rate is not None and math.isnan(broken.corrected_rate.raw.value)
    assert broken.probes["position"] is None
    assert result.judges["ok"].kappa.value == 1.0
    json.dumps(result.to_dict(), allow_nan=False)
