"""Judge-corrected pass^k: the judge's error rates propagated into per-task success counts.

Trials of one task are correlated (a hard task fails again and again), and pass^k for k > 1
depends on that correlation. Drawing each trajectory's success independently from its own
posterior would lose it and bias pass^k down. So each task has a success probability p, with
a prior over a grid of p values estimated from all tasks (empirical Bayes, by EM); given p the
task's trajectories succeed independently, and the judge's verdicts are noisy readings of them.

Per bootstrap draw:

1. resample the labelled trajectories (TPR, TNR) and the unlabelled ones (observed rate);
2. for each task, the likelihood of its verdicts on the grid of p,
   ``L(p) = (p TPR + (1-p)(1-TNR))^{n_1} (p (1-TPR) + (1-p) TNR)^{n_0} p^{h_1} (1-p)^{h_0}``
   with n_1 / n_0 unlabelled judge passes / fails and h_1 / h_0 human-labelled passes / fails;
3. fit the grid prior by EM on a bootstrap resample of the tasks, draw p from each task's
   posterior, then the number of true successes among its judge passes
   (Binomial(n_1, p TPR / (p TPR + (1-p)(1-TNR)))) and among its judge fails
   (Binomial(n_0, p (1-TPR) / (p (1-TPR) + (1-p) TNR))), plus h_1;
4. pass^k of those counts with :func:`trajudge.calibration.pass_hat_k`, averaged over tasks.

The estimate is the mean over draws and the interval their percentiles: an interval for the
pass^k that these tasks' true outcomes give (not for a population of tasks).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from trajudge.calibration._corrected import pools, rates, resample_pools
from trajudge.calibration._estimate import Estimate, FloatArray, num, percentile_interval
from trajudge.calibration._reliability import pass_hat_k

_GRID = np.linspace(0.0, 1.0, 41)
_EM_STEPS = 100
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


def mean_pass_hat(c: npt.NDArray[np.int64], n: npt.NDArray[np.int64], k: int) -> FloatArray:
    """Mean over tasks with n >= k of pass^k(n, c); ``c`` has shape (..., n_tasks)."""
    ok = n >= k
    if not ok.any():
        return np.full(c.shape[:-1], np.nan)
    table = _pass_hat_table(int(n.max()), k)
    return np.asarray(table[n[ok], c[..., ok]].mean(axis=-1), dtype=np.float64)


def _task_counts(verdict: FloatArray, truth: FloatArray, task_id: Any) -> FloatArray:
    """Per task: unlabelled judge passes, unlabelled judge fails, human passes, human fails."""
    codes, _ = pd.factorize(np.asarray(task_id), sort=True)
    lab = ~np.isnan(truth)
    cols = [
        (~lab) & (verdict == 1),
        (~lab) & (verdict == 0),
        lab & (truth == 1),
        lab & (truth == 0),
    ]
    n_tasks = int(codes.max()) + 1
    return np.column_stack(
        [np.bincount(codes, weights=c.astype(float), minlength=n_tasks) for c in cols]
    )


def _log(x: FloatArray) -> FloatArray:
    return np.log(np.clip(x, 1e-300, None))


def _draw_block(
    counts: FloatArray, tpr: FloatArray, tnr: FloatArray, rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """True success counts per task for a block of draws: (b, n_tasks)."""
    p = _GRID[None, :]
    t1, t0 = tpr[:, None], tnr[:, None]
    f1 = p * t1 + (1 - p) * (1 - t0)  # P(judge pass | p)
    f0 = p * (1 - t1) + (1 - p) * t0  # P(judge fail | p)
    terms = np.stack([_log(f1), _log(f0), _log(p + 0 * t1), _log(1 - p + 0 * t1)], axis=1)
    # tasks with the same four counts share a likelihood: work on the distinct patterns
    patterns, inverse = np.unique(counts, axis=0, return_inverse=True)
    log_lik = np.einsum("uj,bjg->bug", patterns, terms)
    lik = np.exp(log_lik - log_lik.max(axis=2, keepdims=True))
    # the prior is fitted on a bootstrap resample of the tasks, so that its uncertainty
    # (how hard tasks are in general) reaches the interval too
    n_tasks, n_pat = len(inverse.ravel()), len(patterns)
    picks = inverse.ravel()[rng.integers(0, n_tasks, size=(len(tpr), n_tasks))]
    offsets = (np.arange(len(tpr)) * n_pat)[:, None]
    drawn = np.bincount((picks + offsets).ravel(), minlength=len(tpr) * n_pat)
    w = (drawn.reshape(len(tpr), n_pat) / n_tasks)[:, :, None]
    prior = np.full((len(tpr), 1, len(_GRID)), 1.0 / len(_GRID))
    for _ in range(_EM_STEPS):
        post = prior * lik
        post /= post.sum(axis=2, keepdims=True)
        new = (post * w).sum(axis=1, keepdims=True)
        done = np.abs(new - prior).max() < 1e-7
        prior = new
        if done:
            break
    post = prior * lik
    cdf = np.cumsum(post / post.sum(axis=2, keepdims=True), axis=2)[:, inverse.ravel(), :]
    u = rng.random(cdf.shape[:2])[..., None]
    g = np.minimum((cdf < u).sum(axis=2), len(_GRID) - 1)
    pg = _GRID[g]
    q1 = pg * t1 / np.clip(f1[np.arange(len(tpr))[:, None], g], 1e-300, None)
    q0 = pg * (1 - t1) / np.clip(f0[np.arange(len(tpr))[:, None], g], 1e-300, None)
    n1 = np.broadcast_to(counts[:, 0].astype(np.int64), pg.shape)
    n0 = np.broadcast_to(counts[:, 1].astype(np.int64), pg.shape)
    c = rng.binomial(n1, np.clip(q1, 0, 1)) + rng.binomial(n0, np.clip(q0, 0, 1))
    return np.asarray(c + counts[:, 2].astype(np.int64), dtype=np.int64)


def corrected_pass_hat_k(
    verdict: Any,
    truth: Any,
    task_id: Any,
    *,
    ks: Sequence[int] = (1, 2, 3, 4),
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> CorrectedPassK:
    """pass^k corrected for the judge's errors, with an interval (see the module docstring).

    Parameters
    ----------
    verdict : array-like of shape (n_trajectories,)
        The judge's 0/1 verdict per trajectory.
    truth : array-like of shape (n_trajectories,)
        The human 0/1 label, NaN where unlabelled (labelled trajectories keep their label).
    task_id : array-like of shape (n_trajectories,)
        The task of each trajectory; its trials are the task's trajectories.
    ks : sequence of int
        The values of k.
    n_boot, seed, level :
        Draws, generator seed, interval level.

    Returns
    -------
    CorrectedPassK
        ``corrected[k]``: NaN (with NaN interval) when TPR + TNR <= 1 in more than 10% of the
        draws or no task has k trials; ``raw[k]``: pass^k of the judge's verdicts as they are.

    Examples
    --------
    >>> v = [1, 0] * 10 + [1, 1, 1, 0]
    >>> t = [1, 0] * 10 + [np.nan] * 4  # the judge is right on all 20 labelled trajectories
    >>> r = corrected_pass_hat_k(v, t, np.repeat(range(6), 4), ks=[1], n_boot=50)
    >>> r.raw[1], r.corrected[1].value  # TPR = TNR = 1: nothing to correct, 13 / 24
    (0.5416666666666666, 0.5416666666666666)
    """
    labeled, unlabeled = pools(verdict, truth)
    v = np.asarray(verdict, dtype=np.float64)
    t = np.asarray(truth, dtype=np.float64)
    counts = _task_counts(v, t, task_id)
    n_per_task = counts.sum(axis=1).astype(np.int64)
    lab, unl = resample_pools(labeled, unlabeled, n_boot, seed)
    b_tpr, b_tnr, _ = rates(lab, unl)
    defined = (b_tpr + b_tnr > 1) & ~np.isnan(b_tpr + b_tnr)
    rng = np.random.default_rng(seed + 2)
    draws = np.zeros((n_boot, len(n_per_task)), dtype=np.int64)
    idx = np.flatnonzero(defined)
    step = max(1, min(512, _BLOCK_CELLS // (len(n_per_task) * len(_GRID))))
    for start in range(0, len(idx), step):
        block = idx[start : start + step]
        draws[block] = _draw_block(counts, b_tpr[block], b_tnr[block], rng)
    raw_c = np.asarray(_judge_passes(v, task_id, len(n_per_task)), dtype=np.int64)
    result = CorrectedPassK(ks=sorted({int(k) for k in ks}))
    for k in result.ks:
        values = mean_pass_hat(draws, n_per_task, k)
        values[~defined] = np.nan
        lo, hi = percentile_interval(values, level=level)
        ok = values[~np.isnan(values)]
        value = float(ok.mean()) if ok.size and not math.isnan(lo) else math.nan
        result.corrected[k] = Estimate(value, lo, hi, len(n_per_task), level)
        result.raw[k] = float(mean_pass_hat(raw_c, n_per_task, k))
    return result


def _judge_passes(verdict: FloatArray, task_id: Any, n_tasks: int) -> FloatArray:
    codes, _ = pd.factorize(np.asarray(task_id), sort=True)
    return np.asarray(np.bincount(codes, weights=verdict, minlength=n_tasks), dtype=np.float64)
