"""The learning phase of ``--strategy active`` in the store (SQLite and PostgreSQL): the first
draws are uniform with their probability stored, the rest is drawn with probabilities fitted on
their labels once those are in, and the weighted estimates over both phases equal a hand
computation from the stored probabilities; labels the design did not draw are left out and
counted."""

from __future__ import annotations

import pytest
from labeling_helpers import DATASET, make_trajectories
from test_app_active import RUBRIC, _seed_judgments, hand_estimates

from trajudge.calibration.active import fitted_uncertainty, sampling_probabilities
from trajudge.calibration.active._stored import (
    active_summary,
    item_signals,
    learning_open,
    stored_design,
)
from trajudge.judges import load_rubric
from trajudge.report import build_report, render_markdown
from trajudge.store import Store

N, BUDGET, LEARN = 40, 20, 8


def _human(tid: str, k: int) -> float:
    """The people's label: right where the judges agree, a pass where they are split (the
    judges' verdict there is a fail: they are wrong exactly where they are unsure)."""
    return [5.0, 1.0, 5.0, 5.0][k % 4]


def test_uniform_learning_then_fitted_draws_and_the_estimates_over_both(db_url: str) -> None:
    store = Store(db_url)
    store.import_dataset(DATASET, make_trajectories(N))
    verdicts = _seed_judgments(store)
    kind = {t: k for k, (t, _) in enumerate(store.trajectory_keys(DATASET))}
    rubric = load_rubric(RUBRIC)

    first = stored_design(store, DATASET, rubric, budget=BUDGET, learn=LEARN)
    # phase 1 alone: every probability the uniform budget / N, and it ends with the 8th draw
    assert set(first["phase"]) == {1}
    assert first["probability"].tolist() == [BUDGET / N] * len(first)
    assert first["position"].tolist() == list(range(len(first)))
    assert int(first["drawn"].sum()) == LEARN and bool(first["drawn"].iloc[-1])
    assert store.draw_phases(DATASET, RUBRIC) == (1,)
    learning = first.loc[first["drawn"].astype(bool), "trajectory_id"].tolist()
    assert learning_open(store, DATASET, rubric) == learning

    labels: dict[str, float] = {}
    for tid in learning[:-1]:
        store.save_label(DATASET, tid, RUBRIC, "ann", _human(tid, kind[tid]))
        labels[tid] = float(_human(tid, kind[tid]) >= 4)
    # one learning label missing: nothing more is drawn
    assert stored_design(store, DATASET, rubric).equals(first)
    last = learning[-1]
    store.save_label(DATASET, last, RUBRIC, "ann", _human(last, kind[last]))
    labels[last] = float(_human(last, kind[last]) >= 4)

    design = stored_design(store, DATASET, rubric)
    assert store.draw_phases(DATASET, RUBRIC) == (1, 2)
    assert len(design) == N and design["position"].tolist() == list(range(N))
    two = design[design["phase"] == 2]
    # phase 2 keeps phase 1's rate: budget * (items left) / N expected labels, every one at
    # least the floor (30% of the uniform rate)
    rest = N - len(first)
    assert two["probability"].sum() == pytest.approx(BUDGET * rest / N)
    assert two["probability"].min() >= 0.3 * BUDGET / N - 1e-12
    # the learning labels showed the judges wrong on split items only: those come out likelier
    # than the sure fails (the sure passes share an uncertainty level with the split items:
    # their score sits one point from the cut, so the fit cannot tell them apart)
    by_kind = two.assign(k=two["trajectory_id"].map(kind) % 4).groupby("k")["probability"]
    assert by_kind.min()[[2, 3]].min() > by_kind.max()[1]
    # and the same from the library's steps by hand: the fit on phase 1's labels, weighted
    signals = item_signals(store.judgments_frame(DATASET), rubric)
    learnt = [t for t in learning if t in labels]
    wrong = [float(labels[t] != verdicts[t]) for t in learnt]
    fitted = fitted_uncertainty(
        uncertainty=signals.loc[two["trajectory_id"], "uncertainty"].to_numpy(float),
        labelled_uncertainty=signals.loc[learnt, "uncertainty"].to_numpy(float),
        labelled_error=wrong, labelled_probability=[BUDGET / N] * len(learnt),
    )  # fmt: skip
    expected = sampling_probabilities(uncertainty=fitted, budget=BUDGET * rest / N, floor_share=0.3)
    assert two["probability"].to_numpy() == pytest.approx(expected)
    # frozen: asking again changes nothing
    assert stored_design(store, DATASET, rubric, budget=5, learn=1).equals(design)

    for tid in design.loc[(design["phase"] == 2) & design["drawn"].astype(bool), "trajectory_id"]:
        store.save_label(DATASET, tid, RUBRIC, "ann", _human(tid, kind[tid]))
        labels[tid] = float(_human(tid, kind[tid]) >= 4)
    # a label given under another queue on an item the design did not draw
    not_drawn = design.loc[~design["drawn"].astype(bool), "trajectory_id"].iloc[0]
    store.save_label(DATASET, not_drawn, RUBRIC, "other", 1.0)

    hand = hand_estimates(design, labels, verdicts)
    assert hand["n"] == N and hand["labels"] == len(labels)
    summary = active_summary(store, DATASET, rubric)
    assert summary is not None
    assert summary["n_considered"] == N and summary["n_labeled"] == len(labels)
    assert summary["excluded"] == {"not_drawn": 1, "outside_design": 0, "beyond": 0}
    assert summary["learning"] == {
        "labels": LEARN, "items": len(first), "probability": BUDGET / N, "fitted": True
    }  # fmt: skip
    est = summary["judges"]["j"]["estimates"]
    assert est["pass_rate"]["value"] == pytest.approx(hand["pass_rate"])
    assert est["tpr"]["value"] == pytest.approx(hand["tpr"], nan_ok=True)
    assert est["kappa"]["value"] == pytest.approx(hand["kappa"], nan_ok=True)
    text = render_markdown(build_report(store, DATASET, n_boot=50))
    assert "learning phase: the first 8 draws uniform (probability 0.500" in text
    assert "1 labelled items the design did not draw" in text
    store.close()


def test_a_learning_phase_larger_than_the_draws_is_a_uniform_design(db_url: str) -> None:
    store = Store(db_url)
    store.import_dataset(DATASET, make_trajectories(12))
    _seed_judgments(store)
    design = stored_design(store, DATASET, load_rubric(RUBRIC), budget=3, learn=10)
    # 12 items at 3 / 12 hold fewer than 10 draws: every item uniform, one part, nothing to fit
    assert len(design) == 12 and design["probability"].tolist() == [0.25] * 12
    assert int(design["drawn"].sum()) < 10 and store.draw_phases(DATASET, RUBRIC) == (0,)
    store.close()
