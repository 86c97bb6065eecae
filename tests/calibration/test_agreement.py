"""Agreement statistics: cross-checked against scikit-learn and krippendorff, and by hand."""

from __future__ import annotations

import itertools
import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from trajudge.calibration import (
    binary_rates,
    cohen_kappa,
    confusion,
    consensus,
    gwet_ac1,
    human_agreement,
    krippendorff_alpha,
    percent_agreement,
)

SEEDS = range(8)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", SEEDS)
def test_kappa_matches_sklearn(weights: str | None, seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    n = int(rng.integers(20, 300))
    y1 = rng.integers(0, k, n)
    y2 = np.where(rng.random(n) < 0.6, y1, rng.integers(0, k, n))
    expected = cohen_kappa_score(y1, y2, weights=weights)
    assert cohen_kappa(y1, y2, weights=weights) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_with_unused_scale_points_matches_sklearn(weights: str | None) -> None:
    rng = np.random.default_rng(42)
    y1, y2 = rng.choice([1, 2, 4], 80), rng.choice([1, 2, 4, 5], 80)
    scale = [1, 2, 3, 4, 5]  # 3 never used: distances still count it
    expected = cohen_kappa_score(y1, y2, weights=weights, labels=scale)
    assert cohen_kappa(y1, y2, weights=weights, labels=scale) == pytest.approx(expected, abs=1e-12)


def test_kappa_artstein_poesio_style_table() -> None:
    # Three categories, 100 items (the shape of Artstein & Poesio 2008, Table 1):
    #            B: stat ireq chck | total
    # A: stat       46    6    0   |  52
    #    ireq        0   32    0   |  32
    #    chck        0    6   10   |  16
    #    total      46   44   10   | 100
    # Ao = (46 + 32 + 10) / 100 = 0.88
    # Ae = .52 * .46 + .32 * .44 + .16 * .10 = .2392 + .1408 + .016 = 0.396
    # kappa = (0.88 - 0.396) / (1 - 0.396) = 0.484 / 0.604 = 0.80132...
    cells = {("stat", "stat"): 46, ("stat", "ireq"): 6, ("ireq", "ireq"): 32,
             ("chck", "ireq"): 6, ("chck", "chck"): 10}  # fmt: skip
    a = [x for (x, _), n in cells.items() for _ in range(n)]
    b = [y for (_, y), n in cells.items() for _ in range(n)]
    assert cohen_kappa(a, b) == pytest.approx(0.484 / 0.604, abs=1e-12)
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_kappa_degenerate_is_nan() -> None:
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))  # one category: pe = 1
    assert math.isnan(cohen_kappa([], []))
    assert math.isnan(gwet_ac1([], []))
    assert math.isnan(percent_agreement([], []))
    assert math.isnan(gwet_ac1([1, 1], [1, 1]))  # q = 1 category


def test_kappa_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="length"):
        cohen_kappa([1, 0], [1])
    with pytest.raises(ValueError, match="missing"):
        cohen_kappa([1, np.nan], [1, 0])
    with pytest.raises(ValueError, match="not among labels"):
        cohen_kappa([1, 2], [1, 1], labels=[1])
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa([1, 0], [1, 0], weights="cubic")  # type: ignore[arg-type]


def test_gwet_ac1_binary_by_hand() -> None:
    # 2x2 table (rater 1 rows, rater 2 columns): pass/pass 40, pass/fail 10, fail/pass 5,
    # fail/fail 45; n = 100, pa = 0.85
    # pi_pass = (50 + 45) / 200 = 0.475, pi_fail = 0.525
    # pe = (0.475 * 0.525 + 0.525 * 0.475) / (2 - 1) = 0.49875
    # AC1 = (0.85 - 0.49875) / (1 - 0.49875) = 0.35125 / 0.50125 = 281 / 401
    y1 = [1] * 50 + [0] * 50
    y2 = [1] * 40 + [0] * 10 + [1] * 5 + [0] * 45
    assert gwet_ac1(y1, y2) == pytest.approx(281 / 401, abs=1e-12)


