"""Judge-corrected pass^k: the judge's error rates propagated into per-task success counts.

Trials of one task are correlated (a hard task fails again and again), and pass^k for k > 1
depends on that correlation. Drawing each trajectory's success independently from its own
posterior would lose it and bias pass^k down. So each task has a success probability p, with
a prior over a grid of p values estimated from all tasks (empirical Bayes, by EM); given p the
task's trajectories succeed independently, and the judge's verdicts are noisy readings of them.

One draw, given TPR, TNR and a set of tasks (each with a multiplicity):

1. for each task, the likelihood of its verdicts on the grid of p,
   ``L(p) = (p TPR + (1-p)(1-TNR))^{n_1} (p (1-TPR) + (1-p) TNR)^{n_0} p^{h_1} (1-p)^{h_0}``
   with n_1 / n_0 unlabelled judge passes / fails and h_1 / h_0 known passes / fails (human
   labels; a trajectory that failed a rule gate is a known fail);
2. fit the grid prior by EM on the tasks, draw p from each task's posterior, then the number
   of true successes among its judge passes (Binomial(n_1, p TPR / (p TPR + (1-p)(1-TNR))))
   and among its judge fails (Binomial(n_0, p (1-TPR) / (p (1-TPR) + (1-p) TNR))), plus h_1;
3. pass^k of those counts with :func:`trajudge.calibration.pass_hat_k`, averaged over tasks.

The estimate is the mean of such draws on the tasks as observed (TPR and TNR from every
labelled trajectory). The interval's draws first resample the tasks (a task comes with its
labelled and unlabelled trajectories, so TPR, TNR, the prior and the average all move with
the same resample): it combines label sampling, task sampling and the posterior draw, and is
an interval for the pass^k of the population of tasks these were drawn from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from trajudge.calibration._estimate import Estimate, FloatArray, num, percentile_interval
from trajudge.calibration._validation import as_1d, check_same_length
from trajudge.calibration.intervals._bootstrap import multiplicities
from trajudge.calibration.rates._corrected import Trajectories, pool_columns, rates, trajectories
from trajudge.calibration.rates._reliability import pass_hat_k

_GRID = np.linspace(0.0, 1.0, 41)
#: EM steps from a uniform prior, the same for the estimate and for every resample. EM on a
#: grid converges slowly towards a spiky maximum-likelihood prior; stopping after a fixed
#: number of steps keeps the prior smooth (early stopping as regularisation).
_EM_STEPS = 100
_EM_TOL = 1e-7
_BLOCK_CELLS = 2_000_000  # (draws x tasks x grid) cells processed together


@dataclass(frozen=True)
class CorrectedPassK:
    """Judge-corrected pass^k per k, beside the raw pass^k of the judge's verdicts."""

    ks: list[int]
    corrected: dict[int, Estimate] = field(default_factory=dict)
    raw: dict[int, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ks": self.ks,
            "corrected": {str(k): e.to_dict() for k, e in self.corrected.items()},
            "raw": {str(k): num(v) for k, v in self.raw.items()},
        }


def _pass_hat_table(n_max: int, k: int) -> FloatArray:
    table = np.full((n_max + 1, n_max + 1), np.nan)
    for n in range(n_max + 1):
        for c in range(n + 1):
            table[n, c] = pass_hat_k(n, c, k)
    return table


def mean_pass_hat(
    c: npt.NDArray[np.int64],
    n: npt.NDArray[np.int64],
    k: int,
    weights: FloatArray | None = None,
) -> FloatArray:
    """Mean over tasks with n >= k of pass^k(n, c); ``c`` has shape (..., n_tasks).

    ``weights`` (same shape as ``c``, or broadcastable) weighs each task, e.g. the number of
    times a bootstrap resample drew it; NaN where the weights of usable tasks sum to zero.
    """
    ok = n >= k
    if not ok.any():
        return np.full(c.shape[:-1], np.nan)
    table = _pass_hat_table(int(n.max()), k)
    values = table[n[ok], c[..., ok]]
    if weights is None:
        return np.asarray(values.mean(axis=-1), dtype=np.float64)
    w = np.broadcast_to(weights, c.shape)[..., ok]
    total = w.sum(axis=-1)
    out = np.full(total.shape, np.nan)
    np.divide((values * w).sum(axis=-1), total, out=out, where=total > 0)
    return out


def _task_counts(x: Trajectories, codes: npt.NDArray[np.int64], n_tasks: int) -> FloatArray:
    """Per task: unlabelled judge passes, unlabelled judge fails, known passes, known fails."""
    live, lab = ~x.gated, ~np.isnan(x.truth)
    cols = [
        live & ~lab & (x.verdict == 1),
        live & ~lab & (x.verdict == 0),
        live & lab & (x.truth == 1),
        (live & lab & (x.truth == 0)) | x.gated,
    ]
    return np.column_stack(
        [np.bincount(codes, weights=c.astype(float), minlength=n_tasks) for c in cols]
    )


