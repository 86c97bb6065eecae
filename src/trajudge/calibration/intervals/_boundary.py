r"""Intervals where the cluster bootstrap has nothing to resample.

A percentile bootstrap only moves when its resamples differ. A judge that agrees with all 48
labels gives the same confusion table, up to scale, in every resample, so its κ, TPR and TNR
came out as 1.00 [1.00, 1.00]; a judge that never passes as 0.00 [0.00, 0.00]. Zero observed
disagreements are not zero disagreements: a judge erring on 5% of items agrees on all of 48
in 8.5% of samples. The intervals below replace the bootstrap's in those cases only; the BCa
bootstrap interval (:func:`trajudge.calibration.bca_interval`) stands everywhere else.

When they apply
    A rate (a proportion of items or tasks: TPR, TNR, agreement, pass^k, flip rate, win
    rate) at exactly 0 or 1, or whose bootstrap interval has zero width (one cluster, or
    clusters all alike); a rate's bootstrap interval left undefined (NaN: too many resamples
    without its denominator) away from 0 and 1 stays undefined. κ and AC1 whose bootstrap
    interval has zero width: no disagreement, one rater constant (a judge that never passes),
    one cluster. Their undefined intervals stay undefined, even at the boundary: resamples
    that too often lack a class say the margins are too uncertain for the bounds below,
    which hold the margins at their estimates.

Rates: Clopper-Pearson on the effective number of clusters
    The Clopper-Pearson (exact binomial) interval for ``rate * n_eff`` successes in ``n_eff``
    trials, from beta quantiles (``scipy.stats.beta``, which takes a non-integer ``n_eff``),
    with :math:`n_\mathrm{eff} = (\sum_j m_j)^2 / \sum_j m_j^2`, :math:`m_j` the denominator
    of cluster j (its labelled passes, for TPR). That is Kish's effective sample size
    ``n / deff`` with ``deff = 1 + (m_w - 1) ICC`` (:math:`m_w = \sum m_j^2 / \sum m_j`) at
    ICC = 1: equal clusters count as the number of clusters. The ICC of the errors cannot be
    estimated here (with no disagreement the error indicator does not vary), so it is taken
    at its upper bound, which keeps the coverage when a judge errs on whole tasks, as judges
    do (trials of a task are alike). Clopper-Pearson rather than Wilson because it is exact:
    its coverage is at least nominal for every true rate, the property that fails at the
    boundary. The price: all 48 labels of 12 four-trial tasks agreed gives [0.74, 1.00],
    where 48 independent items would give [0.93, 1.00], and can be wider than the bootstrap
    interval after one disagreement (which shows the bootstrap how alike a task's trials are).

κ with no disagreement: through the observed disagreement
    :math:`\kappa = 1 - D_o / D_e`, :math:`D_o` the weighted share of disagreements (weights
    scaled to [0, 1], so a disagreement counts at most 1), :math:`D_e` the chance
    disagreement of the two raters' margins. :math:`D_o` gets the rate interval above (on the
    clusters' row totals) and :math:`D_e` is held at its estimate:
    :math:`\kappa \in [1 - D_o^{hi} / D_e,\ 1 - D_o^{lo} / D_e]`. Unweighted, that is
    :math:`(p_o - p_e)/(1 - p_e)` with :math:`p_o` from Clopper-Pearson and :math:`p_e` fixed.
    Holding :math:`p_e` leaves out the margins' own uncertainty, which is second order next
    to that of :math:`D_o` at the boundary (the coverage tests measure the result).

κ with one rater constant
    Its κ is 0 by definition (:math:`p_o = p_e`): a judge that always fails agrees exactly as
    often as chance. Yet a judge that passes a few items could have passed none here, and its
    κ need not be 0: if its passes were all right, it is above. The share q of calls in the
    class it never used is at most :math:`q^{hi}`, the Clopper-Pearson upper bound for 0 of
    ``n_eff``; with the other rater's margins fixed (share :math:`\pi` in that class), κ lies
    between the κ of a judge whose q calls are all wrong and one whose q calls are all right:

    .. math:: \kappa_{min} = \frac{-2\pi q}{q + \pi - 2\pi q}\ (q \le 1 - \pi),\quad
              \kappa_{max} = \frac{2 q (1 - \pi)}{q + \pi - 2\pi q}\ (q \le \pi)

    at :math:`q = q^{hi}` (both are monotone in q; past those caps they are -2π(1-π)/(1 -
    2π(1-π)) and 1). So the figure stays "κ 0.00" with an interval that says how far from 0 a
    judge that had few chances to show otherwise could be. With more than two categories the
    bound :math:`|\kappa| \le 2q / (D_0 - q)` is used (:math:`D_0` the scaled disagreement
    of the constant rater with the other's margins: each of :math:`D_o` and :math:`D_e`
    moves by at most q), and no interval when :math:`q \ge D_0`. When both raters are
    constant κ is undefined (the same class; NaN already) or 0 with every item a
    disagreement: no interval, since neither rater varied.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from trajudge.calibration._estimate import Estimate, FloatArray
from trajudge.calibration.agreement._agreement import Weights, _weight_matrix

_TOL = 1e-12


def effective_clusters(sizes: npt.ArrayLike) -> float:
    """Kish's effective sample size of clusters of these sizes at ICC = 1: (Σm)² / Σm².

    Clusters of size 0 (no row of the rate's denominator) are left out; 0.0 without any.

    >>> effective_clusters([4, 4, 4]), effective_clusters([1, 3])  # 16 / 10
    (3.0, 1.6)
    """
    m = np.asarray(sizes, dtype=np.float64)
    m = m[m > 0]
    return float(m.sum() ** 2 / np.sum(m**2)) if m.size else 0.0


def clopper_pearson_lower(
    successes: npt.ArrayLike, n: npt.ArrayLike, *, alpha: float
) -> FloatArray:
    r"""One-sided exact lower confidence bound of a binomial proportion, level :math:`1-\alpha`.

    .. math:: L = B^{-1}(\alpha;\, x,\, n - x + 1), \qquad L = 0 \text{ when } x = 0

    with :math:`B^{-1}` the Beta quantile. Vectorised; NaN where ``n == 0``.

    Examples
    --------
    >>> round(float(clopper_pearson_lower(29, 29, alpha=0.05)), 4)  # 0.05 ** (1 / 29)
    0.9019
    """
    x = np.asarray(successes, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        from scipy.stats import beta  # imported here: scipy.stats takes a while to load

        low = beta.ppf(alpha, x, m - x + 1.0)
    low = np.where(x == 0, 0.0, low)
    return np.asarray(np.where(m == 0, np.nan, low), dtype=np.float64)


def clopper_pearson(successes: float, n: float, *, level: float = 0.95) -> tuple[float, float]:
    """Two-sided Clopper-Pearson interval of ``successes`` in ``n`` trials (non-integer allowed).

    Each end is a one-sided bound at ``(1 - level) / 2`` (:func:`clopper_pearson_lower`, the
    upper end by symmetry: 1 - the lower bound of the failures); ``(nan, nan)`` for n <= 0.

    >>> [round(x, 4) for x in clopper_pearson(10, 10)]  # 0.025 ** (1 / 10)
    [0.6915, 1.0]
    """
    if not n > 0:
        return math.nan, math.nan
    x = min(max(float(successes), 0.0), float(n))
    tail = (1.0 - level) / 2.0
    low = float(clopper_pearson_lower(x, n, alpha=tail))
    high = 1.0 - float(clopper_pearson_lower(n - x, n, alpha=tail))
    return low, high


def rate_interval(
    numerators: npt.ArrayLike, denominators: npt.ArrayLike, *, level: float = 0.95
) -> tuple[float, float]:
    """Clopper-Pearson interval of ``Σ numerators / Σ denominators`` on the effective number of
    clusters (:func:`effective_clusters` of the denominators); one entry per cluster.

    >>> [round(x, 4) for x in rate_interval([4, 4, 4], [4, 4, 4])]  # 3 tasks: 0.025 ** (1/3)
    [0.2924, 1.0]
    """
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    total = float(den.sum())
    if not total > 0:
        return math.nan, math.nan
    n_eff = effective_clusters(den)
    return clopper_pearson(float(num.sum()) / total * n_eff, n_eff, level=level)


def collapsed(est: Estimate) -> bool:
    """The bootstrap interval has zero width: every resample gave the same value."""
    return not math.isnan(est.low) and not math.isnan(est.high) and est.high - est.low <= _TOL


def boundary_rate(
    est: Estimate, numerators: npt.ArrayLike, denominators: npt.ArrayLike
) -> Estimate:
    """``est`` with the interval of :func:`rate_interval` where the bootstrap cannot show
    uncertainty: the rate at 0 or 1, or a zero-width interval (module docstring).

    Left as it is when the per-cluster sums are not a proportion (a numerator below 0 or
    above its denominator: e.g. a mean score) or the estimate is undefined.
    """
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    if math.isnan(est.value) or num.shape != den.shape or num.size == 0:
        return est
    if (num < -_TOL).any() or (num > den * (1.0 + _TOL) + _TOL).any():
        return est
    at_edge = abs(est.value) <= _TOL or abs(est.value - 1.0) <= _TOL
    if not (at_edge or collapsed(est)):
        return est
    low, high = rate_interval(num, den, level=est.level)
    return replace(est, low=low, high=high)


def _constant_rater_kappa(
    share: FloatArray, used: int, w: FloatArray, q: float
) -> tuple[float, float]:
    """κ bounds for a rater that used only category ``used`` while the other rater's margins
    are ``share``, given at most ``q`` of its calls could fall elsewhere (module docstring)."""
    if share.size == 2:
        pi = float(share[1 - used])  # the other rater's share of the class never used
        q_hi, q_lo = min(q, pi), min(q, 1.0 - pi)
        high = 2.0 * q_hi * (1.0 - pi) / (q_hi + pi - 2.0 * pi * q_hi)
        low = -2.0 * pi * q_lo / (q_lo + pi - 2.0 * pi * q_lo)
        return low, min(1.0, high)
    d0 = float(share @ w[:, used])
    if q >= d0:
        return math.nan, math.nan
    bound = 2.0 * q / (d0 - q)
    return -bound, min(1.0, bound)


def kappa_interval(
    counts: npt.ArrayLike, *, weights: Weights = None, level: float = 0.95
) -> tuple[float, float]:
    """The κ interval of the module docstring from per-cluster confusion counts (m, K, K).

    Examples
    --------
    >>> c = np.zeros((12, 2, 2)); c[:6, 0, 0] = 4; c[6:, 1, 1] = 4  # 48 agreements, 12 tasks
    >>> low, high = kappa_interval(c)  # D_o <= 1 - 0.025 ** (1/12), D_e = 1/2
    >>> round(low, 4), high
    (0.4707, 1.0)
    """
    c = np.asarray(counts, dtype=np.float64)
    k = c.shape[-1]
    table = c.sum(axis=0)
    n = float(table.sum())
    if not n > 0 or k < 2:
        return math.nan, math.nan
    w = _weight_matrix(k, weights)
    w = w / w.max()  # κ does not change with the weights' scale; a disagreement counts <= 1
    rows, cols = table.sum(axis=1) / n, table.sum(axis=0) / n
    n_eff = effective_clusters(c.sum(axis=(1, 2)))
    row_used, col_used = np.flatnonzero(rows > 0), np.flatnonzero(cols > 0)
    if row_used.size == 1 and col_used.size == 1:
        return math.nan, math.nan
    if row_used.size == 1 or col_used.size == 1:
        q = clopper_pearson(0.0, n_eff, level=level)[1]
        if col_used.size == 1:
            return _constant_rater_kappa(rows, int(col_used[0]), w, q)
        return _constant_rater_kappa(cols, int(row_used[0]), w.T, q)
    expected = float(rows @ w @ cols)
    d_low, d_high = clopper_pearson(float(np.sum(w * table)) / n * n_eff, n_eff, level=level)
    return 1.0 - d_high / expected, 1.0 - d_low / expected


def _tables(counts: npt.ArrayLike) -> FloatArray:
    """Per-cluster confusion counts as (m, K, K), from that shape or flattened (m, K*K)."""
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim == 2:
        k = math.isqrt(c.shape[1])
        c = c.reshape(c.shape[0], k, k)
    return c


def boundary_kappa(est: Estimate, counts: npt.ArrayLike, *, weights: Weights = None) -> Estimate:
    """``est`` with the interval of :func:`kappa_interval` where the bootstrap cannot show
    uncertainty: its interval has zero width (no disagreement, a constant rater, one cluster).

    ``counts``: per-cluster confusion counts, shape (m, K, K) or flattened (m, K*K).
    """
    c = _tables(counts)
    if math.isnan(est.value) or c.shape[0] == 0:
        return est
    if not collapsed(est):
        return est
    low, high = kappa_interval(c, weights=weights, level=est.level)
    return replace(est, low=low, high=high)


def boundary_ac1(est: Estimate, counts: npt.ArrayLike) -> Estimate:
    """``est`` (Gwet's AC1) with an interval through the agreement's, where the bootstrap
    cannot show uncertainty: its interval has zero width (every item agreed, one cluster).

    ``AC1 = (p_a - p_e) / (1 - p_e)`` with ``p_a`` from :func:`rate_interval` and ``p_e``
    held at its estimate, as for κ.
    """
    c = _tables(counts)
    if math.isnan(est.value) or c.shape[0] == 0:
        return est
    if not collapsed(est):
        return est
    agree, total = np.trace(c, axis1=1, axis2=2), c.sum(axis=(1, 2))
    pe = _ac1_chance(c.sum(axis=0))
    low, high = rate_interval(agree, total, level=est.level)
    return replace(est, low=(low - pe) / (1.0 - pe), high=(high - pe) / (1.0 - pe))


def _ac1_chance(table: FloatArray) -> float:
    """Gwet's chance agreement of a K x K table: Σ π_k (1 - π_k) / (K - 1)."""
    n = float(table.sum())
    pi = (table.sum(axis=0) + table.sum(axis=1)) / (2.0 * n)
    return float(np.sum(pi * (1.0 - pi)) / (table.shape[0] - 1))


def _kappa_2x2(p: FloatArray) -> FloatArray:
    """κ of 2 x 2 proportion tables ``(..., 4)`` ordered (0,0), (0,1), (1,0), (1,1)."""
    po = p[..., 0] + p[..., 3]
    rows, cols = p[..., 2] + p[..., 3], p[..., 1] + p[..., 3]
    pe = rows * cols + (1.0 - rows) * (1.0 - cols)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray((po - pe) / (1.0 - pe), dtype=np.float64)


def kappa_shift(counts: npt.ArrayLike, q: float) -> tuple[float, float]:
    r"""How far κ can move, down and up, when at most a share ``q`` of the second rater's
    verdicts change (the first rater's fixed): ``(min Δκ, max Δκ)``.

    Two categories: exact. A change moves mass from one cell of a row to the other, at most
    the cell's share, q in all; κ is then a ratio of two linear functions of the four moved
    shares (p_e is linear in the second rater's margin), so its extremes lie at vertices of
    that polytope, all of which are tried. More categories: the bound
    :math:`|\Delta\kappa| \le q (D_o + D_e) / (D_e (D_e - q))` (:math:`D_o`, :math:`D_e`
    the scaled observed and chance disagreements each move by at most q), NaN when q >= D_e.

    >>> c = np.array([[[5.0, 0.0], [0.0, 5.0]]])  # κ = 1; 10% of verdicts wrong: κ = 0.8
    >>> [round(x, 4) for x in kappa_shift(c, 0.1)]
    [-0.2, 0.0]
    """
    c = _tables(counts)
    table = c.sum(axis=0)
    n = float(table.sum())
    if table.shape[0] != 2:
        w = _weight_matrix(table.shape[0], None)
        rows, cols = table.sum(axis=1) / n, table.sum(axis=0) / n
        d_o, d_e = float(np.sum(w * table)) / n, float(rows @ w @ cols)
        if q >= d_e:
            return math.nan, math.nan
        bound = q * (d_o + d_e) / (d_e * (d_e - q))
        return -bound, bound
    p = table.ravel() / n
    # moves (0,0)->(0,1), (0,1)->(0,0), (1,0)->(1,1), (1,1)->(1,0): each at most its cell
    source, target = np.array([0, 1, 2, 3]), np.array([1, 0, 3, 2])
    vertices = []
    for at_cap in itertools.product((0.0, 1.0), repeat=4):
        base = np.asarray(at_cap) * p[source]
        for free in (None, 0, 1, 2, 3):
            m = base.copy()
            if free is not None:
                m[free] = 0.0
                m[free] = min(p[source[free]], q - m.sum())
            if m.min() >= 0.0 and m.sum() <= q + _TOL:
                vertices.append(m)
    moved = np.asarray(vertices)
    tables = np.tile(p, (len(moved), 1))
    tables[:, source] -= moved
    tables[:, target] += moved
    shift = _kappa_2x2(tables) - float(_kappa_2x2(p))
    shift = shift[~np.isnan(shift)]
    return (float(shift.min()), float(shift.max())) if shift.size else (math.nan, math.nan)
