"""Disagreements to review: judge vs human, and annotator vs annotator (pure, over frames)."""

from __future__ import annotations

import pandas as pd

from trajudge.judges import Rubric

JUDGE_HUMAN_COLUMNS = [
    "trajectory_id",
    "judge",
    "judge_score",
    "judge_pass",
    "human_mean",
    "human_pass",
    "n_humans",
    "adjudicated",
]
ANNOTATOR_COLUMNS = ["trajectory_id", "labels", "n_annotators", "spread", "adjudicated"]


def _human(labels: pd.DataFrame) -> pd.DataFrame:
    if labels.empty:
        return labels
    keep = (
        ~labels["adjudication"].astype(bool)
        & ~labels["skipped"].astype(bool)
        & labels["value"].notna()
    )
    return labels[keep]


def _adjudicated(labels: pd.DataFrame) -> set[str]:
    if labels.empty:
        return set()
    return set(labels.loc[labels["adjudication"].astype(bool), "trajectory_id"].astype(str))


def judge_human_disagreements(
    labels: pd.DataFrame, judgments: pd.DataFrame, rubric: Rubric
) -> pd.DataFrame:
    """Items where a judge's mean score and the humans' mean label fall on different sides of
    the rubric's pass threshold; one row per (item, judge), the widest gap first."""
    humans = _human(labels[labels["rubric_id"] == rubric.id]) if not labels.empty else labels
    if humans.empty or judgments.empty:
        return pd.DataFrame(columns=JUDGE_HUMAN_COLUMNS)
    j = judgments[
        (judgments["rubric_id"] == rubric.id)
        & judgments["error"].isna()
        & judgments["score"].notna()
        & judgments["other_id"].isna()
    ]
    if j.empty:
        return pd.DataFrame(columns=JUDGE_HUMAN_COLUMNS)
    h = humans.groupby("trajectory_id")["value"].agg(human_mean="mean", n_humans="count")
    per_judge = j.groupby(["trajectory_id", "judge"])["score"].mean().rename("judge_score")
    merged = per_judge.reset_index().merge(h.reset_index(), on="trajectory_id", how="inner")
    merged["judge_pass"] = [rubric.scale.passed(float(s)) for s in merged["judge_score"]]
    merged["human_pass"] = [rubric.scale.passed(float(s)) for s in merged["human_mean"]]
    out = merged[merged["judge_pass"] != merged["human_pass"]].copy()
    out["adjudicated"] = out["trajectory_id"].astype(str).isin(_adjudicated(labels))
    gap = (out["judge_score"] - out["human_mean"]).abs()
    out = out.assign(_gap=gap).sort_values(["_gap", "trajectory_id"], ascending=[False, True])
    return out[JUDGE_HUMAN_COLUMNS].reset_index(drop=True)


def annotator_disagreements(labels: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """Items whose human labels (by different annotators) are not all the same value."""
    humans = _human(labels[labels["rubric_id"] == rubric.id]) if not labels.empty else labels
    if humans.empty:
        return pd.DataFrame(columns=ANNOTATOR_COLUMNS)
    rows = []
    adjudicated = _adjudicated(labels[labels["rubric_id"] == rubric.id])
    for tid, grp in humans.groupby("trajectory_id"):
        values = grp["value"].astype(float)
        if values.nunique() < 2:
            continue
        pairs = sorted(zip(grp["annotator"], values, strict=True))
        rows.append(
            {
                "trajectory_id": str(tid),
                "labels": ", ".join(f"{a}={v:g}" for a, v in pairs),
                "n_annotators": len(pairs),
                "spread": float(values.max() - values.min()),
                "adjudicated": str(tid) in adjudicated,
            }
        )
    out = pd.DataFrame(rows, columns=ANNOTATOR_COLUMNS)
    return out.sort_values(["spread", "trajectory_id"], ascending=[False, True]).reset_index(
        drop=True
    )