def _log(x: FloatArray) -> FloatArray:
    return np.log(np.clip(x, 1e-300, None))


def _fit_prior(lik: FloatArray, w: FloatArray, start: FloatArray, steps: int) -> FloatArray:
    """EM for the grid prior: ``lik`` (b, patterns, grid), ``w`` (b, patterns) task shares."""
    prior = start
    for _ in range(steps):
        post = prior * lik
        post /= post.sum(axis=2, keepdims=True)
        new = (post * w[:, :, None]).sum(axis=1, keepdims=True)
        done = np.abs(new - prior).max() < _EM_TOL
        prior = new
        if done:
            break
    return prior


def _draw_block(
    counts: FloatArray,
    inverse: npt.NDArray[np.int64],
    patterns: FloatArray,
    tpr: FloatArray,
    tnr: FloatArray,
    w: FloatArray,
    start: FloatArray,
    rng: np.random.Generator,
    em_steps: int,
) -> npt.NDArray[np.int64]:
    """True success counts per task for a block of draws: (b, n_tasks).

    ``w`` (b, patterns): the share of tasks of each pattern in each draw's set of tasks;
    ``start``: the prior to start EM from (used as it is with ``em_steps`` 0).
    """
    b = len(tpr)
    p = _GRID[None, :]
    t1, t0 = tpr[:, None], tnr[:, None]
    f1 = p * t1 + (1 - p) * (1 - t0)  # P(judge pass | p)
    f0 = p * (1 - t1) + (1 - p) * t0  # P(judge fail | p)
    terms = np.stack([_log(f1), _log(f0), _log(p + 0 * t1), _log(1 - p + 0 * t1)], axis=1)
    log_lik = np.einsum("uj,bjg->bug", patterns, terms)
    lik = np.exp(log_lik - log_lik.max(axis=2, keepdims=True))
    prior = _fit_prior(lik, w, np.broadcast_to(start, (b, 1, len(_GRID))), em_steps)
    post = prior * lik
    cdf = np.cumsum(post / post.sum(axis=2, keepdims=True), axis=2)[:, inverse, :]
    u = rng.random(cdf.shape[:2])[..., None]
    g = np.minimum((cdf < u).sum(axis=2), len(_GRID) - 1)
    pg = _GRID[g]
    rows = np.arange(b)[:, None]
    q1 = pg * t1 / np.clip(f1[rows, g], 1e-300, None)
    q0 = pg * (1 - t1) / np.clip(f0[rows, g], 1e-300, None)
    n1 = np.broadcast_to(counts[:, 0].astype(np.int64), pg.shape)
    n0 = np.broadcast_to(counts[:, 1].astype(np.int64), pg.shape)
    c = rng.binomial(n1, np.clip(q1, 0, 1)) + rng.binomial(n0, np.clip(q0, 0, 1))
    return np.asarray(c + counts[:, 2].astype(np.int64), dtype=np.int64)


def _undefined(ks: list[int], n_tasks: int, level: float) -> CorrectedPassK:
    nan = Estimate(math.nan, math.nan, math.nan, n_tasks, level)
    return CorrectedPassK(ks=ks, corrected=dict.fromkeys(ks, nan), raw=dict.fromkeys(ks, math.nan))


