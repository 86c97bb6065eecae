"""The alternative annotator test (Calderon et al. 2025) on a tiny table worked by hand, and
on simulated annotators: a judge as good as they are passes, a coin does not."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import false_discovery_control
from scipy.stats import t as student_t

from trajudge.calibration.panel import adjust_p, alt_test

TABLE = {  # item: (A, B, C, judge)
    1: (1, 1, 1, 1),
    2: (1, 1, 0, 1),
    3: (0, 0, 0, 1),
    4: (0, 1, 1, 1),
    5: (1, 0, 0, 0),
    6: (0, 0, 1, 0),
}
# Leave-one-out by hand: s = share of the two others a label agrees with; the judge wins an
# item when s_judge >= s_human, the annotator when s_human >= s_judge; d = W_human - W_judge.
#   out A: s_human 1, .5, 1, 0, 0, .5; s_judge 1, .5, 0, 1, 1, .5 -> d 0, 0, 1, -1, -1, 0
#   out B: s_human 1, .5, 1, .5, .5, .5; s_judge 1, .5, 0, .5, .5, .5 -> d 0, 0, 1, 0, 0, 0
#   out C: s_human 1, 0, 1, .5, .5, 0; s_judge 1, 1, 0, .5, .5, 1 -> d 0, -1, 1, 0, 0, -1
D = {"A": [0, 0, 1, -1, -1, 0], "B": [0, 0, 1, 0, 0, 0], "C": [0, -1, 1, 0, 0, -1]}
RHO_JUDGE = {"A": 5 / 6, "B": 5 / 6, "C": 5 / 6}
RHO_HUMAN = {"A": 4 / 6, "B": 1.0, "C": 4 / 6}


def _frames() -> tuple[pd.Series, pd.DataFrame]:
    judge = pd.Series({i: row[3] for i, row in TABLE.items()})
    rows = [(i, a, row[j]) for i, row in TABLE.items() for j, a in enumerate("ABC")]
    return judge, pd.DataFrame(rows, columns=["item", "annotator", "label"])


def _p_by_hand(d: list[int], eps: float) -> float:
    n = len(d)
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    return float(student_t.cdf((mean - eps) / (sd / math.sqrt(n)), df=n - 1))


def test_a_tiny_table_by_hand() -> None:
    judge, labels = _frames()
    got = alt_test(judge=judge, annotators=labels, epsilon=0.2, q=0.4, min_items=6)
    assert [t.annotator for t in got.trials] == ["A", "B", "C"]
    p = {a: _p_by_hand(d, 0.2) for a, d in D.items()}
    # Benjamini-Yekutieli by hand: sorted p (A = C < B), m = 3, c = 1 + 1/2 + 1/3
    c = 1 + 1 / 2 + 1 / 3
    first, second, third = sorted(p.values())
    adj_low = min(c * 3 / 1 * first, c * 3 / 2 * second, c * 3 / 3 * third)
    adj_b = min(1.0, c * 3 / 3 * third)
    for t in got.trials:
        assert t.n == 6
        assert t.rho_judge == pytest.approx(RHO_JUDGE[t.annotator])
        assert t.rho_human == pytest.approx(RHO_HUMAN[t.annotator])
        assert t.p_value == pytest.approx(p[t.annotator])
        assert t.p_adjusted == pytest.approx(adj_b if t.annotator == "B" else adj_low)
    # at q = 0.4 the judge may replace A and C (adjusted 0.39), not B (0.78)
    assert [t.judge_wins for t in got.trials] == [True, False, True]
    assert got.omega == pytest.approx(2 / 3) and got.passed
    assert got.advantage == pytest.approx(5 / 6)
    # at the usual q = 0.05 six items are far too few to show anything
    assert alt_test(judge=judge, annotators=labels, min_items=6).omega == 0.0


def test_benjamini_yekutieli_matches_scipy() -> None:
    rng = np.random.default_rng(5)
    for _ in range(20):
        p = rng.uniform(0, 0.3, size=int(rng.integers(1, 12)))
        assert adjust_p(p, method="by") == pytest.approx(false_discovery_control(p, method="by"))


def _annotated(seed: int, judge_right: float, n: int = 150) -> tuple[pd.Series, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n)
    rows = []
    for a in ("a1", "a2", "a3", "a4"):
        said = np.where(rng.random(n) < 0.85, truth, 1 - truth)
        rows += [(i, a, int(said[i])) for i in range(n)]
    judge = np.where(rng.random(n) < judge_right, truth, 1 - truth)
    return pd.Series(judge, index=range(n)), pd.DataFrame(
        rows, columns=["item", "annotator", "label"]
    )


def test_a_judge_as_good_as_the_annotators_passes_and_a_coin_fails() -> None:
    judge, labels = _annotated(1, judge_right=0.9)
    good = alt_test(judge=judge, annotators=labels)
    assert good.passed and good.omega == 1.0
    coin, labels = _annotated(2, judge_right=0.5)
    bad = alt_test(judge=coin, annotators=labels)
    assert not bad.passed and bad.omega == 0.0 and bad.advantage < good.advantage


def test_too_few_annotators_or_items() -> None:
    judge, labels = _frames()
    with pytest.raises(ValueError, match="needs 3 annotators, got 2"):
        alt_test(judge=judge, annotators=labels[labels["annotator"] != "C"])
    got = alt_test(judge=judge, annotators=labels)  # 6 items, 30 wanted
    assert got.trials == [] and got.skipped == ["A", "B", "C"]
    assert math.isnan(got.omega) and not got.passed
