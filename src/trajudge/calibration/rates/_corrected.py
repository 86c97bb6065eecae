"""Success rates corrected for the judge's errors: the Rogan-Gladen corrected pass rate.

A judge that passes too much (or too little) biases every success rate computed from its
verdicts. With its true-positive and true-negative rates measured on human-labelled items,
the observed pass rate can be corrected, and the uncertainty of those rates carried into the
interval.

Inputs are per trajectory (one verdict per item, already aggregated over orders and samples
by :func:`trajudge.calibration.item_verdicts`, the same verdicts behind the report's TPR and
TNR). Intervals resample clusters (tasks, when given): a resample draws whole tasks with their
labelled and unlabelled trajectories, so label sampling and task sampling are carried together.
Trajectories that failed a rule gate are certain fails: they never enter TPR and TNR's
correction, only the denominator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from trajudge.calibration._estimate import Estimate, FloatArray, num, safe_divide
from trajudge.calibration._validation import as_1d, as_binary, check_same_length
from trajudge.calibration.intervals._bootstrap import (
    cluster_bootstrap_many,
    item_codes,
    per_item_sums,
)
from trajudge.calibration.intervals._boundary import boundary_rate


def rogan_gladen(p_obs: npt.ArrayLike, tpr: npt.ArrayLike, tnr: npt.ArrayLike) -> FloatArray:
    r"""Rogan-Gladen corrected prevalence, clipped to [0, 1].

    .. math:: \hat\pi = \frac{p_{obs} + TNR - 1}{TPR + TNR - 1}

    Vectorised. NaN where ``TPR + TNR - 1 <= 0`` (a judge no better than chance carries no
    information about the true rate) or an input is NaN.

    Examples
    --------
    >>> round(float(rogan_gladen(0.5, 0.9, 0.8)), 6)  # (0.5 + 0.8 - 1) / (0.9 + 0.8 - 1) = 3/7
    0.428571

    References
    ----------
    Rogan & Gladen (1978), Am. J. Epidemiol. 107(1), 71-76.
    """
    p, se, sp = (np.asarray(x, dtype=np.float64) for x in (p_obs, tpr, tnr))
    youden = se + sp - 1.0
    out = safe_divide(p + sp - 1.0, np.where(youden > 0, youden, 0.0))
    return np.asarray(np.clip(out, 0.0, 1.0), dtype=np.float64)


@dataclass(frozen=True)
class CorrectedRate:
    """Raw and Rogan-Gladen corrected pass rate, with the rates used for the correction.

    ``tpr`` and ``tnr`` are the judge's rates on the trajectories with both a verdict and a
    label (the same numbers as the report's TPR and TNR); of the n trajectories,
    ``n_labeled`` and ``n_unlabeled`` passed their gates, ``n_gated`` failed one and count as
    certain fails, so ``corrected = (1 - g) * rogan_gladen(raw / (1 - g), tpr, tnr)`` with
    ``g = n_gated / n`` (``g = 0`` without gates).
    """

    raw: Estimate
    corrected: Estimate
    tpr: float
    tnr: float
    n_labeled: int
    n_unlabeled: int
    n_gated: int = 0

    @property
    def n(self) -> int:
        """Trajectories behind the rates."""
        return self.n_labeled + self.n_unlabeled + self.n_gated

    def to_dict(self) -> dict[str, Any]:
        return {
            "raw": self.raw.to_dict(),
            "corrected": self.corrected.to_dict(),
            "tpr": num(self.tpr),
            "tnr": num(self.tnr),
            "n_labeled": self.n_labeled,
            "n_unlabeled": self.n_unlabeled,
            "n_gated": self.n_gated,
        }


@dataclass(frozen=True)
class Trajectories:
    """Validated per-trajectory inputs of the corrected rates."""

    verdict: FloatArray  # 0/1, NaN only where gated
    truth: FloatArray  # 0/1, NaN where unlabelled
    gated: npt.NDArray[np.bool_]
    pool: npt.NDArray[np.bool_]  # verdict and truth both known: TPR/TNR evidence


def trajectories(verdict: Any, truth: Any, gated: Any = None) -> Trajectories:
    """Check and convert the per-trajectory inputs (ValueError naming the argument)."""
    v = as_binary(verdict, "verdict", allow_missing=True)
    t = as_binary(truth, "truth", allow_missing=True)
    g = np.zeros(len(v), dtype=bool) if gated is None else as_binary(gated, "gated") == 1
    check_same_length(verdict=v, truth=t, gated=g)
    if (np.isnan(v) & ~g).any():
        raise ValueError("verdict is missing on a trajectory that passed its gates; drop it")
    return Trajectories(v, t, g, ~np.isnan(v) & ~np.isnan(t))


def pool_columns(x: Trajectories) -> FloatArray:
    """Per trajectory: TPR/TNR evidence (tp, pos, tn, neg) where verdict and truth are known."""
    v, t, m = np.nan_to_num(x.verdict), np.nan_to_num(x.truth), x.pool.astype(float)
    return np.column_stack([v * t * m, t * m, (1 - v) * (1 - t) * m, (1 - t) * m])


def rates(pools: FloatArray) -> tuple[FloatArray, FloatArray]:
    """TPR and TNR from totals of :func:`pool_columns` (shape (..., 4))."""
    return safe_divide(pools[..., 0], pools[..., 1]), safe_divide(pools[..., 2], pools[..., 3])


def corrected_pass_rate(
    verdict: Any,
    truth: Any,
    *,
    clusters: Any = None,
    gated: Any = None,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> CorrectedRate:
    r"""Judge pass rate corrected with Rogan-Gladen, with a clustered bootstrap interval.

    .. math:: \hat\pi = (1 - g)\,\frac{p + TNR - 1}{TPR + TNR - 1}

    with p the judge's pass rate on the trajectories that passed their gates, g the share
    that failed a gate (certain fails) and TPR / TNR the judge's rates on the labelled
    trajectories.

    Parameters
    ----------
    verdict : array-like of shape (n,)
        The judge's pass/fail verdict per trajectory (NaN allowed only where gated).
    truth : array-like of shape (n,)
        The human pass/fail label per trajectory, NaN where unlabelled.
    clusters : array-like of shape (n,), optional
        The task of each trajectory: a resample draws whole tasks, with their labelled and
        unlabelled trajectories. Default: every trajectory is its own cluster.
    gated : array-like of bool, shape (n,), optional
        Trajectories that failed a rule gate.
    n_boot, seed, level :
        Resamples, generator seed, interval level.

    Returns
    -------
    CorrectedRate
        ``raw`` is the judge's pass rate over all n trajectories (gated ones as fails);
        ``corrected`` is NaN (with NaN interval) when there are no labelled passes or fails,
        ``TPR + TNR <= 1``, or no trajectory at all.

    Examples
    --------
    >>> v = [1, 1, 0, 0, 1, 1, 1, 0]
    >>> t = [1, 0, 0, 1, np.nan, np.nan, np.nan, np.nan]  # tpr = 1/2, tnr = 1/2: no information
    >>> r = corrected_pass_rate(v, t, n_boot=10)
    >>> r.raw.value, math.isnan(r.corrected.value)
    (0.625, True)
    """
    x = trajectories(verdict, truth, gated)
    n = len(x.verdict)
    ids = np.arange(n) if clusters is None else as_1d(clusters, "clusters")
    check_same_length(verdict=x.verdict, clusters=ids)
    codes, n_clusters = item_codes(ids)
    live = (~x.gated).astype(float)
    cols = np.column_stack([pool_columns(x), np.nan_to_num(x.verdict) * live, live, np.ones(n)])
    sums = per_item_sums(codes, n_clusters, cols)

    def raw(s: FloatArray) -> FloatArray:
        return safe_divide(s[..., 4], s[..., 6])

    def corrected(s: FloatArray) -> FloatArray:
        tpr, tnr = rates(s[..., :4])
        share = safe_divide(s[..., 5], s[..., 6])
        rg = rogan_gladen(safe_divide(s[..., 4], s[..., 5]), tpr, tnr)
        return np.where(share == 0, 0.0, share * rg)

    found = cluster_bootstrap_many(
        sums, {"raw": raw, "corrected": corrected}, n_boot=n_boot, seed=seed, level=level
    )
    raw_est, corr = found["raw"][0], found["corrected"][0]
    if n_clusters:  # a judge that passes (or fails) everything: the bootstrap cannot move
        raw_est = boundary_rate(raw_est, sums[:, 4], sums[:, 6])
    if math.isnan(corr.value):
        corr = Estimate(math.nan, math.nan, math.nan, corr.n, level)
    tpr, tnr = rates(sums[:, :4].sum(axis=0))
    n_labeled = int((~np.isnan(x.truth) & ~x.gated).sum())
    n_gated = int(x.gated.sum())
    return CorrectedRate(
        raw=raw_est,
        corrected=corr,
        tpr=float(tpr),
        tnr=float(tnr),
        n_labeled=n_labeled,
        n_unlabeled=n - n_labeled - n_gated,
        n_gated=n_gated,
    )
