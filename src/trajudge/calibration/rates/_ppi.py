r"""Prediction-powered pass rates (PPI++): judge verdicts on everything, labels on a sample.

A judge scores all N trajectories; people label a random sample of n. The labels alone give an
unbiased but wide estimate; the judge alone a narrow but biased one. PPI++ combines them:

.. math:: \hat\theta_\lambda = \frac{1}{n}\sum_{i \in L} (Y_i - \lambda f_i)
          + \lambda\,\frac{1}{N_u}\sum_{j \in U} f_j

with :math:`Y` the human label, :math:`f` the judge's verdict, L the labelled and U the
unlabelled units. For any fixed :math:`\lambda` it is unbiased (the labelled units measure the
judge's bias); :math:`\lambda = 0` is the labels-only mean, :math:`\lambda = 1` plain PPI.

Variance, clustered by task. Write :math:`\hat\theta_\lambda - \theta` as a sum of per-unit
terms, :math:`(Y_i - \lambda f_i - \bar r)/n` for labelled units and
:math:`\lambda (f_j - \bar f_U)/N_u` for unlabelled ones; add them up within each task g
(:math:`A_g - \lambda B_g`, labelled part :math:`A_g` from Y, :math:`B_g` from f), and

.. math:: \widehat{Var}(\hat\theta_\lambda) = \frac{G}{G-1} \sum_g (A_g - \lambda B_g)^2

over the G tasks (a cluster-robust, CR1, variance: trials of one task may be correlated, and
a task may have both labelled and unlabelled trajectories). Without tasks every unit is its
own cluster and this is :math:`\frac{G}{G-1}(\hat\sigma^2_{Y-\lambda f}/n +
\lambda^2 \hat\sigma^2_{f,U}/N_u)`, the PPI++ variance. The power-tuning parameter is the
:math:`\lambda` that minimises it, :math:`\hat\lambda = \sum_g A_g B_g / \sum_g B_g^2`, clipped
to [0, 1] (without clusters about :math:`\mathrm{Cov}(Y, f) / ((1 + n/N_u) \mathrm{Var}(f))`,
the PPI++ formula). The interval is :math:`\hat\theta \pm z_{1-a/2} \sqrt{\widehat{Var}}`,
clipped to [0, 1]; valid as n and N grow (PPI++ Theorem 1; the plug-in :math:`\hat\lambda`
does not change the limit).

pass^k: per task, the unbiased estimator :math:`\binom{c}{k}/\binom{m}{k}` of the chance that
k of its trials all pass, from m trials of which c pass, is averaged over tasks (τ-bench).
PPI runs on the tasks as units: a task is labelled when at least k of its trials are; its
:math:`Y_t` is the estimator on its labelled trials' human labels and :math:`f_t` the same
estimator on the judge's verdicts for those same trials; an unlabelled task contributes the
estimator on the judge's verdicts for all its trials. Both have the same mean (trials of a task
are exchangeable, so the estimator's mean does not depend on how many trials it sees), which
is what makes the correction unbiased. Tasks are independent units, so the variance above
applies with one cluster per task. Assumption: labelled tasks are a random sample of the tasks
(label whole tasks at random; or sample trajectories at random when every task has as many
trials). Tasks with fewer than k trials are left out for that k, as in
:func:`trajudge.calibration.reliability`.

References
----------
Angelopoulos, Bates, Fannjiang, Jordan & Zrnic (2023), "Prediction-powered inference",
Science 382; Angelopoulos, Duchi & Zrnic (2023), "PPI++: Efficient Prediction-Powered
Inference", arXiv:2311.01453; Yao et al. (2024), "τ-bench", arXiv:2406.12045.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from trajudge.calibration._estimate import Estimate, FloatArray, as_1d, check_same_length, num
from trajudge.calibration.rates._corrected import corrected_pass_rate


@dataclass(frozen=True)
class PPIEstimate:
    """A PPI++ estimate beside the labels-only one and the judge's raw rate.

    ``ppi`` and ``labels_only`` carry normal intervals with the clustered variance of the
    module docstring (``n``: units behind them). ``judge_only`` is the judge's rate on all
    units (no interval: its error is bias, not noise). ``lam`` is the tuned
    :math:`\\lambda`. ``variance_ratio`` = Var(labels only) / Var(PPI): the factor by which
    the judge multiplies the labels' worth (``effective_labels`` = n_labeled x that).
    """

    ppi: Estimate
    labels_only: Estimate
    judge_only: float
    lam: float
    n_labeled: int
    n_unlabeled: int
    ppi_variance: float = math.nan
    labels_variance: float = math.nan

    @property
    def variance_ratio(self) -> float:
        if not self.ppi_variance > 0:
            return math.nan
        return float(self.labels_variance / self.ppi_variance)

    @property
    def effective_labels(self) -> float:
        return self.n_labeled * self.variance_ratio

    def to_dict(self) -> dict[str, Any]:
        return {
            "ppi": self.ppi.to_dict(),
            "labels_only": self.labels_only.to_dict(),
            "judge_only": num(self.judge_only),
            "lambda": num(self.lam),
            "n_labeled": self.n_labeled,
            "n_unlabeled": self.n_unlabeled,
            "variance_ratio": num(self.variance_ratio),
            "effective_labels": num(self.effective_labels),
            "ppi_variance": num(self.ppi_variance),
            "labels_variance": num(self.labels_variance),
        }


def _cluster_terms(
    y: FloatArray, f_lab: FloatArray, f_unl: FloatArray, g_lab: Any, g_unl: Any
) -> tuple[FloatArray, FloatArray, int]:
    """Per-cluster A_g (labelled Y part) and B_g (f part) of the module docstring, and the
    number of clusters with a labelled unit."""
    codes, _ = pd.factorize(np.concatenate([np.asarray(g_lab), np.asarray(g_unl)]))
    n, n_u = y.size, f_unl.size
    cl_lab, cl_unl = codes[:n], codes[n:]
    n_groups = int(codes.max()) + 1
    a = np.bincount(cl_lab, weights=(y - y.mean()) / n, minlength=n_groups).astype(np.float64)
    b = np.bincount(cl_lab, weights=(f_lab - f_lab.mean()) / n, minlength=n_groups).astype(float)
    if n_u:
        b -= np.bincount(cl_unl, weights=(f_unl - f_unl.mean()) / n_u, minlength=n_groups)
    return a, b, int(np.unique(cl_lab).size)


def ppi_mean(
    y: FloatArray,
    f_lab: FloatArray,
    f_unl: FloatArray,
    *,
    groups_lab: Any = None,
    groups_unl: Any = None,
    lam: float | None = None,
    level: float = 0.95,
) -> PPIEstimate:
    """PPI++ mean from labelled (y, f_lab) and unlabelled (f_unl) units (module docstring).

    Groups default to one cluster per unit. ``lam`` fixes :math:`\\lambda` (None: tuned).
    NaN estimates without labelled units; the labels-only interval is NaN with fewer than 2
    clusters.
    """
    n, n_u = int(y.size), int(f_unl.size)
    g_lab = np.arange(n) if groups_lab is None else np.asarray(groups_lab)
    g_unl = np.arange(n, n + n_u) if groups_unl is None else np.asarray(groups_unl)
    judge_only = float(np.r_[f_lab, f_unl].mean()) if n + n_u else math.nan
    if n == 0:
        nan = Estimate(math.nan, math.nan, math.nan, 0, level)
        return PPIEstimate(nan, nan, judge_only, math.nan, 0, n_u)
    a, b, lab_groups = _cluster_terms(y, f_lab, f_unl, g_lab, g_unl)
    n_groups = a.size
    if lam is None:
        bb = float(b @ b)
        lam = float(np.clip(a @ b / bb, 0.0, 1.0)) if bb > 0 else 0.0
    f_u_mean = float(f_unl.mean()) if n_u else 0.0
    value = float(np.mean(y - lam * f_lab) + lam * f_u_mean) if n_u else float(y.mean())
    if not n_u:
        lam = 0.0  # nothing unlabelled: PPI is the labels-only mean
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    correction = n_groups / (n_groups - 1) if n_groups > 1 else math.nan

    def interval(v: float, var: float, units: int) -> Estimate:
        half = z * math.sqrt(var) if var >= 0 else math.nan
        low, high = np.clip([v - half, v + half], 0.0, 1.0)
        return Estimate(v, float(low), float(high), units, level)

    ppi_var = correction * float(np.sum((a - lam * b) ** 2))
    lab_var = lab_groups / (lab_groups - 1) * float(np.sum(a**2)) if lab_groups > 1 else math.nan
    return PPIEstimate(
        ppi=interval(value, ppi_var, n + n_u),
        labels_only=interval(float(y.mean()), lab_var, n),
        judge_only=judge_only,
        lam=lam,
        n_labeled=n,
        n_unlabeled=n_u,
        ppi_variance=ppi_var,
        labels_variance=lab_var,
    )


def _binary(values: Any, name: str, *, allow_nan: bool) -> FloatArray:
    v = as_1d(values, name).astype(np.float64)
    ok = np.isin(v, (0.0, 1.0)) | (allow_nan & np.isnan(v))
    if not ok.all():
        raise ValueError(f"{name} must be 0/1" + (" or NaN (unlabelled)" if allow_nan else ""))
    return v


def ppi_pass_rate(
    verdict: npt.ArrayLike,
    label: npt.ArrayLike,
    *,
    tasks: npt.ArrayLike | None = None,
    lam: float | None = None,
    level: float = 0.95,
) -> PPIEstimate:
    """Pass rate from judge verdicts on all trajectories and labels on a random subset.

    Parameters
    ----------
    verdict : array-like of shape (N,)
        The judge's 0/1 verdict on every trajectory.
    label : array-like of shape (N,)
        The human 0/1 label, NaN where unlabelled. The labelled ones must be a random sample
        (not chosen by the verdict or by difficulty).
    tasks : array-like of shape (N,), optional
        Task of each trajectory: the variance is clustered by task (module docstring).
    lam : float, optional
        Fix :math:`\\lambda` instead of tuning it (0: labels only; 1: plain PPI).
    level : float
        Interval level.

    Returns
    -------
    PPIEstimate
        The trajectory-level pass rate (the unlabelled set is the trajectories without a
        label).

    Examples
    --------
    >>> v = [1, 1, 0, 1, 1, 0, 1, 1]
    >>> y = [1, 0, 0, 1, np.nan, np.nan, np.nan, np.nan]  # the judge passes one human fail
    >>> r = ppi_pass_rate(v, y, lam=1.0)
    >>> r.ppi.value, r.labels_only.value, r.judge_only  # 0.5 - 0.75 + 0.75; 2/4; 6/8
    (0.5, 0.5, 0.75)
    """
    v = _binary(verdict, "verdict", allow_nan=False)
    y = _binary(label, "label", allow_nan=True)
    check_same_length(verdict=v, label=y)
    lab = ~np.isnan(y)
    groups = None if tasks is None else as_1d(tasks, "tasks")
    if groups is not None:
        check_same_length(verdict=v, tasks=groups)
    return ppi_mean(
        y[lab],
        v[lab],
        v[~lab],
        groups_lab=None if groups is None else groups[lab],
        groups_unl=None if groups is None else groups[~lab],
        lam=lam,
        level=level,
    )


@dataclass(frozen=True)
class PPIPassK:
    """PPI++ pass^k per k (tasks as units), see the module docstring."""

    ks: list[int]
    estimates: dict[int, PPIEstimate] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        estimates = {str(k): e.to_dict() for k, e in self.estimates.items()}
        return {"ks": self.ks, "estimates": estimates}


def ppi_pass_hat_k(
    verdict: npt.ArrayLike,
    label: npt.ArrayLike,
    tasks: npt.ArrayLike,
    *,
    ks: Sequence[int] = (1, 2, 3, 4),
    lam: float | None = None,
    level: float = 0.95,
) -> PPIPassK:
    """pass^k of one verdict source, judge on every trial plus labels on sampled tasks.

    Parameters
    ----------
    verdict : array-like of shape (N,)
        The judge's 0/1 verdict on every trajectory (trial).
    label : array-like of shape (N,)
        Human 0/1 label, NaN where unlabelled. A task is labelled for k when at least k of its
        trials are; labelled tasks must be a random sample of the tasks.
    tasks : array-like of shape (N,)
        Task of each trajectory.
    ks, lam, level :
        The k values; fixed :math:`\\lambda` (None: tuned per k); interval level.

    Returns
    -------
    PPIPassK
        Per k a :class:`PPIEstimate` whose units are tasks: ``judge_only`` is the judge's
        pass^k over all tasks and ``labels_only`` the labelled tasks' human pass^k.

    Examples
    --------
    >>> v = [1, 1, 1, 1, 1, 0, 0, 0]
    >>> y = [1, 0, np.nan, np.nan, 1, 0, np.nan, np.nan]  # tasks a, c labelled (2 trials each)
    >>> r = ppi_pass_hat_k(v, y, list("aabbccdd"), ks=[2], lam=1.0).estimates[2]
    >>> # labelled a, c: Y = 0, 0; f = 1, 0. unlabelled b, d: f = 1, 0 -> 0 - 0.5 + 0.5
    >>> r.ppi.value, r.judge_only, r.n_labeled
    (0.0, 0.5, 2)
    """
    v = _binary(verdict, "verdict", allow_nan=False)
    y = _binary(label, "label", allow_nan=True)
    t = as_1d(tasks, "tasks")
    check_same_length(verdict=v, label=y, tasks=t)
    codes, _ = pd.factorize(pd.Series(t), sort=True)
    n_tasks = int(codes.max()) + 1 if codes.size else 0
    lab = ~np.isnan(y)

    def count(w: FloatArray) -> FloatArray:
        return np.bincount(codes, weights=w, minlength=n_tasks).astype(np.float64)

    m_all, c_judge_all = count(np.ones_like(v)), count(v)
    m_lab = count(lab.astype(float))
    c_human = count(np.where(lab, y, 0.0))
    c_judge_lab = count(np.where(lab, v, 0.0))
    out = PPIPassK(ks=sorted({int(k) for k in ks}))
    for k in out.ks:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        labelled = m_lab >= k
        unlabelled = ~labelled & (m_all >= k)

        def hat(c: FloatArray, m: FloatArray, k: int = k) -> FloatArray:
            from scipy.special import comb

            return np.asarray(comb(c, k) / comb(m, k), dtype=np.float64)

        est = ppi_mean(
            hat(c_human[labelled], m_lab[labelled]),
            hat(c_judge_lab[labelled], m_lab[labelled]),
            hat(c_judge_all[unlabelled], m_all[unlabelled]),
            lam=lam,
            level=level,
        )
        judge = hat(c_judge_all[m_all >= k], m_all[m_all >= k])
        out.estimates[k] = replace(est, judge_only=float(judge.mean()) if judge.size else math.nan)
    return out


def pass_rate_estimates(
    verdict: npt.ArrayLike,
    label: npt.ArrayLike,
    *,
    tasks: npt.ArrayLike | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """The pass rate four ways, side by side, with interval widths: what the judge buys.

    Rows: ``judge`` (the judge's raw rate on all trajectories, bootstrap interval),
    ``rogan_gladen`` (corrected with TPR / TNR measured on the labelled ones,
    :func:`trajudge.calibration.corrected_pass_rate`), ``labels_only`` and ``ppi``
    (:func:`ppi_pass_rate`, clustered by ``tasks`` when given). Columns: ``estimator, value,
    low, high, width, n_labeled`` (and ``lam`` for ``ppi``). The judge's raw interval only
    reflects sampling: its bias is what the other rows correct.

    Examples
    --------
    >>> v = [1, 1, 0, 1, 1, 0, 1, 1]
    >>> y = [1, 0, 0, 1, np.nan, np.nan, np.nan, np.nan]
    >>> t = pass_rate_estimates(v, y, n_boot=50)
    >>> t["estimator"].tolist()
    ['judge', 'rogan_gladen', 'labels_only', 'ppi']
    """
    ppi = ppi_pass_rate(verdict, label, tasks=tasks, level=level)
    rg = corrected_pass_rate(verdict, label, clusters=tasks, n_boot=n_boot, seed=seed, level=level)
    rows = [("judge", rg.raw), ("rogan_gladen", rg.corrected),
            ("labels_only", ppi.labels_only), ("ppi", ppi.ppi)]  # fmt: skip
    frame = pd.DataFrame(
        {
            "estimator": [name for name, _ in rows],
            "value": [e.value for _, e in rows],
            "low": [e.low for _, e in rows],
            "high": [e.high for _, e in rows],
            "width": [e.high - e.low for _, e in rows],
            "n_labeled": ppi.n_labeled,
        }
    )
    frame["lam"] = [math.nan, math.nan, math.nan, ppi.lam]
    return frame
