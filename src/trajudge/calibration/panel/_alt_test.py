"""Can the judge replace an annotator? The alternative annotator test (alt-test).

Leave one annotator out at a time. On each item that annotator labelled, ask who agrees
better with the remaining annotators: the judge or the left-out annotator. The judge "wins"
an item when it agrees at least as well (a tie counts for both). Over the annotator's items,
``rho_judge`` and ``rho_human`` are the shares won; the judge is an acceptable alternative to
that annotator when ``rho_human - rho_judge < epsilon`` is shown by a one-sided paired t-test
(``epsilon`` credits the judge for being cheaper and faster). The p-values of all annotators
are adjusted by Benjamini-Yekutieli; the winning rate ``omega`` is the share of annotators
for whom the test rejects, and the judge passes when ``omega >= 0.5``. The mean of
``rho_judge`` over annotators (the average advantage probability) compares judges.

References
----------
Calderon, Reichart & Dror (2025), "The Alternative Annotator Test for LLM-as-a-Judge: How to
Statistically Justify Replacing Human Annotators with LLMs", ACL 2025 (arXiv:2501.10970).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import ttest_1samp

from trajudge.calibration._estimate import num
from trajudge.calibration.panel._multitest import adjust_p

#: Calderon et al. suggest 0.2 for crowd workers or skilled annotators, 0.1 for experts
EPSILON = 0.2


@dataclass(frozen=True)
class AnnotatorTrial:
    """The judge against one left-out annotator."""

    annotator: str
    n: int
    rho_judge: float
    rho_human: float
    p_value: float
    p_adjusted: float
    judge_wins: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "annotator": self.annotator,
            "n": self.n,
            "rho_judge": num(self.rho_judge),
            "rho_human": num(self.rho_human),
            "p_value": num(self.p_value),
            "p_adjusted": num(self.p_adjusted),
            "judge_wins": self.judge_wins,
        }


@dataclass(frozen=True)
class AltTest:
    """The alt-test of one judge: per annotator, the winning rate and whether it passes.

    ``skipped`` names annotators with fewer than ``min_items`` usable items (not tested, not
    counted in omega).
    """

    trials: list[AnnotatorTrial]
    epsilon: float
    q: float
    skipped: list[str]

    @property
    def omega(self) -> float:
        """The winning rate: the share of tested annotators the judge can replace."""
        return (
            sum(t.judge_wins for t in self.trials) / len(self.trials) if self.trials else math.nan
        )

    @property
    def advantage(self) -> float:
        """The average advantage probability: mean ``rho_judge`` over annotators."""
        return float(np.mean([t.rho_judge for t in self.trials])) if self.trials else math.nan

    @property
    def passed(self) -> bool:
        return bool(self.omega >= 0.5)  # NaN (nothing tested) does not pass

    def to_dict(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "q": self.q,
            "omega": num(self.omega),
            "advantage": num(self.advantage),
            "passed": self.passed,
            "annotators": [t.to_dict() for t in self.trials],
            "skipped": self.skipped,
        }


def _p_less(d: np.ndarray[Any, Any], epsilon: float) -> float:
    """One-sided p-value of H1: mean(d) < epsilon. With no spread in d the t statistic is
    undefined; the data then answer the question outright (0 or 1)."""
    if d.size < 2:
        return math.nan
    if np.all(d == d[0]):
        return 0.0 if d[0] < epsilon else 1.0
    return float(ttest_1samp(d, epsilon, alternative="less").pvalue)


def alt_test(
    *,
    judge: pd.Series,
    annotators: pd.DataFrame,
    epsilon: float = EPSILON,
    q: float = 0.05,
    min_items: int = 30,
    min_annotators: int = 3,
) -> AltTest:
    """The alternative annotator test of one judge (module docstring).

    Parameters
    ----------
    judge : Series
        Item -> the judge's label (any comparable value: pass/fail, a category, a score).
    annotators : DataFrame
        ``item, annotator, label`` rows, one per human label.
    epsilon :
        The judge's allowance: it may win up to ``epsilon`` less often than the annotator.
    q :
        The false discovery rate of the Benjamini-Yekutieli procedure over annotators.
    min_items :
        Items an annotator needs (labelled by them, at least one other annotator and the
        judge) to be tested; Calderon et al. use 30.
    min_annotators :
        Annotators the test needs in all (ValueError with fewer): leaving one out must
        leave a group to agree with.

    Returns
    -------
    AltTest
        Agreement with the remaining annotators is the share of them whose label is equal.
    """
    labels = annotators.dropna(subset=["label"])
    names = sorted({str(a) for a in labels["annotator"]})
    if len(names) < min_annotators:
        raise ValueError(
            f"the alternative annotator test needs {min_annotators} annotators, got {len(names)}"
        )
    table = labels.assign(annotator=labels["annotator"].astype(str)).pivot_table(
        index="item", columns="annotator", values="label", aggfunc="first"
    )
    table = table[table.index.isin(judge.dropna().index)]
    verdict = judge.reindex(table.index)
    trials, skipped, pvals = [], [], []
    rows: list[tuple[str, int, float, float]] = []
    for name in names:
        mine = table[name]
        others = table.drop(columns=[name])
        n_others = others.notna().sum(axis=1)
        use = mine.notna() & (n_others >= 1)
        if int(use.sum()) < min_items:
            skipped.append(name)
            continue
        rest = others[use]
        count = n_others[use].to_numpy(dtype=float)
        # share of the remaining annotators each one agrees with
        s_human = rest.eq(mine[use], axis=0).sum(axis=1).to_numpy() / count
        s_judge = rest.eq(verdict[use], axis=0).sum(axis=1).to_numpy() / count
        w_judge = (s_judge >= s_human).astype(float)
        w_human = (s_human >= s_judge).astype(float)
        pvals.append(_p_less(w_human - w_judge, epsilon))
        rows.append((name, int(use.sum()), float(w_judge.mean()), float(w_human.mean())))
    adjusted = adjust_p(pvals, method="by") if pvals else np.zeros(0)
    for (name, n, rho_j, rho_h), p, p_adj in zip(rows, pvals, adjusted, strict=True):
        trials.append(AnnotatorTrial(name, n, rho_j, rho_h, p, float(p_adj), bool(p_adj <= q)))
    return AltTest(trials=trials, epsilon=epsilon, q=q, skipped=skipped)
