"""Reliability over repeated trials: pass@k and pass^k with the unbiased estimators.

For a task run ``n`` times with ``c`` successes:

* pass@k = 1 - C(n - c, k) / C(n, k): the chance that at least one of k trials drawn without
  replacement succeeds (Chen et al. 2021).
* pass^k = C(c, k) / C(n, k): the chance that all k drawn trials succeed (Yao et al. 2024,
  τ-bench).

Both are averaged over tasks. A task with fewer than k trials has no estimate for that k: it is
left out of that k's mean and listed in ``short_tasks`` so nothing is silently dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from trajudge.calibration._validation import as_binary
from trajudge.calibration.intervals._bootstrap import cluster_bootstrap_many
from trajudge.calibration.intervals._boundary import boundary_rate


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task: ``1 - C(n-c, k) / C(n, k)``.

    Returns NaN when ``n < k`` (not enough trials to estimate).

    >>> pass_at_k(4, 1, 2)  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    0.5
    """
    _check(n, c, k)
    if n < k:
        return math.nan
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k for one task: ``C(c, k) / C(n, k)``.

    Returns NaN when ``n < k``.

    >>> pass_hat_k(4, 3, 2)  # C(3,2)/C(4,2) = 3/6
    0.5
    """
    _check(n, c, k)
    if n < k:
        return math.nan
    return math.comb(c, k) / math.comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if n < 0 or c < 0 or c > n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")


@dataclass
class ReliabilityResult:
    """pass@k / pass^k averaged over tasks, with the per-task table behind them."""

    ks: list[int]
    pass_at: dict[int, float]
    pass_hat: dict[int, float]
    n_tasks: dict[int, int]  # tasks that have at least k trials
    short_tasks: dict[int, list[str]]  # tasks with fewer than k trials, per k
    unstable_tasks: list[str]
    per_task: pd.DataFrame
    by_intent: pd.DataFrame = field(default_factory=pd.DataFrame)
    n_trajectories: int = 0
    n_unknown: int = 0  # trajectories without a verdict from this source

    def to_dict(self) -> dict[str, Any]:
        return {
            "ks": self.ks,
            "pass@k": {str(k): _num(v) for k, v in self.pass_at.items()},
            "pass^k": {str(k): _num(v) for k, v in self.pass_hat.items()},
            "n_tasks": {str(k): v for k, v in self.n_tasks.items()},
            "short_tasks": {str(k): v for k, v in self.short_tasks.items()},
            "unstable_tasks": self.unstable_tasks,
            "n_trajectories": self.n_trajectories,
            "n_unknown": self.n_unknown,
            "by_intent": self.by_intent.replace({np.nan: None}).to_dict(orient="records"),
            "per_task": self.per_task.replace({np.nan: None}).to_dict(orient="records"),
        }


def _num(v: float) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


_USAGE_COLUMNS = ("steps", "tokens", "cost_usd", "latency_s")


def reliability(
    frame: pd.DataFrame,
    *,
    ks: Sequence[int] = (1, 2, 3, 4),
    success_column: str = "success",
) -> ReliabilityResult:
    """pass@k and pass^k per task and averaged over tasks.

    Parameters
    ----------
    frame:
        One row per trajectory with ``task_id`` and a pass/fail ``success`` column (booleans,
        0/1 or pass/fail; None/NaN where the source gave no verdict: such rows are counted in
        ``n_unknown`` and left out of n and c). Other values raise ValueError. Optional
        columns: ``intent`` and the usage columns ``steps``, ``tokens``, ``cost_usd``,
        ``latency_s``, whose per-task means are reported beside the rates.
    ks:
        The values of k.

    Examples
    --------
    >>> df = pd.DataFrame({"task_id": ["a"] * 4 + ["b"] * 4,
    ...                    "success": [1, 1, 1, 0, 0, 0, 0, 0]})
    >>> r = reliability(df, ks=[1, 2])
    >>> r.pass_hat[1], r.pass_hat[2]  # a: 3/4, 3/6; b: 0, 0
    (0.375, 0.25)
    """
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise ValueError("ks must be positive integers")
    if "task_id" not in frame.columns or success_column not in frame.columns:
        raise ValueError(f"frame needs columns 'task_id' and {success_column!r}")
    df = frame.copy()
    success = as_binary(
        df[success_column].to_numpy(dtype=object), success_column, allow_missing=True
    )
    known = ~np.isnan(success)
    n_unknown = int((~known).sum())
    df = df[known]
    df["_s"] = success[known].astype(int)
    grouped = df.groupby("task_id", sort=True)
    per_task = pd.DataFrame({"n": grouped.size(), "c": grouped["_s"].sum()})
    for col in _USAGE_COLUMNS:
        if col in df.columns:
            per_task[f"mean_{col}"] = grouped[col].mean()
    if "intent" in df.columns:
        per_task["intent"] = grouped["intent"].first()
    pass_at: dict[int, float] = {}
    pass_hat: dict[int, float] = {}
    n_tasks: dict[int, int] = {}
    short: dict[int, list[str]] = {}
    for k in ks:
        at = [
            pass_at_k(int(n), int(c), k) for n, c in zip(per_task["n"], per_task["c"], strict=True)
        ]
        hat = [
            pass_hat_k(int(n), int(c), k) for n, c in zip(per_task["n"], per_task["c"], strict=True)
        ]
        per_task[f"pass@{k}"] = at
        per_task[f"pass^{k}"] = hat
        ok = per_task["n"] >= k
        n_tasks[k] = int(ok.sum())
        short[k] = [str(t) for t in per_task.index[~ok]]
        pass_at[k] = float(np.mean(np.asarray(at)[ok.to_numpy()])) if ok.any() else math.nan
        pass_hat[k] = float(np.mean(np.asarray(hat)[ok.to_numpy()])) if ok.any() else math.nan
    unstable = [
        str(t)
        for t, n, c in zip(per_task.index, per_task["n"], per_task["c"], strict=True)
        if 0 < c < n
    ]
    by_intent = pd.DataFrame()
    if "intent" in per_task.columns and per_task["intent"].notna().any():
        rows = []
        for intent, sub in per_task.groupby(per_task["intent"].fillna("(none)")):
            row: dict[str, Any] = {
                "intent": intent,
                "tasks": len(sub),
                "trajectories": int(sub["n"].sum()),
            }
            for k in ks:
                valid = sub[sub["n"] >= k]
                row[f"pass@{k}"] = float(valid[f"pass@{k}"].mean()) if len(valid) else math.nan
                row[f"pass^{k}"] = float(valid[f"pass^{k}"].mean()) if len(valid) else math.nan
            rows.append(row)
        by_intent = pd.DataFrame(rows)
    per_task = per_task.reset_index()
    return ReliabilityResult(
        ks=ks,
        pass_at=pass_at,
        pass_hat=pass_hat,
        n_tasks=n_tasks,
        short_tasks=short,
        unstable_tasks=unstable,
        per_task=per_task,
        by_intent=by_intent,
        n_trajectories=len(df),
        n_unknown=n_unknown,
    )


def reliability_intervals(
    frame: pd.DataFrame,
    *,
    ks: Sequence[int] = (1, 2, 3, 4),
    success_column: str = "success",
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, dict[int, tuple[float, float]]]:
    """Bootstrap intervals (BCa) for pass@k and pass^k, resampling tasks.

    Tasks are the unit of resampling (their trials stay together), since the estimators
    average over tasks. Tasks with fewer than k trials are left out for that k, as in
    :func:`reliability`. Returns ``{"pass@k": {k: (lo, hi)}, "pass^k": {k: (lo, hi)}}``;
    an interval is ``(nan, nan)`` when no task has k trials (or in more than 10% of the
    resamples).

    At 0 or 1 (every task passed all its trials, or none reached k passes) every resample
    agrees, and the interval is Clopper-Pearson on the T tasks instead
    (:func:`trajudge.calibration.boundary_rate`). That is exact here too: a task's pass^k
    estimate is 1 only if all n >= k trials pass, with probability E[p^n] <= E[p^k], so T
    ones have probability at most pass^k ** T (and likewise at 0, and for pass@k).

    >>> df = pd.DataFrame({"task_id": list("aabb"), "success": [1, 1, 1, 1]})
    >>> low, high = reliability_intervals(df, ks=[2], n_boot=50)["pass^k"][2]
    >>> round(low, 4), high  # 2 tasks: 0.025 ** (1 / 2)
    (0.1581, 1.0)
    """
    base = reliability(frame, ks=ks, success_column=success_column)
    per_task = base.per_task
    out: dict[str, dict[int, tuple[float, float]]] = {"pass@k": {}, "pass^k": {}}
    stats: dict[str, Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]]] = {}
    columns: list[npt.NDArray[np.float64]] = []
    for k in base.ks:
        valid = np.asarray((per_task["n"] >= k).to_numpy(), dtype=np.float64)
        for name, col in (("pass@k", f"pass@{k}"), ("pass^k", f"pass^{k}")):
            values = np.nan_to_num(per_task[col].to_numpy(dtype=float))
            j = len(columns)
            columns += [values * valid, valid]
            stats[f"{name}:{k}"] = _ratio_of(j)
    sums = np.column_stack(columns) if columns else np.zeros((len(per_task), 0))
    found = cluster_bootstrap_many(sums, stats, n_boot=n_boot, seed=seed, level=level)
    for j, (key, (est, _)) in enumerate(found.items()):
        # each task's estimate lies in [0, 1]: a share, so the boundary rule applies
        est = boundary_rate(est, sums[:, 2 * j], sums[:, 2 * j + 1]) if len(sums) else est
        table, k_text = key.split(":")
        out[table][int(k_text)] = (est.low, est.high)
    return out


def _ratio_of(j: int) -> Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]]:
    def ratio(t: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        out = np.full(t[..., j].shape, np.nan)
        np.divide(t[..., j], t[..., j + 1], out=out, where=t[..., j + 1] > 0)
        return out

    return ratio
