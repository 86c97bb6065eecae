"""Labels as pass/fail: where an ordinal scale is cut, the consensus per item, usage means."""

from __future__ import annotations

import numpy as np
import pandas as pd

from trajudge.calibration import consensus
from trajudge.judges import load_rubric
from trajudge.trajectories import InputError


def _binary(values: pd.Series) -> bool:
    return set(values.dropna().unique().tolist()) <= {0.0, 1.0}


def _rubric_threshold(rubric_id: str | None) -> float | None:
    if rubric_id is None:
        return None
    try:
        rubric = load_rubric(rubric_id)
    except InputError:
        return None
    return rubric.scale.pass_threshold if rubric.scale.kind == "ordinal" else None


def label_cut(
    labels: pd.DataFrame, scores: pd.Series, threshold: float | None, rubric_id: str | None
) -> tuple[float | None, str]:
    """Where ordinal labels become pass/fail: ``label >= cut``; None for 0/1 labels."""
    known = labels["label"].dropna()
    if _binary(known):
        return None, "labels are pass/fail"
    if threshold is not None:
        return float(threshold), "given (--threshold)"
    from_rubric = _rubric_threshold(rubric_id)
    if from_rubric is not None:
        return float(from_rubric), f"the pass threshold of rubric {rubric_id}"
    values = sorted(set(known.tolist()) | set(scores.dropna().tolist()))
    middle = (values[0] + values[-1]) / 2.0
    return next(v for v in values if v > middle), "lowest value above the scale's middle"


def as_pass(labels: pd.DataFrame, cut: float | None) -> pd.DataFrame:
    if cut is None:
        return labels
    return labels.assign(
        label=(labels["label"] >= cut).astype(float).where(labels["label"].notna())
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