def test_gwet_ac1_three_categories_by_hand() -> None:
    # y1 = a a b c, y2 = a b b c: pa = 3/4
    # pi_a = (2 + 1) / 8, pi_b = (1 + 2) / 8, pi_c = (1 + 1) / 8
    # pe = (3/8 * 5/8 + 3/8 * 5/8 + 2/8 * 6/8) / (3 - 1) = (15 + 15 + 12) / 64 / 2 = 21/64
    # AC1 = (3/4 - 21/64) / (1 - 21/64) = (27/64) / (43/64) = 27/43
    assert gwet_ac1(list("aabc"), list("abbc")) == pytest.approx(27 / 43, abs=1e-12)


def test_ac1_stays_defined_when_kappa_is_not() -> None:
    # both raters always say pass: kappa undefined; with the binary scale given, AC1:
    # pi = (1, 0), pe = 0, AC1 = pa = 1
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1], labels=[0, 1]))
    assert gwet_ac1([1, 1, 1], [1, 1, 1], labels=[0, 1]) == 1.0


def test_confusion_matches_sklearn_and_rates_by_hand() -> None:
    rng = np.random.default_rng(3)
    y1, y2 = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    assert np.array_equal(confusion(y1, y2), confusion_matrix(y1, y2))
    r = binary_rates([1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 0, 1, 0, 0])
    # tp 3, fn 1, fp 1, tn 2 -> tpr 3/4, tnr 2/3, precision 3/4
    assert (r.tp, r.fn, r.fp, r.tn, r.n) == (3, 1, 1, 2, 7)
    assert (r.tpr, r.tnr, r.precision) == (0.75, pytest.approx(2 / 3), 0.75)
    assert math.isnan(binary_rates([0, 0], [0, 1]).tpr)  # no human pass: undefined
    assert percent_agreement(list("abc"), list("abd")) == pytest.approx(2 / 3)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(4))
def test_alpha_matches_krippendorff_package(level: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, 60).astype(float)
    data = np.array(
        [np.where(rng.random(60) < 0.7, truth, rng.integers(1, 6, 60)) for _ in range(4)]
    )
    data[rng.random(data.shape) < 0.2] = np.nan
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level=level) == pytest.approx(expected, abs=1e-12)  # type: ignore[arg-type]


def test_alpha_by_hand_and_degenerate() -> None:
    # 4 units, 2 raters, each unit (0, 1): every pairable value disagrees, D_o = 1.0
    # n = 8 values, four 0s and four 1s: D_e = 2 * 4 * 4 / (8 * 7) = 4/7
    # alpha = 1 - D_o / D_e = 1 - 7/4 = -0.75
    assert krippendorff_alpha([[0, 0, 0, 0], [1, 1, 1, 1]]) == pytest.approx(-0.75, abs=1e-12)
    assert krippendorff_alpha([["x", "y"], ["x", "y"]]) == pytest.approx(1.0)  # strings: nominal
    assert math.isnan(krippendorff_alpha([[1, 1], [1, 1]]))  # one value only
    assert math.isnan(krippendorff_alpha([[1, np.nan], [np.nan, 2]]))  # nothing pairable


def test_consensus_majority_ties_and_counts() -> None:
    labels = pd.DataFrame(
        {
            "item": ["a"] * 3 + ["b"] * 2 + ["c"] * 3 + ["d"],
            "annotator": [1, 2, 3, 1, 2, 1, 2, 3, 1],
            "label": [1, 1, 0, 1, 0, 2, 0, np.nan, 0],
        }
    )
    c = consensus(labels)
    assert c.loc["a", "label"] == 1 and not c.loc["a", "tie"] and c.loc["a", "n_majority"] == 2
    assert c.loc["b", "tie"] and pd.isna(c.loc["b", "label"])
    assert c.loc["c", "tie"] and c.loc["c", "n_labels"] == 2  # the missing label is not counted
    assert c.loc["d", "label"] == 0 and c.loc["d", "n_labels"] == 1


