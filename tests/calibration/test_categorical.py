"""Categorical judges (pairwise A/B/tie, nominal categories) against gold labels.

Every figure is checked against an independent computation: scikit-learn's kappa and
confusion matrix, the ``krippendorff`` package, or a count worked out by hand here.
"""

from __future__ import annotations

import itertools
import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from trajudge.calibration import (
    analyze_categorical,
    categorical_items,
    first_position_rate,
    infer_kind,
    order_accuracy,
    positional_consistency,
    validate_table,
    win_rates,
)
from trajudge.core import InputError

BOOT = {"n_boot": 200, "seed": 0}
SWAP = {"A": "B", "B": "A", "tie": "tie"}


def _world(n: int = 120, seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A seeded pairwise judge (two orders, one sample) and two annotators, as plain tables;
    the judge's ``ba`` verdicts name the side AS SHOWN (so validation must swap them)."""
    rng = np.random.default_rng(seed)
    cats = np.array(["A", "B", "tie"])
    gold = rng.choice(cats, n, p=[0.45, 0.4, 0.15])
    rows, labels = [], []
    for i, g in enumerate(gold):
        item = f"p{i}"
        ab = g if rng.random() < 0.7 else rng.choice(cats)
        ba = g if rng.random() < 0.6 else rng.choice(cats)
        rows.append({"item": item, "judge": "j", "order": "ab", "sample": 0, "verdict": ab})
        rows.append({"item": item, "judge": "j", "order": "ba", "sample": 0, "verdict": SWAP[ba]})
        labels.append({"item": item, "annotator": "h1", "label": g})
        other = g if rng.random() < 0.8 else rng.choice(cats)
        labels.append({"item": item, "annotator": "h2", "label": other})
    return pd.DataFrame(rows), pd.DataFrame(labels)


def test_categorical_items_keep_agreement_and_turn_flips_into_ties() -> None:
    rows = pd.DataFrame(
        {
            "item": ["x", "x", "y", "y", "z", "w", "w", "w"],
            "order": ["ab", "ba", "ab", "ba", "ba", "ab", "ab", "ba"],
            "verdict": ["A", "A", "A", "B", "B", "B", "tie", "B"],
        }
    )
    out = categorical_items(rows)
    # x: both orders A; y: a flip -> tie; z: one order only; w: ab samples split 1-1, so
    # ab is undecided ("tie") and differs from ba's B: a flip
    assert out["verdict"].to_dict() == {"w": "tie", "x": "A", "y": "tie", "z": "B"}
    assert out["flipped"].to_dict() == {"w": True, "x": False, "y": True, "z": False}
    nominal = categorical_items(rows, kind="nominal")
    assert nominal.loc["y", "verdict"] == "inconsistent"
    asked = categorical_items(rows, inconsistent_as="inconsistent")
    assert asked.loc["y", "verdict"] == "inconsistent"


def test_positional_consistency_and_accuracy_count_missing_as_llmbar_does() -> None:
    # LLMBar evaluate.py: a missing winner is an outcome of its own; two missing agree
    ab = ["A", "B", None, "A", None]
    ba = ["A", "A", None, None, "B"]
    gold = ["A", "A", "A", "A", "B"]
    c = positional_consistency(ab, ba)
    assert (c.correct, c.n) == (2, 5)  # items 0 and 2
    a_ab, a_ba = order_accuracy(ab, gold), order_accuracy(ba, gold)
    assert (a_ab.correct, a_ab.n) == (2, 5)  # items 0, 3; missing never correct
    assert (a_ba.correct, a_ba.n) == (3, 5)  # items 0, 1, 4
    assert math.isnan(order_accuracy([], []).value)


def test_first_position_rate_by_hand() -> None:
    # ab: A picked first twice, tie once; ba (B shown first): B picked first once, A once
    ab = ["A", "A", "tie", None]
    ba = [None, None, "B", "A"]
    est = first_position_rate(ab, ba, [1, 2, 3, 4], **BOOT)
    assert est.value == pytest.approx(3 / 4)  # (2 + 1) firsts of 4 decisive verdicts
    assert est.low <= est.value <= est.high


def test_win_rates_by_hand() -> None:
    verdicts = ["A", "A", "B", "tie", "A"]
    sa = ["x", "x", "x", "y", "z"]
    sb = ["y", "y", "y", "x", "z"]  # the last pair is a system with itself: left out
    out = {w.system: w for w in win_rates(verdicts, sa, sb, [1, 2, 3, 4, 5], **BOOT)}
    assert set(out) == {"x", "y"}
    # x: wins 2 (as A), loss 1, tie 1 -> (2 + 0.5) / 4
    assert (out["x"].wins, out["x"].ties, out["x"].losses) == (2, 1, 1)
    assert out["x"].rate.value == pytest.approx(2.5 / 4)
    assert out["y"].rate.value == pytest.approx(1.5 / 4)


def test_validation_maps_ba_back_and_refuses_an_unsaid_orientation() -> None:
    j, _ = _world(6)
    with pytest.raises(InputError) as err:
        validate_table(j, "judgments", source="j.csv", kind="pairwise")
    assert "j.csv" in str(err.value) and "--ba-mapped" in str(err.value)
    shown = validate_table(j, "judgments", kind="pairwise", ba_mapped=False)
    mapped = validate_table(j, "judgments", kind="pairwise", ba_mapped=True)
    ba = shown["order"] == "ba"
    assert (shown.loc[ba, "verdict"] == mapped.loc[ba, "verdict"].map(SWAP)).all()
    assert (shown.loc[~ba, "verdict"] == j.loc[~ba, "verdict"]).all()
    bad = j.assign(verdict=["A", "maybe", *j["verdict"][2:]])
    with pytest.raises(InputError) as err:
        validate_table(bad, "judgments", source="j.csv", kind="pairwise", ba_mapped=True)
    assert "maybe" in str(err.value) and "verdict" in str(err.value)


def test_a_row_without_verdict_is_an_error_never_a_verdict() -> None:
    j = pd.DataFrame(
        {
            "item": ["x", "x"],
            "judge": "j",
            "order": ["ab", "ba"],
            "sample": 0,
            "verdict": ["A", None],
        }
    )
    out = validate_table(j, "judgments", kind="pairwise", ba_mapped=True)
    assert out["error"].tolist() == [None, "no verdict"]


@pytest.mark.parametrize(
    ("verdicts", "labels", "kind"),
    [
        (["A", "b", None], ["tie"], "pairwise"),
        (["bug", "ok"], ["ok"], "nominal"),
        (["pass", "fail"], [1, 0], "binary"),
        ([1, 3, 5], [4], "ordinal"),
    ],
)
def test_infer_kind(verdicts: list[object], labels: list[object], kind: str) -> None:
    got, why = infer_kind(pd.DataFrame({"verdict": verdicts}), pd.DataFrame({"label": labels}))
    assert got == kind and why


def test_infer_kind_refuses_numbers_mixed_with_words() -> None:
    with pytest.raises(InputError, match="--scale"):
        infer_kind(pd.DataFrame({"verdict": ["A", 3]}), pd.DataFrame({"label": ["B"]}))


def test_kappa_accuracy_and_confusion_match_sklearn() -> None:
    j, lab = _world()
    res = analyze_categorical(j, lab, ba_mapped=False, **BOOT)
    r = res.judges["j"]
    # the gold is the labels' majority: items where h1 and h2 disagree are tied, left out
    wide = lab.pivot(index="item", columns="annotator", values="label")
    gold = wide.loc[wide["h1"] == wide["h2"], "h1"]
    assert res.n_labeled_items == len(gold) and len(res.tied_items) == len(wide) - len(gold)
    ab = j[j["order"] == "ab"].set_index("item")["verdict"]
    ba = j[j["order"] == "ba"].set_index("item")["verdict"].map(SWAP)  # mapped back
    agg = ab.where(ab == ba, "tie")
    cats = ["A", "B", "tie"]
    g = gold.sort_index()
    for name, v in (("ab", ab), ("ba", ba), ("aggregate", agg)):
        want = cohen_kappa_score(g, v.loc[g.index], labels=cats)
        assert r.kappa[name].value == pytest.approx(want, abs=1e-12), name
        assert r.kappa[name].low <= r.kappa[name].value <= r.kappa[name].high
    assert r.accuracy["ab"].value == pytest.approx((ab.loc[g.index] == g).mean())
    assert r.agreement.value == pytest.approx((agg.loc[g.index] == g).mean())
    # consistency and flips are the judge's own: over every item judged in both orders
    assert r.consistency.value == pytest.approx((ab == ba).mean())
    assert r.flip_rate is not None
    assert r.flip_rate.value == pytest.approx((ab != ba).mean())  # over every judged item
    cm = confusion_matrix(g, agg.loc[g.index], labels=r.labels)
    assert r.confusion == cm.tolist()
    # the first-position rate from the calls as shown: A in ab, and B (shown first) in ba
    shown_ba = j[j["order"] == "ba"]["verdict"]
    firsts = (ab == "A").sum() + (shown_ba == "A").sum()
    decisive = (ab != "tie").sum() + (shown_ba != "tie").sum()
    assert r.first_position is not None
    assert r.first_position.value == pytest.approx(firsts / decisive)


def test_human_agreement_on_categories_matches_sklearn_and_krippendorff() -> None:
    rng = np.random.default_rng(11)
    cats = ["bug", "ok", "timeout"]
    truth = rng.choice(cats, 80)
    rows = []
    for who, p in (("h1", 0.9), ("h2", 0.75), ("h3", 0.6)):
        for i, t in enumerate(truth):
            if who == "h3" and i % 4 == 0:
                continue  # h3 skipped some items: alpha handles missing cells
            rows.append(
                {
                    "item": f"i{i}",
                    "annotator": who,
                    "label": t if rng.random() < p else rng.choice(cats),
                }
            )
    lab = pd.DataFrame(rows)
    j = pd.DataFrame(
        {
            "item": [f"i{i}" for i in range(80)],
            "judge": "j",
            "order": "ab",
            "sample": 0,
            "verdict": truth,
        }
    )
    res = analyze_categorical(j, lab, kind="nominal", **BOOT)
    h = res.human
    assert h is not None
    wide = lab.pivot(index="item", columns="annotator", values="label")
    kappas = {}
    for a, b in itertools.combinations(["h1", "h2", "h3"], 2):
        both = wide[[a, b]].dropna()
        kappas[(a, b)] = cohen_kappa_score(both[a], both[b])
    got = {(p["a"], p["b"]): p["kappa"] for p in h.pairs}
    assert got == pytest.approx(kappas, abs=1e-12)
    assert h.mean_kappa == pytest.approx(np.mean(list(kappas.values())), abs=1e-12)
    codes = {c: k for k, c in enumerate(cats)}
    data = wide[["h1", "h2", "h3"]].T.map(lambda v: np.nan if pd.isna(v) else codes[v])
    want = krippendorff.alpha(
        reliability_data=data.to_numpy(dtype=float), level_of_measurement="nominal"
    )
    assert h.alpha == pytest.approx(want, abs=1e-12)


def test_alpha_by_hand() -> None:
    # two coders, three items: (a, a), (a, b), (b, b). Coincidences: o_aa = 2, o_ab = o_ba = 1,
    # o_bb = 2; n = 6, n_a = n_b = 3. D_o = 2/6, D_e = 2 * 3 * 3 / (6 * 5) = 0.6
    # alpha = 1 - (1/3) / 0.6 = 4/9
    lab = pd.DataFrame(
        {"item": [1, 2, 3, 1, 2, 3], "annotator": list("ppprrr"), "label": list("aababb")}
    )
    j = pd.DataFrame(
        {"item": [1, 2, 3], "judge": "j", "order": "ab", "sample": 0, "verdict": list("aab")}
    )
    h = analyze_categorical(j, lab, kind="nominal", **BOOT).human
    assert h is not None and h.alpha == pytest.approx(4 / 9, abs=1e-12)


def test_errors_are_counted_never_scored() -> None:
    j = pd.DataFrame(
        {
            "item": ["x", "x", "y", "y"],
            "judge": "j",
            "order": ["ab", "ba", "ab", "ba"],
            "sample": 0,
            "verdict": ["A", "A", None, None],
            "error": [None, None, "timeout", "timeout"],
        }
    )
    lab = pd.DataFrame({"item": ["x", "y"], "annotator": "h", "label": ["A", "B"]})
    r = analyze_categorical(j, lab, ba_mapped=True, **BOOT).judges["j"]
    assert (r.n_rows, r.n_errors, r.n_items) == (2, 2, 1)  # y has no verdict at all
    assert r.n_missing == {"ab": 1, "ba": 1}
    assert (r.accuracy["ab"].correct, r.accuracy["ab"].n) == (1, 2)  # y counts as wrong
    assert (r.consistency.correct, r.consistency.n) == (2, 2)  # y: missing in both orders
    assert r.agreement.value == 1.0  # x only


def test_a_category_seen_only_in_one_order_still_counts_in_kappa() -> None:
    # with flips made "inconsistent", "tie" is left only in order ab's verdict of y; the
    # per-order kappa must still know the category (it used to raise ValueError)
    j = pd.DataFrame(
        {
            "item": ["x", "x", "y", "y"],
            "judge": "j",
            "order": ["ab", "ba", "ab", "ba"],
            "sample": 0,
            "verdict": ["A", "A", "tie", "B"],
        }
    )
    lab = pd.DataFrame({"item": ["x", "y"], "annotator": "h", "label": ["A", "B"]})
    r = analyze_categorical(j, lab, ba_mapped=True, inconsistent_as="inconsistent", **BOOT).judges[
        "j"
    ]
    assert r.kappa["ab"].value == pytest.approx(
        cohen_kappa_score(["A", "B"], ["A", "tie"]), abs=1e-12
    )
    assert r.kappa["aggregate"].value == pytest.approx(
        cohen_kappa_score(["A", "B"], ["A", "inconsistent"]), abs=1e-12
    )
