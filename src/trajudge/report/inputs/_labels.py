"""Labels as pass/fail (cut where the rubric says), the consensus per item, usage means."""

from __future__ import annotations

import numpy as np
import pandas as pd

from trajudge.calibration import consensus


def as_pass(labels: pd.DataFrame, threshold: float | None) -> pd.DataFrame:
    """Labels cut to 0/1 at ``label >= threshold`` (unchanged when ``threshold`` is None)."""
    if threshold is None:
        return labels
    return labels.assign(
        label=(labels["label"] >= threshold).astype(float).where(labels["label"].notna())
    )


def consensus_pass(labels: pd.DataFrame) -> pd.Series:
    """Majority pass/fail per item (ties left out), from labels already cut to 0/1."""
    known = labels.dropna(subset=["label"])
    if known.empty:
        return pd.Series(dtype=float)
    return consensus(known)["label"].astype(float).dropna()


def usage_means(trajs: pd.DataFrame | None) -> dict[str, float | None]:
    """Mean cost, tokens, turns and steps per trajectory (over trajectories that logged it)."""
    out: dict[str, float | None] = {}
    for col in ("cost_usd", "tokens", "turns", "steps", "latency_s"):
        if trajs is None or col not in trajs:
            out[col] = None
            continue
        values = pd.to_numeric(trajs[col], errors="coerce").dropna()
        out[col] = float(np.mean(values)) if len(values) else None
    return out