def corrected_pass_hat_k(
    verdict: Any,
    truth: Any,
    task_id: Any,
    *,
    gated: Any = None,
    ks: Sequence[int] = (1, 2, 3, 4),
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> CorrectedPassK:
    """pass^k corrected for the judge's errors, with an interval (see the module docstring).

    Parameters
    ----------
    verdict : array-like of shape (n_trajectories,)
        The judge's pass/fail verdict per trajectory (NaN allowed only where gated).
    truth : array-like of shape (n_trajectories,)
        The human pass/fail label, NaN where unlabelled (labelled trajectories keep their
        label; all labelled trajectories with a verdict give TPR and TNR).
    task_id : array-like of shape (n_trajectories,)
        The task of each trajectory; its trials are the task's trajectories.
    gated : array-like of bool, optional
        Trajectories that failed a rule gate: known fails.
    ks : sequence of int
        The values of k.
    n_boot, seed, level :
        Draws, generator seed, interval level.

    Returns
    -------
    CorrectedPassK
        ``corrected[k]``: NaN (with NaN interval) when TPR + TNR <= 1 on all labelled
        trajectories or in more than 10% of the draws, when no task has k trials, or
        without trajectories; ``raw[k]``: pass^k of the judge's verdicts as they are (gated
        trajectories as fails), NaN without trajectories.

    Examples
    --------
    >>> v = [1, 0] * 10 + [1, 1, 1, 0]
    >>> t = [1, 0] * 10 + [np.nan] * 4  # the judge is right on all 20 labelled trajectories
    >>> r = corrected_pass_hat_k(v, t, np.repeat(range(6), 4), ks=[1], n_boot=50)
    >>> r.raw[1], r.corrected[1].value  # TPR = TNR = 1: nothing to correct, 13 / 24
    (0.5416666666666666, 0.5416666666666666)
    """
    ks_ = sorted({int(k) for k in ks})
    x = trajectories(verdict, truth, gated)
    tasks = as_1d(task_id, "task_id")
    check_same_length(verdict=x.verdict, task_id=tasks)
    if len(x.verdict) == 0:
        return _undefined(ks_, 0, level)
    codes_, _ = pd.factorize(tasks, sort=True)
    codes = codes_.astype(np.int64)
    n_tasks = int(codes.max()) + 1
    counts = _task_counts(x, codes, n_tasks)
    n_per_task = counts.sum(axis=1).astype(np.int64)
    pools = np.column_stack(
        [np.bincount(codes, weights=c, minlength=n_tasks) for c in pool_columns(x).T]
    )
    raw_c = np.bincount(codes, weights=np.nan_to_num(x.verdict) * ~x.gated, minlength=n_tasks)
    patterns, inverse_ = np.unique(counts, axis=0, return_inverse=True)
    inverse = inverse_.ravel().astype(np.int64)
    onehot = np.zeros((n_tasks, len(patterns)))
    onehot[np.arange(n_tasks), inverse] = 1.0
    rng = np.random.default_rng(seed + 2)
    step = max(1, min(512, _BLOCK_CELLS // (n_tasks * len(_GRID))))
    uniform = np.full((1, 1, len(_GRID)), 1.0 / len(_GRID))

    # the estimate: draws on the tasks as observed
    tpr0, tnr0 = rates(pools.sum(axis=0))
    ones = np.ones((1, n_tasks))
    w0 = ones @ onehot / n_tasks
    point_ok = bool(tpr0 + tnr0 > 1)
    start = uniform
    if point_ok:
        start = _prior_of(patterns, float(tpr0), float(tnr0), w0, uniform)
    n_point = max(1, n_boot)
    point = np.zeros((n_point, n_tasks), dtype=np.int64)
    if point_ok:
        for lo in range(0, n_point, step):
            b = min(step, n_point - lo)
            point[lo : lo + b] = _draw_block(
                counts,
                inverse,
                patterns,
                np.full(b, tpr0),
                np.full(b, tnr0),
                np.repeat(w0, b, axis=0),
                start,
                rng,
                0,
            )
    # the interval: draws on resampled tasks
    mult = multiplicities(n_tasks, n_boot, seed)
    b_tpr, b_tnr = rates(mult @ pools)
    defined = (b_tpr + b_tnr > 1) & ~np.isnan(b_tpr + b_tnr)
    draws = np.zeros((n_boot, n_tasks), dtype=np.int64)
    idx = np.flatnonzero(defined)
    for lo in range(0, len(idx), step):
        block = idx[lo : lo + step]
        draws[block] = _draw_block(
            counts,
            inverse,
            patterns,
            b_tpr[block],
            b_tnr[block],
            mult[block] @ onehot / n_tasks,
            uniform,
            rng,
            _EM_STEPS,
        )
    result = CorrectedPassK(ks=ks_)
    for k in ks_:
        values = mean_pass_hat(draws, n_per_task, k, mult)
        values[~defined] = np.nan
        lo_, hi_ = percentile_interval(values, level=level)
        value = math.nan
        if point_ok and not math.isnan(lo_):
            value = float(np.nanmean(mean_pass_hat(point, n_per_task, k)))
        if math.isnan(value):
            lo_ = hi_ = math.nan
        result.corrected[k] = Estimate(value, lo_, hi_, n_tasks, level)
        result.raw[k] = float(mean_pass_hat(raw_c.astype(np.int64), n_per_task, k))
    return result


def _prior_of(
    patterns: FloatArray,
    tpr: float,
    tnr: float,
    w: FloatArray,
    start: FloatArray,
) -> FloatArray:
    """The EM prior on the tasks as observed (the estimate's draws use it as it is)."""
    p = _GRID[None, :]
    f1 = p * tpr + (1 - p) * (1 - tnr)
    f0 = p * (1 - tpr) + (1 - p) * tnr
    terms = np.stack([_log(f1), _log(f0), _log(p), _log(1 - p)], axis=1)
    log_lik = np.einsum("uj,bjg->bug", patterns, terms)
    lik = np.exp(log_lik - log_lik.max(axis=2, keepdims=True))
    return _fit_prior(lik, w, start, _EM_STEPS)
