"""Judge drift: two judges (or two versions of one) on the same pinned anchor items.

Every figure is paired: both judges are measured on the same items, against the same labels,
and every bootstrap resample draws the same tasks for both. The difference of two kappas from
two independent bootstraps would be far wider than it needs to be: the items that are hard for
one version are hard for the other, and the paired resample keeps that correlation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trajudge.calibration._estimate import Estimate, FloatArray, safe_divide
from trajudge.calibration._validation import as_1d, as_binary, check_same_length
from trajudge.calibration.agreement._agreement import kappa_from_counts
from trajudge.calibration.intervals._bootstrap import (
    SumStatistic,
    cluster_bootstrap_many,
    item_codes,
    per_item_sums,
)
from trajudge.calibration.intervals._boundary import boundary_kappa
from trajudge.calibration.rates._reliability import pass_hat_k

# column layout of the per-task sums
_OLD_TABLE, _NEW_TABLE = slice(0, 4), slice(4, 8)
_OLD_PASS, _NEW_PASS, _BOTH, _CHANGED, _DOWN, _UP = 8, 9, 10, 11, 12, 13
_FIXED = 14


@dataclass(frozen=True)
class Drift:
    """Paired comparison of an old and a new judge on the same items.

    ``kappa_old`` / ``kappa_new`` are each judge's Cohen's kappa against the labels (items
    with a label), ``kappa_diff`` is new minus old; ``pass_rate_*`` the share of items each
    passes, ``changed`` the share of items whose verdict changed, ``n_down`` / ``n_up`` the
    items the new judge fails where the old one passed and the reverse; ``pass_hat`` maps k to
    ``(old, new, new - old)`` pass^k over tasks (tasks with at least k judged trials). Every
    interval comes from one task-clustered bootstrap in which both judges see the same
    resampled tasks.
    """

    kappa_old: Estimate
    kappa_new: Estimate
    kappa_diff: Estimate
    pass_rate_old: Estimate
    pass_rate_new: Estimate
    pass_rate_diff: Estimate
    changed: Estimate
    n_items: int
    n_labeled: int
    n_tasks: int
    n_down: int
    n_up: int
    pass_hat: dict[int, tuple[Estimate, Estimate, Estimate]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kappa": {
                "old": self.kappa_old.to_dict(),
                "new": self.kappa_new.to_dict(),
                "diff": self.kappa_diff.to_dict(),
            },
            "pass_rate": {
                "old": self.pass_rate_old.to_dict(),
                "new": self.pass_rate_new.to_dict(),
                "diff": self.pass_rate_diff.to_dict(),
            },
            "changed": self.changed.to_dict(),
            "n_items": self.n_items,
            "n_labeled": self.n_labeled,
            "n_tasks": self.n_tasks,
            "n_down": self.n_down,
            "n_up": self.n_up,
            "pass^k": {
                str(k): {"old": o.to_dict(), "new": n.to_dict(), "diff": d.to_dict()}
                for k, (o, n, d) in self.pass_hat.items()
            },
        }


def _table(x: FloatArray, cols: slice) -> FloatArray:
    return x[..., cols].reshape(*x.shape[:-1], 2, 2)


def _task_hats(
    codes: np.ndarray[Any, Any], n_tasks: int, old: FloatArray, new: FloatArray, k: int
) -> FloatArray:
    """Per task: pass^k of each judge (0 where fewer than k trials) and whether it counts."""
    n = np.bincount(codes, minlength=n_tasks)
    c_old = np.bincount(codes, weights=old, minlength=n_tasks).astype(int)
    c_new = np.bincount(codes, weights=new, minlength=n_tasks).astype(int)
    out = np.zeros((n_tasks, 3))
    for t in range(n_tasks):
        if n[t] >= k:
            out[t] = (
                pass_hat_k(int(n[t]), int(c_old[t]), k),
                pass_hat_k(int(n[t]), int(c_new[t]), k),
                1.0,
            )
    return out


def paired_drift(
    *,
    labels: object,
    old: object,
    new: object,
    tasks: object,
    ks: Sequence[int] = (1,),
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Drift:
    """Compare an old and a new judge's pass/fail verdicts on the same anchor items.

    Parameters
    ----------
    labels : array-like of shape (n,)
        The reference pass/fail label of each item (missing where the item has none: it
        counts for verdict changes and pass rates, not for kappa).
    old, new : array-like of shape (n,)
        Each judge's pass/fail verdict of each item (no missing values: keep the items both
        judged).
    tasks : array-like of shape (n,)
        The task of each item: the resampling unit, and the group of trials pass^k reads.
    ks :
        The k of pass^k.
    n_boot, seed, level :
        Resamples, generator seed, interval level.

    Returns
    -------
    Drift
        Estimates with paired, task-clustered BCa intervals (``n`` = tasks).

    Examples
    --------
    >>> d = paired_drift(labels=[1, 1, 0, 0], old=[1, 1, 0, 1], new=[1, 0, 0, 1],
    ...                  tasks=["a", "b", "c", "d"], n_boot=50)
    >>> d.kappa_old.value, d.kappa_new.value, d.n_down  # po 3/4, pe 1/2; po 1/2, pe 1/2
    (0.5, 0.0, 1)
    """
    y = as_binary(labels, "labels", allow_missing=True)
    a = as_binary(old, "old")
    b = as_binary(new, "new")
    task_arr = as_1d(tasks, "tasks")
    check_same_length(labels=y, old=a, new=b, tasks=task_arr)
    ks = sorted({int(k) for k in ks})
    codes, n_tasks = item_codes(task_arr)
    known = ~np.isnan(y)
    rows = np.zeros((len(a), _FIXED))
    lab = np.where(known, y, 0).astype(int)
    rows[np.arange(len(a)), lab * 2 + a.astype(int)] = known
    rows[np.arange(len(a)), 4 + lab * 2 + b.astype(int)] = known
    rows[:, _OLD_PASS], rows[:, _NEW_PASS], rows[:, _BOTH] = a, b, 1.0
    rows[:, _CHANGED] = a != b
    rows[:, _DOWN] = (a == 1) & (b == 0)
    rows[:, _UP] = (a == 0) & (b == 1)
    sums = per_item_sums(codes, n_tasks, rows)
    for k in ks:
        sums = np.column_stack([sums, _task_hats(codes, n_tasks, a, b, k)])

    def kappa(cols: slice) -> SumStatistic:
        return lambda x: kappa_from_counts(_table(x, cols))

    def share(j: int) -> SumStatistic:
        return lambda x: safe_divide(x[..., j], x[..., _BOTH])

    stats: dict[str, SumStatistic] = {
        "kappa_old": kappa(_OLD_TABLE),
        "kappa_new": kappa(_NEW_TABLE),
        "kappa_diff": lambda x: (
            kappa_from_counts(_table(x, _NEW_TABLE)) - kappa_from_counts(_table(x, _OLD_TABLE))
        ),
        "pass_rate_old": share(_OLD_PASS),
        "pass_rate_new": share(_NEW_PASS),
        "pass_rate_diff": lambda x: safe_divide(
            x[..., _NEW_PASS] - x[..., _OLD_PASS], x[..., _BOTH]
        ),
        "changed": share(_CHANGED),
    }
    for i, k in enumerate(ks):
        base = _FIXED + 3 * i
        stats[f"old^{k}"] = _ratio(base, base + 2)
        stats[f"new^{k}"] = _ratio(base + 1, base + 2)
        stats[f"diff^{k}"] = _diff_ratio(base, base + 2)
    found = cluster_bootstrap_many(sums, stats, n_boot=n_boot, seed=seed, level=level)
    est = {name: e for name, (e, _) in found.items()}
    if n_tasks:
        # a kappa the resamples cannot move (no disagreement) gets the exact interval
        est["kappa_old"] = boundary_kappa(est["kappa_old"], sums[:, _OLD_TABLE])
        est["kappa_new"] = boundary_kappa(est["kappa_new"], sums[:, _NEW_TABLE])
    return Drift(
        kappa_old=est["kappa_old"],
        kappa_new=est["kappa_new"],
        kappa_diff=est["kappa_diff"],
        pass_rate_old=est["pass_rate_old"],
        pass_rate_new=est["pass_rate_new"],
        pass_rate_diff=est["pass_rate_diff"],
        changed=est["changed"],
        n_items=len(a),
        n_labeled=int(known.sum()),
        n_tasks=n_tasks,
        n_down=int(sums[:, _DOWN].sum()),
        n_up=int(sums[:, _UP].sum()),
        pass_hat={k: (est[f"old^{k}"], est[f"new^{k}"], est[f"diff^{k}"]) for k in ks},
    )


def _ratio(j: int, den: int) -> SumStatistic:
    return lambda x: safe_divide(x[..., j], x[..., den])


def _diff_ratio(j: int, den: int) -> SumStatistic:
    return lambda x: safe_divide(x[..., j + 1] - x[..., j], x[..., den])