def test_human_agreement_matches_pairwise_sklearn_and_package() -> None:
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 2, 40)
    rows = []
    for a in ("h1", "h2", "h3"):
        noisy = np.where(rng.random(40) < 0.8, truth, 1 - truth)
        keep = rng.random(40) < 0.85
        rows += [{"item": i, "annotator": a, "label": int(v)} for i, v, k in
                 zip(range(40), noisy, keep, strict=True) if k]  # fmt: skip
    labels = pd.DataFrame(rows)
    h = human_agreement(labels)
    assert h is not None
    wide = labels.pivot(index="item", columns="annotator", values="label")
    kappas = []
    for a, b in itertools.combinations(wide.columns, 2):
        both = wide[[a, b]].dropna()
        kappas.append(cohen_kappa_score(both[a], both[b]))
    assert h.mean_kappa == pytest.approx(np.mean(kappas), abs=1e-12)
    multi = wide[wide.notna().sum(axis=1) >= 2]
    expected = krippendorff.alpha(reliability_data=multi.T.to_numpy(float),
                                  level_of_measurement="nominal")  # fmt: skip
    assert h.alpha == pytest.approx(expected, abs=1e-12)
    assert h.n_items == len(multi) and len(h.pairs) == 3


def test_human_agreement_none_without_overlap() -> None:
    labels = pd.DataFrame({"item": [1, 2], "annotator": ["a", "b"], "label": [1, 0]})
    assert human_agreement(labels) is None


def _alpha_by_coincidences(data: np.ndarray, level: str) -> float:
    """Krippendorff's alpha from the coincidence matrix, as in Krippendorff (2011),
    "Computing Krippendorff's Alpha-Reliability", written here apart from both the package
    and trajudge so that neither checks itself."""
    values = sorted({float(v) for v in data.ravel() if not np.isnan(v)})
    index = {v: i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for unit in data.T:
        present = [index[float(v)] for v in unit if not np.isnan(v)]
        m = len(present)
        if m < 2:
            continue
        for i, c in enumerate(present):
            for j, k in enumerate(present):
                if i != j:
                    o[c, k] += 1 / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()

    def delta2(c: int, k: int) -> float:
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return (values[c] - values[k]) ** 2
        lo, hi = min(c, k), max(c, k)  # ordinal: ranks by the marginals between c and k
        return float(n_c[lo : hi + 1].sum() - (n_c[c] + n_c[k]) / 2) ** 2

    d = np.array([[delta2(c, k) for k in range(len(values))] for c in range(len(values))])
    return float(1 - (n - 1) * (o * d).sum() / (np.outer(n_c, n_c) * d).sum())


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(3))
def test_alpha_matches_a_coincidence_matrix_written_in_the_test(level: str, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    truth = rng.integers(1, 5, 40).astype(float)
    data = np.array(
        [np.where(rng.random(40) < 0.6, truth, rng.integers(1, 5, 40)) for _ in range(3)]
    )
    data[rng.random(data.shape) < 0.25] = np.nan
    expected = _alpha_by_coincidences(data, level)
    assert krippendorff_alpha(data, level=level) == pytest.approx(expected, abs=1e-12)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_rebuilds_krippendorffs_published_example(level: str, published: float) -> None:
    # Krippendorff (2011), section C: 4 observers, 12 units, values 1..5, missing as nan;
    # the paper prints alpha to three decimals.
    nan = np.nan
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    assert _alpha_by_coincidences(data, level) == pytest.approx(published, abs=5e-4)
    assert krippendorff_alpha(data, level=level) == pytest.approx(published, abs=5e-4)  # type: ignore[arg-type]
