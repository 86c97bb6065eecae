"""Success rates corrected for the judge's errors: the Rogan-Gladen corrected pass rate.

A judge that passes too much (or too little) biases every success rate computed from its
verdicts. With its true-positive and true-negative rates measured on human-labelled items,
the observed pass rate can be corrected, and the uncertainty of those rates carried into the
interval.

Inputs are per trajectory (one verdict per item, already aggregated over orders and samples).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from trajudge.calibration._bootstrap import resampled_sums
from trajudge.calibration._estimate import (
    Estimate,
    FloatArray,
    num,
    percentile_interval,
    safe_divide,
)


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
    """Raw and Rogan-Gladen corrected pass rate, with the rates used for the correction."""

    raw: Estimate
    corrected: Estimate
    tpr: float
    tnr: float
    n_labeled: int
    n_unlabeled: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "raw": self.raw.to_dict(),
            "corrected": self.corrected.to_dict(),
            "tpr": num(self.tpr),
            "tnr": num(self.tnr),
            "n_labeled": self.n_labeled,
            "n_unlabeled": self.n_unlabeled,
        }


def pools(verdict: Any, truth: Any) -> tuple[FloatArray, FloatArray]:
    v = np.asarray(verdict, dtype=np.float64)
    t = np.asarray(truth, dtype=np.float64)
    if v.shape != t.shape or v.ndim != 1 or np.isnan(v).any():
        raise ValueError("verdict and truth must be 1-D of one length; verdict without NaN")
    lab = ~np.isnan(t)
    vl, tl = v[lab], t[lab]
    labeled = np.column_stack([vl * tl, tl, (1 - vl) * (1 - tl), 1 - tl, vl, np.ones_like(vl)])
    unlabeled = np.column_stack([v[~lab], np.ones(int((~lab).sum()))])
    return labeled, unlabeled


def rates(lab: FloatArray, unl: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    tpr = safe_divide(lab[..., 0], lab[..., 1])
    tnr = safe_divide(lab[..., 2], lab[..., 3])
    p_obs = safe_divide(lab[..., 4] + unl[..., 0], lab[..., 5] + unl[..., 1])
    return tpr, tnr, p_obs


def resample_pools(
    labeled: FloatArray, unlabeled: FloatArray, n_boot: int, seed: int
) -> tuple[FloatArray, FloatArray]:
    lab = resampled_sums(labeled, n_boot=n_boot, seed=seed)
    if len(unlabeled):
        unl = resampled_sums(unlabeled, n_boot=n_boot, seed=seed + 1)
    else:
        unl = np.zeros((n_boot, 2))
    return lab, unl


def corrected_pass_rate(
    verdict: Any, truth: Any, *, n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> CorrectedRate:
    """Judge pass rate corrected with Rogan-Gladen, with a bootstrap interval.

    Parameters
    ----------
    verdict : array-like of shape (n_items,)
        The judge's 0/1 verdict per item.
    truth : array-like of shape (n_items,)
        The human 0/1 label per item, NaN where unlabelled.
    n_boot, seed, level :
        Each resample draws the labelled items (uncertainty of TPR and TNR) and, independently,
        the unlabelled items (sampling of the observed pass rate).

    Returns
    -------
    CorrectedRate
        ``raw`` is the judge's pass rate over all items; ``corrected`` is
        ``rogan_gladen(raw, TPR, TNR)`` with TPR and TNR from the labelled items. NaN (with
        NaN interval) when there are no labelled passes or fails, or ``TPR + TNR <= 1``.

    Examples
    --------
    >>> v = [1, 1, 0, 0, 1, 1, 1, 0]
    >>> t = [1, 0, 0, 1, np.nan, np.nan, np.nan, np.nan]  # tpr = 1/2, tnr = 1/2: no information
    >>> r = corrected_pass_rate(v, t, n_boot=10)
    >>> r.raw.value, math.isnan(r.corrected.value)
    (0.625, True)
    """
    labeled, unlabeled = pools(verdict, truth)
    tpr, tnr, p_obs = rates(labeled.sum(axis=0), unlabeled.sum(axis=0))
    lab, unl = resample_pools(labeled, unlabeled, n_boot, seed)
    b_tpr, b_tnr, b_p = rates(lab, unl)
    n = len(labeled) + len(unlabeled)
    raw = Estimate(float(p_obs), *percentile_interval(b_p, level=level), n, level)
    value = float(rogan_gladen(p_obs, tpr, tnr))
    lo, hi = percentile_interval(rogan_gladen(b_p, b_tpr, b_tnr), level=level)
    if math.isnan(value):
        lo = hi = math.nan
    return CorrectedRate(
        raw=raw,
        corrected=Estimate(value, lo, hi, n, level),
        tpr=float(tpr),
        tnr=float(tnr),
        n_labeled=len(labeled),
        n_unlabeled=len(unlabeled),
    )
