"""Dawid-Skene by EM: one iteration by hand, known confusion matrices recovered from seeded
simulated raters, and the same answer as crowd-kit's DawidSkene."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from trajudge.calibration.panel import dawid_skene


def test_one_iteration_by_hand() -> None:
    # item 1: a, b say pass, c says fail; item 2: all three say fail
    r = pd.DataFrame(
        {"item": [1, 1, 1, 2, 2, 2], "rater": list("abcabc"), "label": [1, 1, 0, 0, 0, 0]}
    )
    m = dawid_skene(ratings=r, classes=[0, 1], max_iter=1, smoothing=0)
    # start: vote shares, item 1 = (1/3, 2/3), item 2 = (1, 0); prior = (2/3, 1/3)
    # M: rater a, true fail row: item 2 said 0 with weight 1, item 1 said 1 with weight 1/3
    #    -> (3/4, 1/4); true pass row: item 1 said 1 with weight 2/3 -> (0, 1); b the same;
    #    c said 0 on both -> (1, 0) in both rows
    # E, item 1: fail: 2/3 * 1/4 * 1/4 * 1 = 1/24; pass: 1/3 * 1 * 1 * 1 = 1/3
    fail = (1 / 24) / (1 / 24 + 1 / 3)
    assert m.posterior.loc[1].tolist() == pytest.approx([fail, 1 - fail])
    # item 2: pass needs a and b to say 0 when the truth is pass: probability 0
    assert m.posterior.loc[2].tolist() == pytest.approx([1.0, 0.0])
    # the M step after it: prior = mean posterior
    assert m.prior.tolist() == pytest.approx([(fail + 1) / 2, (1 - fail) / 2])
    # a's pass row: item 1 (said 1) with weight 1 - fail, item 2 (said 0) with weight 0
    assert m.confusion["a"][1].tolist() == pytest.approx([0.0, 1.0])
    assert m.confusion["c"][0].tolist() == pytest.approx([1.0, 0.0])


TRUE = {  # row = true class (fail, pass), column = label given
    "careful": np.array([[0.9, 0.1], [0.15, 0.85]]),
    "lenient": np.array([[0.5, 0.5], [0.05, 0.95]]),
    "strict": np.array([[0.95, 0.05], [0.4, 0.6]]),
    "coin": np.array([[0.5, 0.5], [0.5, 0.5]]),
    "annotator": np.array([[0.85, 0.15], [0.1, 0.9]]),
}


def _simulate(seed: int, n: int = 3000, prior: float = 0.35) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = (rng.random(n) < prior).astype(int)
    rows = []
    for rater, conf in TRUE.items():
        rated = rng.random(n) < 0.8  # each rater skips a fifth of the items
        says = (rng.random(n) < conf[truth, 1]).astype(int)
        rows.append(
            pd.DataFrame({"item": np.arange(n)[rated], "rater": rater, "label": says[rated]})
        )
    return pd.concat(rows, ignore_index=True), truth


def test_known_confusion_matrices_are_recovered() -> None:
    ratings, truth = _simulate(7)
    m = dawid_skene(ratings=ratings, classes=[0, 1])
    assert m.converged
    for rater, conf in TRUE.items():
        assert np.abs(m.confusion[rater] - conf).max() < 0.04, rater
    assert m.prior[1] == pytest.approx(truth.mean(), abs=0.02)
    # the weights order the raters by how much their word is worth; the coin has none
    assert abs(m.weight("coin")) < 0.3
    assert m.weight("careful") > m.weight("strict") > m.weight("coin")
    assert m.weight("careful") == pytest.approx(math.log(0.85 * 0.9 / (0.1 * 0.15)), abs=0.6)
    # the posterior beats the majority vote of the same labels
    ds = (m.posterior[1].reindex(range(len(truth))) > 0.5).to_numpy()
    votes = ratings.groupby("item")["label"].mean().reindex(range(len(truth)))
    assert (ds == truth).mean() > ((votes > 0.5).to_numpy() == truth).mean()


def test_predict_reads_new_items_with_the_fitted_matrices() -> None:
    ratings, _ = _simulate(8, n=500)
    m = dawid_skene(ratings=ratings, classes=[0, 1])
    new = pd.DataFrame({"item": ["x", "x"], "rater": ["careful", "strict"], "label": [1, 0]})
    c, s, p = m.confusion["careful"], m.confusion["strict"], m.prior
    pass_ = p[1] * c[1, 1] * s[1, 0]
    fail = p[0] * c[0, 1] * s[0, 0]
    assert m.predict(new).loc["x", 1] == pytest.approx(pass_ / (pass_ + fail))
    with pytest.raises(ValueError, match="raters not in the model: nobody"):
        m.predict(new.assign(rater="nobody"))


@pytest.mark.filterwarnings("ignore:The (inplace|copy) keyword")
def test_the_same_answer_as_crowd_kit() -> None:
    crowdkit = pytest.importorskip("crowdkit.aggregation")
    ratings, _ = _simulate(9, n=400)
    # a fixed number of rounds on both sides (crowd-kit never stops early with tol=-inf)
    ours = dawid_skene(ratings=ratings, classes=[0, 1], max_iter=30, tol=-1.0, smoothing=0)
    theirs = crowdkit.DawidSkene(n_iter=30, tol=-math.inf).fit(
        ratings.rename(columns={"item": "task", "rater": "worker"})
    )
    probas = theirs.probas_.reindex(ours.posterior.index)[[0, 1]]
    assert ours.posterior.to_numpy() == pytest.approx(probas.to_numpy(), abs=1e-6)
    assert ours.prior == pytest.approx(theirs.priors_[[0, 1]].to_numpy(), abs=1e-6)
    for rater in TRUE:
        # crowd-kit's errors_: rows (worker, observed label), columns the true label
        mine = ours.confusion[rater].T
        err = theirs.errors_.loc[rater].loc[[0, 1], [0, 1]].to_numpy()
        assert mine == pytest.approx(err, abs=1e-6)


# nominal verdicts, three categories; row = true category, column = the one given
NOMINAL = ["billing", "refund", "shipping"]
TRUE_K = {
    "careful": np.array([[0.85, 0.1, 0.05], [0.1, 0.8, 0.1], [0.05, 0.1, 0.85]]),
    "confuses": np.array([[0.5, 0.45, 0.05], [0.45, 0.5, 0.05], [0.05, 0.05, 0.9]]),
    "shipping-happy": np.array([[0.4, 0.1, 0.5], [0.1, 0.4, 0.5], [0.02, 0.03, 0.95]]),
    "annotator": np.array([[0.9, 0.05, 0.05], [0.05, 0.9, 0.05], [0.05, 0.05, 0.9]]),
}


def _simulate_k(
    seed: int, n: int, classes: list[str], raters: dict[str, np.ndarray], prior: list[float]
) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.choice(len(classes), n, p=prior)
    rows = []
    for rater, conf in raters.items():
        rated = rng.random(n) < 0.8
        cum = conf[truth].cumsum(axis=1)
        says = (rng.random(n)[:, None] > cum).sum(axis=1)
        labels = np.array(classes, dtype=object)[says]
        rows.append(pd.DataFrame({"item": np.arange(n)[rated], "rater": rater,
                                  "label": labels[rated]}))  # fmt: skip
    return pd.concat(rows, ignore_index=True), truth


@pytest.mark.filterwarnings("ignore:The (inplace|copy) keyword")
def test_nominal_verdicts_the_same_answer_as_crowd_kit() -> None:
    crowdkit = pytest.importorskip("crowdkit.aggregation")
    ratings, _ = _simulate_k(10, 400, NOMINAL, TRUE_K, [0.3, 0.3, 0.4])
    ours = dawid_skene(ratings=ratings, classes=NOMINAL, max_iter=30, tol=-1.0, smoothing=0)
    theirs = crowdkit.DawidSkene(n_iter=30, tol=-math.inf).fit(
        ratings.rename(columns={"item": "task", "rater": "worker"})
    )
    probas = theirs.probas_.reindex(ours.posterior.index)[NOMINAL]
    assert ours.posterior.to_numpy() == pytest.approx(probas.to_numpy(), abs=1e-6)
    assert ours.prior == pytest.approx(theirs.priors_[NOMINAL].to_numpy(), abs=1e-6)
    for rater in TRUE_K:
        mine = ours.confusion[rater].T  # crowd-kit: rows the label given, columns the truth
        err = theirs.errors_.loc[rater].loc[NOMINAL, NOMINAL].to_numpy()
        assert mine == pytest.approx(err, abs=1e-6)
    # crowd-kit's labels (the most probable class) are ours
    assert (ours.posterior.idxmax(axis=1) == theirs.labels_.reindex(ours.posterior.index)).all()


def test_pairwise_verdicts_as_three_classes_are_recovered() -> None:
    # A / B / tie: "tie-shy" never says tie; "side-blind" says tie when one side won
    raters = {
        "sharp": np.array([[0.9, 0.05, 0.05], [0.05, 0.9, 0.05], [0.1, 0.1, 0.8]]),
        "tie-shy": np.array([[0.9, 0.1, 0.0], [0.1, 0.9, 0.0], [0.5, 0.5, 0.0]]),
        "side-blind": np.array([[0.5, 0.0, 0.5], [0.0, 0.5, 0.5], [0.05, 0.05, 0.9]]),
        "annotator": np.array([[0.9, 0.05, 0.05], [0.05, 0.9, 0.05], [0.1, 0.1, 0.8]]),
    }
    # the maximum likelihood is consistent, not exact: with 4,000 items a cell was off by up
    # to 0.07 (seeds 11, 12), with 20,000 by at most 0.026
    ratings, truth = _simulate_k(11, 20000, ["A", "B", "tie"], raters, [0.4, 0.4, 0.2])
    m = dawid_skene(ratings=ratings, classes=["A", "B", "tie"])
    assert m.converged
    for rater, conf in raters.items():
        assert np.abs(m.confusion[rater] - conf).max() < 0.04, rater
    assert m.prior == pytest.approx([0.4, 0.4, 0.2], abs=0.02)
    # accuracy = sum_k prior_k pi_kk, by hand from the fitted matrices
    c = m.confusion["side-blind"]
    assert m.accuracy("side-blind") == pytest.approx(float(m.prior @ np.diag(c)))
    assert m.accuracy("sharp") > m.accuracy("tie-shy") > m.accuracy("side-blind")
    entry = m.to_dict()["raters"]["sharp"]
    assert entry["weight"] is None and entry["accuracy"] == pytest.approx(m.accuracy("sharp"))
    called = m.posterior.idxmax(axis=1).reindex(range(len(truth)))
    right = (called.to_numpy() == np.array(["A", "B", "tie"])[truth]).mean()
    assert right > 0.9
