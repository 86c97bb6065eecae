"""Pass rates that use both judges and labels: four estimators side by side, per source.

For each verdict source (the judge as it stands, the aligned judge) on the HOLDOUT
trajectories: the pass rate and pass^k by the judge alone, by the labels alone, corrected
with the judge's error rates (Rogan-Gladen) and prediction-powered (PPI++), each with its
interval and width, so that a reader sees what the judge buys over the labels alone.

Holdout only: the aligned judge was fitted on the dev labels, and a correction that measures
its bias on the labels it was fitted to would understate that bias.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from trajudge.calibration import (
    Estimate,
    corrected_pass_hat_k,
    pass_rate_estimates,
    ppi_pass_hat_k,
)


def _est(e: Estimate) -> dict[str, Any]:
    d = e.to_dict()
    d["width"] = None if math.isnan(e.high - e.low) else float(e.high - e.low)
    return d


def source_estimates(
    verdict: pd.Series,
    labels: pd.Series,
    tasks: pd.Series,
    *,
    ks: Sequence[int],
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """The estimators for one source: ``verdict`` (item -> 0/1 on every holdout item it
    judged), ``labels`` (item -> 0/1, NaN unlabelled), ``tasks`` (item -> task id).

    Returns ``{"n_trajectories", "n_labelled", "rate": [rows of pass_rate_estimates with
    widths], "pass_k": {k: {"judge", "labels_only", "rogan_gladen", "ppi", "lambda"}}}``.
    """
    ids = verdict.index
    v = verdict.to_numpy(dtype=float)
    y = labels.reindex(ids).to_numpy(dtype=float)
    t = tasks.reindex(ids).astype(str).to_numpy()
    out: dict[str, Any] = {"n_trajectories": int(v.size), "n_labelled": int((~np.isnan(y)).sum())}
    if v.size == 0 or out["n_labelled"] == 0:
        out.update(rate=[], pass_k={})
        return out
    rate = pass_rate_estimates(v, y, tasks=t, n_boot=n_boot, seed=seed)
    rate = rate.astype(object).where(rate.notna(), None)
    out["rate"] = rate.to_dict(orient="records")
    ppi = ppi_pass_hat_k(v, y, t, ks=ks)
    rg = corrected_pass_hat_k(v, y, t, ks=ks, n_boot=n_boot, seed=seed)
    per_k: dict[str, Any] = {}
    for k in ppi.ks:
        e = ppi.estimates[k]
        per_k[str(k)] = {
            "judge": None if math.isnan(e.judge_only) else e.judge_only,
            "labels_only": _est(e.labels_only),
            "rogan_gladen": _est(rg.corrected[k]) if k in rg.corrected else None,
            "ppi": _est(e.ppi),
            "lambda": None if math.isnan(e.lam) else e.lam,
            "n_labelled_tasks": e.n_labeled,
            "n_unlabelled_tasks": e.n_unlabeled,
        }
    out["pass_k"] = per_k
    return out
