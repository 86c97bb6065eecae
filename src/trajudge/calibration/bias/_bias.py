"""Bias probes for one judge: position, verbosity, self-preference, central tendency, stability.

Each probe returns a :class:`Probe` (estimate, clustered bootstrap interval, ``flagged`` and
the rule behind it) or None when the data cannot answer the question (no second order, no
lengths, no own-family items): that is a statement about what was logged, not about the judge.

A probe flags only when the whole 95% interval leaves a band of values an unbiased judge could
plausibly show (a region of practical equivalence, as in judgekit), so a tiny but certain
deviation on a large sample does not raise an alarm. The bands are stated in ``BANDS``.

Verdicts are pass/fail (1 = pass, or "the first-listed candidate wins" in pairwise mode) in
canonical orientation: in order ``ba`` the verdict is already mapped back.

Every probe takes ``clusters`` (the task of each row): its interval then resamples tasks, since
trials of one task are correlated; without it, items are resampled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from trajudge.calibration._estimate import Estimate, FloatArray, safe_divide
from trajudge.calibration._validation import as_1d, as_binary, as_float, check_same_length
from trajudge.calibration.intervals._bootstrap import (
    cluster_bootstrap,
    item_codes,
    per_item_sums,
    proportion_bootstrap,
    ratio_statistic,
)

#: Innocent bands (estimate values a defect-free judge could show); a probe flags when its
#: whole interval lies outside its band (or, one-sided, below it).
BANDS: dict[str, tuple[float, float]] = {
    "position": (0.45, 0.55),  # share of verdicts that went to the first-shown side
    "order_shift": (-0.25, 0.25),  # score units the candidate gains when shown second
    "verbosity": (-0.10, 0.10),  # partial rank correlation of score and length
    "self_preference": (-0.10, 0.10),  # pass-rate excess over humans on own-family items
    "central_tendency": (0.90, np.inf),  # judge spread / human spread; flags below 0.90
    "stability": (0.90, np.inf),  # agreeing share of sample pairs; flags below 0.90
}


@dataclass(frozen=True)
class Probe:
    """One bias probe: an estimate with its interval, whether it is flagged, and why."""

    name: str
    estimate: Estimate
    flagged: bool
    rule: str
    detail: str
    extra: dict[str, Estimate] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            **self.estimate.to_dict(),
            "flagged": self.flagged,
            "rule": self.rule,
            "detail": self.detail,
            "extra": {k: v.to_dict() for k, v in self.extra.items()},
        }


def _probe(name: str, est: Estimate, detail: str, **extra: Estimate) -> Probe:
    lo, hi = BANDS[name]
    flagged = bool(est.high < lo or est.low > hi)  # False when the interval is NaN
    if np.isinf(hi):
        rule = f"flagged when the whole 95% interval lies below {lo:g}"
    else:
        rule = f"flagged when the whole 95% interval lies outside [{lo:g}, {hi:g}]"
    return Probe(name, est, flagged, rule, detail, dict(extra))


def _frame(**cols: Any) -> pd.DataFrame:
    arrays = {k: as_1d(v, k) if np.ndim(v) else v for k, v in cols.items()}
    check_same_length(**{k: v for k, v in arrays.items() if np.ndim(v)})
    return pd.DataFrame(arrays)


def _codes(frame: pd.DataFrame) -> tuple[npt.NDArray[np.int64], int]:
    """Resampling codes for the rows of a derived frame: its ``cluster`` column (the task),
    else its ``item`` column."""
    return item_codes((frame["cluster"] if "cluster" in frame else frame["item"]).to_numpy())


def _clustered(cols: dict[str, Any], clusters: Any) -> dict[str, Any]:
    return cols if clusters is None else {**cols, "cluster": clusters}


def _both_orders(
    values: FloatArray,
    order: Any,
    items: Any,
    samples: Any,
    clusters: Any,
    aggfunc: Literal["first", "mean"],
) -> pd.DataFrame | None:
    """One row per (item, sample) judged in both orders, columns ``ab`` and ``ba`` (and
    ``cluster`` when given); None when there is no such pair. Rows without a value are left
    out before pairing."""
    data = {"v": values, "order": order, "item": items}
    data["sample"] = np.zeros(len(values), dtype=int) if samples is None else samples
    df = _frame(**_clustered(data, clusters)).dropna(subset=["v"])
    wide = df.pivot_table(index=["item", "sample"], columns="order", values="v", aggfunc=aggfunc)
    if "ab" not in wide.columns or "ba" not in wide.columns:
        return None
    wide = wide.dropna(subset=["ab", "ba"]).reset_index()
    if clusters is not None:
        wide["cluster"] = wide["item"].map(df.groupby("item")["cluster"].first()).to_numpy()
    return None if wide.empty else wide


def position_probe(
    verdict: Any,
    order: Any,
    items: Any,
    *,
    samples: Any = None,
    clusters: Any = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> Probe | None:
    """First-position pick rate and flip rate under swap.

    Only (item, sample) pairs judged in both orders count. In order ``ab`` a pass is a pick of
    the first-shown side, in ``ba`` a fail is, so::

        first_pick = (#pass in ab + #fail in ba) / #verdicts      (0.5 for an unbiased judge)
        flip_rate  = #pairs whose ab and ba verdicts differ / #pairs

    The estimate is ``first_pick`` (flagged outside ``BANDS["position"]``); ``flip_rate`` is in
    ``extra`` and is descriptive: a fair but noisy judge also flips close pairs.

    Returns None when no (item, sample) was judged in both orders.
    """
    v = as_binary(verdict, "verdict", allow_missing=True)
    wide = _both_orders(v, order, items, samples, clusters, "first")
    if wide is None:
        return None
    ab, ba = wide["ab"].to_numpy(float), wide["ba"].to_numpy(float)
    codes, n_items = _codes(wide)
    ones = np.ones_like(ab)
    sums = per_item_sums(codes, n_items, np.column_stack([ab + (1 - ba), 2 * ones]))
    first = proportion_bootstrap(sums, n_boot=n_boot, seed=seed)
    flips = per_item_sums(codes, n_items, np.column_stack([(ab != ba).astype(float), ones]))
    flip = proportion_bootstrap(flips, n_boot=n_boot, seed=seed)
    detail = (
        f"picked the first-shown side in {first.value:.1%} of {2 * len(ab)} verdicts; "
        f"{flip.value:.1%} of {len(ab)} pairs flipped under swap"
    )
    return _probe("position", first, detail, flip_rate=flip)


def first_position_probe(first_position: Estimate) -> Probe:
    """The position probe of a pairwise judge, from its first-position pick rate.

    ``first_position`` is the share of decisive verdicts (ties left out) that picked the side
    shown first, as :func:`first_position_rate` estimates it; flagged, like
    :func:`position_probe`, when its whole interval lies outside ``BANDS["position"]``.
    """
    detail = (
        f"picked the first-shown side in {first_position.value:.1%} of its decisive "
        f"verdicts ({first_position.n} items)"
    )
    return _probe("position", first_position, detail)


def order_shift_probe(
    score: Any,
    order: Any,
    items: Any,
    *,
    samples: Any = None,
    clusters: Any = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> Probe | None:
    """How far a score moves with presentation order, in score units.

    For each (item, sample) judged in both orders, ``d = score(ba) - score(ab)``: in reference
    mode the candidate's score when shown second minus when shown first (in pairwise mode the
    mapped-back preference score). The estimate is the mean ``d`` with an interval by items::

        order_shift = sum(d) / #pairs                              (0 for an unbiased judge)

    Flagged when the whole interval lies outside ``BANDS["order_shift"]`` (a quarter of a
    scale point). Unlike the verdict-level :func:`position_probe`, this sees a judge whose
    scores move with position but stay on one side of the pass threshold.

    >>> p = order_shift_probe([1, 2, 1, 2, 1, 2], ["ab", "ba"] * 3, ["x", "x", "y", "y", "z", "z"],
    ...                       n_boot=200)
    >>> p.estimate.value, p.flagged  # every candidate gains one point when shown second
    (1.0, True)

    Returns None when no (item, sample) was judged in both orders.
    """
    wide = _both_orders(as_float(score, "score"), order, items, samples, clusters, "mean")
    if wide is None:
        return None
    d = wide["ba"].to_numpy(float) - wide["ab"].to_numpy(float)
    codes, n_items = _codes(wide)
    sums = per_item_sums(codes, n_items, np.column_stack([d, np.ones_like(d)]))
    est, _ = cluster_bootstrap(sums, ratio_statistic, n_boot=n_boot, seed=seed)
    detail = (
        f"scores moved by {est.value:+.2f} on average when the candidate was shown second "
        f"instead of first ({len(d)} pairs)"
    )
    return _probe("order_shift", est, detail)


def _partial_corr(t: FloatArray) -> FloatArray:
    # t[..., :] = n, sx, sy, sz, sxx, syy, szz, sxy, sxz, syz
    n = t[..., 0]
    mx, my, mz = (safe_divide(t[..., i], n) for i in (1, 2, 3))
    cxx, cyy, czz = (safe_divide(t[..., i], n) - m * m for i, m in ((4, mx), (5, my), (6, mz)))
    cxy = safe_divide(t[..., 7], n) - mx * my
    cxz = safe_divide(t[..., 8], n) - mx * mz
    cyz = safe_divide(t[..., 9], n) - my * mz
    eps = 1e-12 * np.maximum(czz, 1.0)
    z_const = czz <= eps
    # residual (co)variances after regressing x and y on z (z constant: nothing to remove)
    beta_den = np.where(z_const, 1.0, czz)
    rxx = cxx - np.where(z_const, 0.0, cxz * cxz / beta_den)
    ryy = cyy - np.where(z_const, 0.0, cyz * cyz / beta_den)
    rxy = cxy - np.where(z_const, 0.0, cxz * cyz / beta_den)
    return safe_divide(rxy, np.sqrt(np.clip(rxx, 0, None) * np.clip(ryy, 0, None)))


def verbosity_probe(
    score: Any,
    length: Any,
    human: Any,
    items: Any,
    *,
    clusters: Any = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> Probe | None:
    r"""Partial rank correlation of the judge's score with length, the human label held fixed.

    Longer trajectories are often genuinely better, so the raw score-length correlation mixes
    quality with verbosity; holding the human label fixed leaves the preference for length.
    With x, y, z the average ranks (computed once on all rows) of score, length and human label:

    .. math:: r_{xy\cdot z} = \frac{r_{xy} - r_{xz} r_{yz}}{\sqrt{(1-r_{xz}^2)(1-r_{yz}^2)}}

    A constant human label has nothing to hold fixed: the plain correlation is returned. NaN
    when score or length is constant. Returns None with fewer than 3 rows that have a length.
    """
    data = {
        "x": as_float(score, "score"),
        "y": as_float(length, "length"),
        "z": as_float(human, "human"),
        "item": items,
    }
    df = _frame(**_clustered(data, clusters)).dropna()
    if len(df) < 3:
        return None
    from scipy.stats import rankdata

    x, y, z = (rankdata(df[c].to_numpy(float)) for c in ("x", "y", "z"))
    codes, n_items = _codes(df)
    cols = [np.ones_like(x), x, y, z, x * x, y * y, z * z, x * y, x * z, y * z]
    sums = per_item_sums(codes, n_items, np.column_stack(cols))
    est, _ = cluster_bootstrap(sums, _partial_corr, n_boot=n_boot, seed=seed)
    return _probe("verbosity", est, f"score-length partial rank correlation {est.value:+.3f}")


def self_preference_probe(
    verdict: Any,
    human: Any,
    own: Any,
    items: Any,
    *,
    clusters: Any = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> Probe | None:
    """Pass-rate excess over humans on items whose agent is of the judge's own model family.

    ``gap_own = mean(verdict - human | own family)``. When other-family rows exist the estimate
    is ``gap_own - gap_other`` (a judge lenient on everyone is not self-preferring); without
    them it is ``gap_own`` alone, as ``detail`` says. Returns None without own-family rows.
    """
    data = {
        "v": as_binary(verdict, "verdict", allow_missing=True),
        "h": as_binary(human, "human", allow_missing=True),
        "own": as_binary(own, "own", allow_missing=True),
        "item": items,
    }
    df = _frame(**_clustered(data, clusters)).dropna()
    own_b = df["own"].to_numpy(float) == 1
    if not own_b.any():
        return None
    d = df["v"].to_numpy(float) - df["h"].to_numpy(float)
    codes, n_items = _codes(df)
    o = own_b.astype(float)
    sums = per_item_sums(codes, n_items, np.column_stack([d * o, o, d * (1 - o), 1 - o]))
    has_other = bool((~own_b).any())

    def stat(t: FloatArray) -> FloatArray:
        gap = safe_divide(t[..., 0], t[..., 1])
        return gap - safe_divide(t[..., 2], t[..., 3]) if has_other else gap

    est, _ = cluster_bootstrap(sums, stat, n_boot=n_boot, seed=seed)
    base = "minus the gap on other-family items" if has_other else "(no other-family items)"
    detail = f"judge-minus-human pass rate on {int(o.sum())} own-family rows {base}"
    return _probe("self_preference", est, f"{detail}: {est.value:+.3f}")


def central_tendency_probe(
    score: Any,
    human: Any,
    items: Any,
    *,
    clusters: Any = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> Probe | None:
    """Ratio of the judge's score spread to the human label spread, ``sd(score) / sd(human)``.

    Below 1 the judge hugs the middle of the scale. NaN when the human labels are constant.
    Returns None with fewer than 3 rows.
    """
    data = {"x": as_float(score, "score"), "y": as_float(human, "human"), "item": items}
    df = _frame(**_clustered(data, clusters)).dropna()
    if len(df) < 3:
        return None
    x, y = df["x"].to_numpy(float), df["y"].to_numpy(float)
    codes, n_items = _codes(df)
    sums = per_item_sums(codes, n_items, np.column_stack([np.ones_like(x), x, x * x, y, y * y]))

    def stat(t: FloatArray) -> FloatArray:
        n = t[..., 0]
        vx = safe_divide(t[..., 2], n) - safe_divide(t[..., 1], n) ** 2
        vy = safe_divide(t[..., 4], n) - safe_divide(t[..., 3], n) ** 2
        return np.sqrt(safe_divide(np.clip(vx, 0, None), np.where(vy > 1e-12, vy, 0.0)))

    est, _ = cluster_bootstrap(sums, stat, n_boot=n_boot, seed=seed)
    return _probe("central_tendency", est, f"judge spread is {est.value:.2f}x the human spread")


def stability_probe(
    verdict: Any,
    order: Any,
    items: Any,
    *,
    clusters: Any = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> Probe | None:
    """Agreement of repeated samples of the same item and order.

    For a group of m samples with a passes, ``C(a,2) + C(m-a,2)`` of its ``C(m,2)`` sample
    pairs agree; the estimate is agreeing pairs / all pairs over groups with m >= 2.
    Returns None when no item was sampled twice in the same order.
    """
    data = {"v": as_binary(verdict, "verdict"), "order": order, "item": items}
    df = _frame(**_clustered(data, clusters))
    keys = ["item", "order"] + (["cluster"] if clusters is not None else [])
    g = df.groupby(keys, sort=False)["v"].agg(["sum", "size"]).reset_index()
    g = g[g["size"] >= 2]
    if g.empty:
        return None
    a, m = g["sum"].to_numpy(float), g["size"].to_numpy(float)
    agree = a * (a - 1) / 2 + (m - a) * (m - a - 1) / 2
    codes, n_items = _codes(g)
    sums = per_item_sums(codes, n_items, np.column_stack([agree, m * (m - 1) / 2]))
    est = proportion_bootstrap(sums, n_boot=n_boot, seed=seed)
    detail = f"{est.value:.1%} of sample pairs agree over {len(g)} (item, order) groups"
    return _probe("stability", est, detail)
