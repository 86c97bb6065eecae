"""An aligned judge's calls in the report: the calls of its configuration, under its name.

An aligned judge (``trajudge align``) is a judge configuration plus a verdict rule
``feature >= threshold``. Its calls are the stored judgments made with that configuration: under its
own name (``trajudge judge --judge NAME``, or the few-shot calls), or, when the configuration
is the base judge's (threshold, calibrate), the base judge's calls themselves (the same
requests, so the same answers). On the dataset it was fitted on, its dev tasks are left out:
its figures are holdout figures. The report then cuts them at the rule's threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from trajudge.calibration import Threshold
from trajudge.evalset import split_of


def aligned_rows(
    raw: pd.DataFrame,
    records: Sequence[dict[str, Any]],
    dataset: str,
    task_of: pd.Series,
    notes: list[str],
) -> pd.DataFrame:
    """``raw`` (``Store.judgments_frame``) with each aligned judge's rows replaced by its
    configuration's calls (module docstring); ``task_of`` maps trajectory id -> task id."""
    out = raw
    for rec in records:
        name, base, config = rec["name"], rec["base_judge"], rec.get("config_sha256")
        mine = raw["judge"].isin([name, base]) & (
            raw["config_sha256"].isna() if config is None else raw["config_sha256"] == config
        )
        rows = raw[mine].copy()
        rows["_own"] = rows["judge"] != name  # own rows first, then the base judge's
        rows = rows.sort_values(["_own", "id"], kind="stable")
        rows = rows.drop_duplicates(["trajectory_id", "other_id", "order", "sample"])
        rows = rows.drop(columns="_own").sort_values("id").assign(judge=name)
        if rec["rule"].get("feature") == "expected_score":
            rows["score"] = rows["expected_score"]
        n_all = len(rows)
        if rec["dataset"] == dataset:
            share, salt = rec["split"]["dev_share"], rec["split"]["salt"]
            tasks = rows["trajectory_id"].map(task_of).astype(str).tolist()
            on_dev = [split_of(t, share, salt) == "dev" for t in tasks]
            rows = rows[[not d for d in on_dev]]
            notes.append(
                f"judge {name} is aligned judge version {rec.get('version')} of {base} "
                f"({rec['rule']['method']}, fitted on this dataset): measured on its holdout "
                f"tasks only ({len(rows)} of {n_all} calls; the dev tasks it was fitted on are "
                "left out)"
            )
        if not n_all:
            notes.append(
                f"aligned judge {name}: no stored judgment of its configuration "
                f"{str(config)[:12]} (run trajudge judge --judge {name})"
            )
        out = pd.concat([out[out["judge"] != name], rows], ignore_index=True)
    return out


def aligned_thresholds(records: Sequence[dict[str, Any]]) -> dict[str, Threshold]:
    """Judge name -> the threshold of its aligned rule (the report's per-judge threshold)."""
    return {r["name"]: Threshold(float(r["rule"]["threshold"]), "aligned") for r in records}
