r"""Trust or escalate: keep the verdicts the judge is sure of, send the rest to people.

Each item has a confidence (for a calibrated probability p: :math:`\max(p, 1-p)`; or the
agreement of the judge's calls across orders and samples). The judge keeps the items with
confidence :math:`\ge \lambda` and escalates the others. The threshold :math:`\lambda` is chosen on
dev so that, with probability at least :math:`1 - \alpha` over the dev draw, the agreement
with humans on kept items is at least the target :math:`1 - \epsilon`:

1. candidate thresholds, from the highest down: the confidence of the
   :math:`\lceil i n / m \rceil`-th most confident dev item for i = 1..m (a grid of m kept
   shares, fixed from the confidences alone, before any label is read; every distinct
   confidence when m is None), keeping only thresholds that keep at least
   :math:`n_{min} = \lceil \ln \alpha / \ln(1-\epsilon) \rceil` dev
   items (fewer could not pass even without error). A coarse grid matters: fixed-sequence
   testing stops at the first failure, and a fine grid offers noise many chances to stop it
   early (1,000 dev items whose confidence c ~ U(0.5, 1) is calibrated, target 0.9: over
   1,000 draws m = 20 keeps 21% of the items on average, every distinct value 15%, the best
   possible threshold 40%);
2. for each threshold, in that order, test :math:`H_0`: agreement(:math:`\lambda`) < target with the
   exact binomial test: with :math:`n` kept dev items of which :math:`x` agree, the
   Clopper-Pearson lower bound :math:`L = B^{-1}(\alpha; x, n - x + 1)` must reach the target
   (equivalently the p-value :math:`P(\mathrm{Bin}(n, 1-\epsilon) \ge x) \le \alpha`);
3. fixed-sequence testing: stop at the first threshold that fails; the last threshold that passed is
   chosen. Testing in a fixed order, each at level :math:`\alpha`, keeps the chance of
   choosing any threshold whose true agreement is below target at most :math:`\alpha` without a
   multiplicity correction.

The guarantee holds when the confidences are fixed before the dev labels are used (the
calls' agreement, or probabilities from a calibrator fitted elsewhere); with a calibrator
cross-fitted on the same dev labels (its out-of-fold probabilities) it holds approximately.

References
----------
Jung, Brahman & Choi (2024), "Trust or Escalate: LLM Judges with Provable Guarantees for Human
Agreement", arXiv:2407.18370 (ICLR 2025); Angelopoulos, Bates, Candès, Jordan & Lei (2021),
"Learn then Test: Calibrating Predictive Algorithms to Achieve Risk Control", arXiv:2110.01052
(fixed-sequence testing); Clopper & Pearson (1934), Biometrika 26(4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from trajudge.calibration._estimate import Estimate, FloatArray, as_1d, check_same_length, num
from trajudge.calibration.intervals._bootstrap import bootstrap_ratio
from trajudge.calibration.intervals._boundary import clopper_pearson_lower


@dataclass(frozen=True)
class TrustThreshold:
    """The confidence threshold chosen on dev: keep items with ``confidence >= value``.

    ``certified`` False means no candidate passed the first test: ``value`` is +inf and every
    item is escalated. ``n_kept`` / ``agreement`` / ``lower_bound`` describe the dev items
    at the threshold; ``n_tested`` the thresholds tested before stopping.
    """

    value: float
    target: float
    alpha: float
    certified: bool
    n_dev: int
    n_kept: int
    agreement: float
    lower_bound: float
    n_tested: int

    @property
    def cut(self) -> float:
        """The name of :attr:`value` before "threshold" became the one word for it."""
        return self.value

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": None if math.isinf(self.value) else num(self.value),
            "target": self.target,
            "alpha": self.alpha,
            "certified": self.certified,
            "n_dev": self.n_dev,
            "n_kept": self.n_kept,
            "agreement": num(self.agreement),
            "lower_bound": num(self.lower_bound),
            "n_tested": self.n_tested,
        }


def _correct(correct: object) -> FloatArray:
    c = as_1d(correct, "correct").astype(np.float64)
    if np.isnan(c).any() or not np.isin(c, (0.0, 1.0)).all():
        raise ValueError("correct must be 0/1 (judge verdict == human label) without gaps")
    return c


def fit_trust_threshold(
    confidence: npt.ArrayLike,
    correct: npt.ArrayLike,
    *,
    target: float = 0.9,
    alpha: float = 0.05,
    grid: int | None = 20,
) -> TrustThreshold:
    """Choose the confidence threshold on DEV items (fixed-sequence exact binomial tests).

    Parameters
    ----------
    confidence : array-like of shape (n_dev,)
        The judge's confidence per dev item (higher = surer); fixed before the labels are
        used (module docstring).
    correct : array-like of shape (n_dev,)
        1 where the judge's verdict equals the human label, else 0.
    target : float
        The agreement to guarantee on kept items, :math:`1-\\epsilon`.
    alpha : float
        The risk: the chance that the chosen threshold's agreement is below target.
    grid : int or None
        Number m of candidate kept shares (module docstring); None tests every distinct
        confidence.

    Returns
    -------
    TrustThreshold

    Examples
    --------
    >>> conf = np.r_[np.full(40, 0.95), np.full(40, 0.7)]
    >>> ok = np.r_[np.ones(40), np.tile([1, 0], 20)]  # sure items right, unsure ones 50/50
    >>> t = fit_trust_threshold(conf, ok, target=0.9, alpha=0.05)
    >>> t.value, t.n_kept, round(t.lower_bound, 3)  # 40/40: L = 0.05 ** (1/40); 60/80 fails
    (0.95, 40, 0.928)
    """
    if not 0 < target < 1 or not 0 < alpha < 1:
        raise ValueError("target and alpha must lie strictly between 0 and 1")
    conf = as_1d(confidence, "confidence").astype(np.float64)
    ok = _correct(correct)
    check_same_length(confidence=conf, correct=ok)
    if np.isnan(conf).any():
        raise ValueError("confidence has missing values")
    order = np.argsort(-conf, kind="stable")
    sorted_conf, sorted_ok = conf[order], ok[order]
    if grid is None:
        thresholds = np.unique(conf)[::-1]  # highest first
    else:
        if grid < 1:
            raise ValueError(f"grid must be >= 1 or None, got {grid}")
        ranks = np.ceil(np.arange(1, grid + 1) * conf.size / grid).astype(np.int64)
        thresholds = (
            np.unique(sorted_conf[np.clip(ranks, 1, None) - 1])[::-1] if conf.size else conf
        )
    n_kept = np.searchsorted(
        -sorted_conf, -thresholds, side="right"
    )  # items with conf >= threshold
    agree = np.r_[0.0, np.cumsum(sorted_ok)][n_kept]
    n_min = math.ceil(math.log(alpha) / math.log(target))
    testable = n_kept >= n_min
    thresholds, n_kept, agree = thresholds[testable], n_kept[testable], agree[testable]
    lower = clopper_pearson_lower(agree, n_kept, alpha=alpha)
    passed = lower >= target
    n_pass = int(np.argmin(passed)) if not passed.all() else int(passed.size)
    n_tested = min(n_pass + 1, int(passed.size))
    if n_pass == 0:
        return TrustThreshold(math.inf, target, alpha, False, int(conf.size), 0, math.nan, math.nan,
                        n_tested)  # fmt: skip
    i = n_pass - 1
    return TrustThreshold(
        value=float(thresholds[i]),
        target=target,
        alpha=alpha,
        certified=True,
        n_dev=int(conf.size),
        n_kept=int(n_kept[i]),
        agreement=float(agree[i] / n_kept[i]),
        lower_bound=float(lower[i]),
        n_tested=n_tested,
    )


def escalated_items(
    confidence: npt.ArrayLike, threshold: TrustThreshold | float, items: npt.ArrayLike
) -> list[Any]:
    """The items whose confidence is below the threshold (NaN confidence: escalated), in input
    order.

    >>> escalated_items([0.99, 0.6, 0.9], 0.9, ["a", "b", "c"])
    ['b']
    """
    c = as_1d(confidence, "confidence").astype(np.float64)
    ids = as_1d(items, "items")
    check_same_length(confidence=c, items=ids)
    value = threshold.value if isinstance(threshold, TrustThreshold) else float(threshold)
    keep = c >= value  # NaN compares False: escalated
    return list(ids[~keep].tolist())


@dataclass(frozen=True)
class TrustOutcome:
    """The threshold applied to labelled HOLDOUT items.

    ``coverage``: share of items the judge keeps; ``agreement``: agreement with humans on the
    kept items (NaN when none is kept); both with percentile intervals from resampling tasks.
    ``escalated`` lists the holdout items sent to people.
    """

    threshold: TrustThreshold
    coverage: Estimate
    agreement: Estimate
    n_items: int
    n_kept: int
    escalated: tuple[Any, ...]

    @property
    def cut(self) -> TrustThreshold:
        """The name of :attr:`threshold` before "threshold" became the one word for it."""
        return self.threshold

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold.to_dict(),
            "coverage": self.coverage.to_dict(),
            "agreement": self.agreement.to_dict(),
            "n_items": self.n_items,
            "n_kept": self.n_kept,
            "escalated": [str(i) for i in self.escalated],
        }


def evaluate_trust(
    threshold: TrustThreshold,
    confidence: npt.ArrayLike,
    correct: npt.ArrayLike,
    tasks: npt.ArrayLike,
    *,
    items: npt.ArrayLike | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> TrustOutcome:
    """Coverage and achieved agreement of a dev-fitted threshold on labelled HOLDOUT items.

    Parameters
    ----------
    threshold : TrustThreshold
        From :func:`fit_trust_threshold` on dev.
    confidence, correct : array-like of shape (n,)
        Per holdout item, the confidence and whether the verdict equals the human label.
    tasks : array-like of shape (n,)
        Task of each item; the intervals resample tasks (their items move together).
    items : array-like of shape (n,), optional
        Item ids, for the ``escalated`` list (positions when omitted).
    n_boot, seed, level :
        Resamples, seed, interval level.

    Examples
    --------
    >>> threshold = TrustThreshold(0.9, 0.9, 0.05, True, 100, 50, 0.96, 0.91, 3)
    >>> out = evaluate_trust(threshold, [0.95, 0.92, 0.5, 0.99], [1, 1, 0, 0], [1, 2, 3, 4],
    ...                      items=["a", "b", "c", "d"], n_boot=100)
    >>> out.coverage.value, round(out.agreement.value, 4), out.escalated  # kept a, b, d
    (0.75, 0.6667, ('c',))
    """
    c = as_1d(confidence, "confidence").astype(np.float64)
    ok = _correct(correct)
    t = as_1d(tasks, "tasks")
    ids = np.arange(c.size) if items is None else as_1d(items, "items")
    check_same_length(confidence=c, correct=ok, tasks=t, items=ids)
    kept = (c >= threshold.value).astype(np.float64)
    boot: dict[str, Any] = {"n_boot": n_boot, "seed": seed, "level": level}
    coverage = bootstrap_ratio(kept, np.ones_like(kept), t, proportion=True, **boot)
    agreement = bootstrap_ratio(kept * ok, kept, t, proportion=True, **boot)
    return TrustOutcome(
        threshold=threshold,
        coverage=coverage,
        agreement=agreement,
        n_items=int(c.size),
        n_kept=int(kept.sum()),
        escalated=tuple(escalated_items(c, threshold, ids)),
    )


#: The names of :class:`TrustThreshold` and :func:`fit_trust_threshold` before "threshold"
#: became the one word for a pass/keep boundary; code written against them keeps working.
TrustCut = TrustThreshold
fit_trust_cut = fit_trust_threshold
