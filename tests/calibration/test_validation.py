"""Inputs of the public statistics: read or refused the same way everywhere, and the edge
cases (no rows, one category, every call failed) give NaN or None, never a crash or a guess.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import confusion_matrix

from trajudge.calibration import (
    ac1_from_counts,
    as_binary,
    as_float,
    best_threshold,
    binary_agreement,
    binary_rates,
    bootstrap_kappa,
    bootstrap_ratio,
    central_tendency_probe,
    cluster_bootstrap,
    cohen_kappa,
    corrected_pass_hat_k,
    corrected_pass_rate,
    gwet_ac1,
    human_agreement,
    item_verdicts,
    kappa_from_counts,
    krippendorff_alpha,
    label_budget,
    order_shift_probe,
    pass_at_k,
    pass_hat_k,
    percent_agreement,
    position_probe,
    reliability,
    reliability_intervals,
    rogan_gladen,
    self_preference_probe,
    stability_probe,
    verbosity_probe,
)

TRUTH = ["pass", "pass", "fail", "fail", "pass", "fail", "pass"]
PRED = ["pass", "fail", "fail", "pass", "pass", "fail", "PASS"]


def _01(words: list[str]) -> list[int]:
    return [int(w.lower() == "pass") for w in words]


def test_binary_rates_read_pass_fail_words() -> None:
    # by scikit-learn on the 0/1 coding: the words must give the same counts
    tn, fp, fn, tp = confusion_matrix(_01(TRUTH), _01(PRED), labels=[0, 1]).ravel()
    r = binary_rates(TRUTH, PRED)
    assert (r.tp, r.fp, r.tn, r.fn) == (tp, fp, tn, fn) == (3, 1, 2, 1)
    assert r.tpr == pytest.approx(3 / 4) and r.tnr == pytest.approx(2 / 3)
    assert binary_rates([True, False], ["yes", "no"]).tp == 1


@pytest.mark.parametrize("bad", [2, 0.5, "maybe", "pass?"])
def test_binary_inputs_refuse_what_is_not_pass_or_fail(bad: object) -> None:
    with pytest.raises(ValueError, match="y_pred: cannot read"):
        binary_rates([1, 0], [1, bad])
    with pytest.raises(ValueError, match="verdict: cannot read"):
        corrected_pass_rate([1, bad], [1, 0], n_boot=10)
    with pytest.raises(ValueError, match="cannot read"):
        position_probe([1, bad], ["ab", "ba"], ["x", "x"], n_boot=10)
    with pytest.raises(ValueError, match="success: cannot read"):
        reliability(pd.DataFrame({"task_id": ["a", "a"], "success": [1, bad]}), ks=[1])


def test_missing_values_are_refused_where_they_cannot_mean_anything() -> None:
    with pytest.raises(ValueError, match="missing"):
        binary_rates([1, None], [1, 0])
    with pytest.raises(ValueError, match="differ in length"):
        binary_rates([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match="score must be numeric"):
        order_shift_probe(["high", "low"], ["ab", "ba"], ["x", "x"])
    assert as_binary(["Pass", "FAIL", None], "v", allow_missing=True)[:2].tolist() == [1.0, 0.0]
    assert as_float(["1.5", 2], "s").tolist() == [1.5, 2.0]


def test_text_verdicts_give_the_same_numbers_as_zero_one() -> None:
    v, t = ["pass", "fail", "pass", "pass"], ["pass", "fail", None, "fail"]
    words = corrected_pass_rate(v, t, n_boot=50)
    codes = corrected_pass_rate([1, 0, 1, 1], [1, 0, np.nan, 0], n_boot=50)
    assert words == codes
    frame = pd.DataFrame({"task_id": list("aabb"), "success": ["pass", "fail", "fail", "fail"]})
    assert reliability(frame, ks=[1]).pass_hat[1] == 0.25  # a: 1/2, b: 0/2
    words_p = position_probe(["pass", "fail", "pass", "pass"], ["ab", "ba"] * 2, list("xxyy"))
    codes_p = position_probe([1, 0, 1, 1], ["ab", "ba"] * 2, list("xxyy"))
    assert words_p == codes_p and words_p is not None
    assert words_p.extra["flip_rate"].value == 0.5  # x flips under swap, y does not
    assert best_threshold([1, 2, 3], ["fail", "pass", "pass"]) == 2.0


# --- edge cases: every statistic, the same semantics ------------------------------------

EMPTY: dict[str, object] = {
    "cohen_kappa": lambda: cohen_kappa([], []),
    "percent_agreement": lambda: percent_agreement([], []),
    "gwet_ac1": lambda: gwet_ac1([], []),
    "kappa_from_counts": lambda: float(kappa_from_counts(np.zeros((2, 2)))),
    "ac1_from_counts": lambda: float(ac1_from_counts(np.zeros((2, 2)))),
    "binary_rates.tpr": lambda: binary_rates([], []).tpr,
    "binary_rates.tnr": lambda: binary_rates([], []).tnr,
    "binary_agreement": lambda: binary_agreement([], [], [], n_boot=10)["kappa"].value,
    "binary_agreement.tpr": lambda: binary_agreement([], [], [], n_boot=10)["tpr"].value,
    "bootstrap_kappa": lambda: bootstrap_kappa([], [], [], labels=[0, 1], n_boot=10)[0].value,
    "bootstrap_ratio": lambda: bootstrap_ratio([], [], [], n_boot=10).value,
    "cluster_bootstrap": lambda: cluster_bootstrap(np.zeros((0, 2)), lambda s: s[..., 0])[0].value,
    "pass_at_k": lambda: pass_at_k(0, 0, 1),
    "pass_hat_k": lambda: pass_hat_k(0, 0, 1),
    "reliability": lambda: reliability(pd.DataFrame({"task_id": [], "success": []})).pass_hat[1],
    "reliability_intervals": lambda: reliability_intervals(
        pd.DataFrame({"task_id": [], "success": []}), ks=[1], n_boot=10
    )["pass^k"][1][0],
    "rogan_gladen": lambda: float(rogan_gladen(np.nan, np.nan, np.nan)),
    "corrected_pass_rate.raw": lambda: corrected_pass_rate([], [], n_boot=10).raw.value,
    "corrected_pass_rate": lambda: corrected_pass_rate([], [], n_boot=10).corrected.value,
    "corrected_pass_hat_k": lambda: (
        corrected_pass_hat_k([], [], [], ks=[1], n_boot=10).corrected[1].value
    ),
    "corrected_pass_hat_k.raw": lambda: corrected_pass_hat_k([], [], [], ks=[1], n_boot=10).raw[1],
    "label_budget": lambda: label_budget(0, math.nan, math.nan).n_more,
    "krippendorff_alpha": lambda: krippendorff_alpha([[]]),
    "best_threshold": lambda: best_threshold([], []),
}


@pytest.mark.parametrize("name", list(EMPTY))
def test_no_rows_is_nan(name: str) -> None:
    value = EMPTY[name]()  # type: ignore[operator]
    assert isinstance(value, float) and math.isnan(value), (name, value)


ONE_CATEGORY: dict[str, object] = {
    # both raters say pass everywhere: the expected disagreement is zero
    "cohen_kappa": lambda: cohen_kappa([1, 1, 1], [1, 1, 1]),
    "bootstrap_kappa": lambda: bootstrap_kappa([1, 1], [1, 1], [0, 1], n_boot=10)[0].value,
    "binary_agreement.kappa": lambda: (
        binary_agreement([1, 1], [1, 1], [0, 1], n_boot=10)["kappa"].value
    ),
    # no labelled fail: TNR and therefore the corrected rates are undefined
    "binary_rates.tnr": lambda: binary_rates([1, 1], [1, 0]).tnr,
    "corrected_pass_rate": lambda: (
        corrected_pass_rate([1, 0, 1], [1, 1, np.nan], n_boot=10).corrected.value
    ),
    "corrected_pass_hat_k": lambda: (
        corrected_pass_hat_k([1, 0, 1, 1], [1, 1, np.nan, np.nan], [0, 0, 1, 1], ks=[1], n_boot=10)
        .corrected[1]
        .value
    ),
    # a constant human label has no spread to compare with
    "central_tendency": lambda: (
        central_tendency_probe([1, 2, 3], [3, 3, 3], ["a", "b", "c"], n_boot=10).estimate.value
    ),  # type: ignore[union-attr]
    "krippendorff_alpha": lambda: krippendorff_alpha([[1, 1], [1, 1]]),
    # one observed category: q = 1, AC1 is undefined
    "gwet_ac1": lambda: gwet_ac1([1, 1], [1, 1]),
    # every cut leaves both raters constant
    "best_threshold": lambda: best_threshold([1, 1], [1, 1]),
}


@pytest.mark.parametrize("name", list(ONE_CATEGORY))
def test_one_category_is_nan(name: str) -> None:
    value = ONE_CATEGORY[name]()  # type: ignore[operator]
    assert isinstance(value, float) and math.isnan(value), (name, value)


def test_what_does_not_apply_is_none_not_nan() -> None:
    none = [
        position_probe([], [], []),
        order_shift_probe([], [], []),
        stability_probe([], [], []),
        verbosity_probe([], [], [], []),
        self_preference_probe([], [], [], []),
        central_tendency_probe([], [], []),
        human_agreement(pd.DataFrame({"item": [], "annotator": [], "label": []})),
    ]
    assert none == [None] * len(none)


def test_every_call_failed_gives_no_verdict_and_nan_rates() -> None:
    rows = pd.DataFrame(
        {"item": ["x", "y"], "order": "ab", "score": [None, None], "error": ["401", "401"]}
    )
    assert item_verdicts(rows, threshold=4).empty and item_verdicts(rows).empty
    r = corrected_pass_rate([np.nan, np.nan], [1, 0], gated=[True, True], n_boot=10)
    assert r.raw.value == 0.0 and r.corrected.value == 0.0  # every trajectory gated: certain
    assert math.isnan(r.tpr) and (r.n_gated, r.n_labeled) == (2, 0)
