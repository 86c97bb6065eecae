"""Verdict sources: one table of per-trajectory success for each way of saying "pass".

The report computes pass@k and pass^k side by side for the environment outcome, the rule
gates, each judge and the human labels. This module turns what the store holds into the
plain frame that :func:`trajudge.calibration.reliability` takes.
"""

from __future__ import annotations

import pandas as pd

from trajudge.store import Store
from trajudge.trajectories import InputError, Trajectory

USAGE_COLUMNS = ["steps", "tokens", "cost_usd", "latency_s"]


def trajectory_frame(trajectories: list[Trajectory]) -> pd.DataFrame:
    """One row per trajectory: ids, outcome, intent and usage figures."""
    rows = [
        {
            "trajectory_id": t.id,
            "task_id": t.task_id,
            "trial": t.trial,
            "intent": t.intent,
            "outcome": t.outcome,
            "steps": len(t.steps),
            "tokens": t.usage.total_tokens,
            "cost_usd": t.usage.cost_usd,
            "latency_s": t.usage.latency_s,
            "turns": t.usage.turns,
        }
        for t in trajectories
    ]
    cols = ["trajectory_id", "task_id", "trial", "intent", "outcome", *USAGE_COLUMNS, "turns"]
    return pd.DataFrame(rows, columns=cols)


def verdict_frame(store: Store, dataset: str, source: str = "outcome") -> pd.DataFrame:
    """Per-trajectory success for a verdict source.

    ``source`` is ``outcome`` (the environment's ground truth) or ``rules`` (every gate
    check passed; needs ``trajudge check`` first). The returned frame has the columns of
    :func:`trajectory_frame` plus ``success`` (True / False / None when unknown).
    """
    store.require_dataset(dataset)
    frame = trajectory_frame(store.trajectories(dataset))
    if source == "outcome":
        frame["success"] = frame["outcome"].astype(object)
    elif source == "rules":
        results = store.rule_results(dataset)
        if not results:
            raise InputError(
                store.url, None, "source", f"no rule results for {dataset!r}: run trajudge check"
            )
        frame["success"] = [
            results[i]["gates_passed"] if i in results else None for i in frame["trajectory_id"]
        ]
    else:
        raise InputError(store.url, None, "source", f"unknown source {source!r} (outcome or rules)")
    return frame
