"""``--strategy active`` without a browser: the design frozen in the store, the queue it
gives, and the weighted estimates of the summary and the report against a hand computation
from the stored probabilities (SQLite and PostgreSQL)."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from labeling_helpers import DATASET

from trajudge.calibration.active._stored import active_summary, stored_design
from trajudge.config import parse_config
from trajudge.judges import load_rubric
from trajudge.labeling_app import build_queue
from trajudge.pipeline import config_report
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


def hand_pass_hat(design, labels, verdicts, tasks: dict[str, str], k: int) -> float:
    """pass^k by hand: per task, the mean over k-subsets of its considered items of the
    product of the terms f + (y - f) xi / pi; tasks weighted by one over the chance that k
    of their items fall among the considered ones (hypergeometric, by counting)."""
    rows = design.sort_values("position").to_dict("records")
    considered = []
    for r in rows:
        if r["drawn"] and r["trajectory_id"] not in labels:
            break
        considered.append(r)
    total, n_given = len(rows), len(considered)
    num = den = 0.0
    for task in sorted(set(tasks.values())):
        z = []
        for r in considered:
            if tasks[r["trajectory_id"]] == task:
                f, tid = verdicts[r["trajectory_id"]], r["trajectory_id"]
                z.append(f + (labels[tid] - f) / r["probability"] if r["drawn"] else f)
        size = sum(1 for r in rows if tasks[r["trajectory_id"]] == task)
        if len(z) < k:
            continue
        value = np.mean([math.prod(s) for s in combinations(z, k)])
        q = sum(math.comb(size, j) * math.comb(total - size, n_given - j)
                for j in range(k, size + 1)) / math.comb(total, n_given)  # fmt: skip
        num, den = num + value / q, den + 1 / q
    return num / den


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
    tasks = {t.id: t.task_id for t in store.trajectories(DATASET)}
    for k in (1, 2):
        want = hand_pass_hat(design, labels, verdicts, tasks, k)
        mine = summary["judges"]["j"]["pass_k"]["estimates"][str(k)]["value"]
        assert mine == pytest.approx(want)
        in_report = drawn_part[0]["judges"]["j"]["pass_k"]["estimates"][str(k)]["value"]
        assert in_report == pytest.approx(want)
    assert "pass^4" in text and "stop rule: kappa>=0.6@95%" in text
    # another stop rule: the status is of TPR, at 90%
    other = build_report(store, DATASET, n_boot=50, stop_when="tpr>=0.5@90%")
    stop = other.to_dict()["labels_drawn"][0]["judges"]["j"]["stop"]
    assert (stop["statistic"], stop["target"], stop["level"]) == ("tpr", 0.5, 0.9)
    assert "TPR ≥ 0.5" in stop["message"] and "at 90%" in stop["message"]
    # from trajudge.yaml's report.stop_when, as trajudge run and trajudge report -c read it
    cfg = parse_config({"report": {"stop_when": "tnr>=0.5@80%"}}, "/project/trajudge.yaml")
    from_config, _ = config_report(store, DATASET, cfg, n_boot=50)
    stop = from_config.to_dict()["labels_drawn"][0]["judges"]["j"]["stop"]
    assert (stop["statistic"], stop["target"], stop["level"]) == ("tnr", 0.5, 0.8)
    assert "stop rule: tnr>=0.5@80%" in render_markdown(from_config)


def test_without_judgments_there_is_no_design(store: Store) -> None:
    with pytest.raises(ValueError, match="run trajudge judge first"):
        stored_design(store, DATASET, load_rubric(RUBRIC))
    assert active_summary(store, DATASET, load_rubric(RUBRIC)) is None
