"""``--strategy active`` without a browser: the design frozen in the store, the queue it
gives, and the weighted estimates of the summary and the report against a hand computation
from the stored probabilities (SQLite and PostgreSQL)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from labeling_helpers import DATASET

from trajudge.calibration.active._stored import active_summary, stored_design
from trajudge.judges import load_rubric
from trajudge.labeling_app import build_queue
from trajudge.report import build_report, render_markdown
from trajudge.store import Store

RUBRIC = "trajectory_reasonableness"  # ordinal 1-5, pass at >= 4
JUDGE = {"judge": "j", "rubric_id": RUBRIC, "rubric_version": "v", "model": "m",
         "mode": "pointwise", "order": "ab"}  # fmt: skip


def _seed_judgments(store: Store) -> dict[str, float]:
    """Three samples per trajectory: sure passes, sure fails and split items. The verdict
    (mean score >= 4) of each."""
    verdicts = {}
    for k, (tid, _) in enumerate(store.trajectory_keys(DATASET)):
        scores = [(5, 5, 5), (1, 1, 2), (2, 4, 5), (3, 4, 4)][k % 4]
        for sample, score in enumerate(scores):
            store.add_judgment(
                DATASET, {**JUDGE, "trajectory_id": tid, "sample": sample, "score": float(score)}
            )
        verdicts[tid] = float(np.mean(scores) >= 4)
    return verdicts


def hand_estimates(design, labels: dict[str, float], verdicts: dict[str, float]) -> dict:
    """The estimates by hand from the stored design: the considered items end before the
    first drawn item without a label; each term f + (y - f) xi / pi."""
    rows = design.sort_values("position").to_dict("records")
    considered = []
    for r in rows:
        if r["drawn"] and r["trajectory_id"] not in labels:
            break
        considered.append(r)
    f = np.array([verdicts[r["trajectory_id"]] for r in considered])
    xi = np.array([float(r["drawn"]) for r in considered])
    pi = np.array([r["probability"] for r in considered])
    y = np.array([labels.get(r["trajectory_id"], 0.0) for r in considered])
    n = len(considered)
    m_y = float(np.mean(f + (y - f) * xi / pi))
    m_fy = float(np.mean(f + (f * y - f) * xi / pi))
    big_f = float(f.mean())
    po = 1 - big_f - m_y + 2 * m_fy
    pe = big_f * m_y + (1 - big_f) * (1 - m_y)
    # the pass rate's lambda: the PPI++ choice, -cov(a, b) / var(b), a = y xi/pi, b = f(1 - xi/pi)
    a, b = y * xi / pi, f * (1 - xi / pi)
    vb = b.var()
    lam = float(np.clip(-np.cov(a, b, bias=True)[0, 1] / vb, 0, 1)) if vb > 0 else 1.0
    return {
        "n": n,
        "labels": int(xi.sum()),
        "pass_rate": float(np.mean(a + lam * b)),
        "tpr": m_fy / m_y,
        "kappa": (po - pe) / (1 - pe),
    }


def test_design_queue_summary_and_report_agree_with_a_hand_computation(store: Store) -> None:
    verdicts = _seed_judgments(store)
    rubric = load_rubric(RUBRIC)
    design = stored_design(store, DATASET, rubric, budget=6, learn=0)  # no learning phase
    assert len(design) == 12 and design["probability"].sum() == pytest.approx(6)
    # the split items are the uncertain ones: drawn with a higher probability
    by_id = design.set_index("trajectory_id")["probability"]
    sure, split = by_id[["xss", "t004", "t001"]], by_id[["t002", "t006"]]
    assert split.min() > sure.max()
    again = stored_design(store, DATASET, rubric, budget=11, learn=3)  # frozen: ignored
    assert again.equals(design)
    drawn = design.loc[design["drawn"].astype(bool), "trajectory_id"].tolist()
    queue = build_queue(store.trajectory_keys(DATASET), "ann", strategy="active",
                        overlap=1.0, pool=["ann"], drawn=drawn)  # fmt: skip
    assert queue.ids == drawn and len(drawn) >= 3
    # the people label the drawn items in the queue's order, all but the last one
    labels = {}
    for k, tid in enumerate(drawn[:-1]):
        value = 5.0 if (k + verdicts[tid]) % 3 else 1.0  # the judge is wrong now and then
        store.save_label(DATASET, tid, RUBRIC, "ann", value)
        labels[tid] = float(value >= 4)
    hand = hand_estimates(design, labels, verdicts)
    summary = active_summary(store, DATASET, rubric)
    assert summary is not None
    assert summary["n_considered"] == hand["n"] and summary["n_labeled"] == hand["labels"]
    est = summary["judges"]["j"]["estimates"]
    assert est["pass_rate"]["value"] == pytest.approx(hand["pass_rate"])
    assert est["tpr"]["value"] == pytest.approx(hand["tpr"], nan_ok=True)
    assert est["kappa"]["value"] == pytest.approx(hand["kappa"], nan_ok=True)
    report = build_report(store, DATASET, n_boot=50)
    drawn_part = report.to_dict()["labels_drawn"]
    assert [d["rubric_id"] for d in drawn_part] == [RUBRIC]
    got = drawn_part[0]["judges"]["j"]["estimates"]["pass_rate"]["value"]
    assert got == pytest.approx(hand["pass_rate"])
    text = render_markdown(report)
    assert "Labels" in text and "weighted by 1 / probability" in text
    assert not math.isnan(got)


def test_without_judgments_there_is_no_design(store: Store) -> None:
    with pytest.raises(ValueError, match="run trajudge judge first"):
        stored_design(store, DATASET, load_rubric(RUBRIC))
    assert active_summary(store, DATASET, load_rubric(RUBRIC)) is None
