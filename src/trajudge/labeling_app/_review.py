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
    # a reference judge's score is the candidate's, as a pointwise judge's is
    pairwise = (
        judgments["mode"].eq("pairwise") if "mode" in judgments else judgments["other_id"].notna()
    )
    j = judgments[
        (judgments["rubric_id"] == rubric.id)
        & judgments["error"].isna()
        & judgments["score"].notna()
        & ~pairwise
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


# Pairs (pairwise rubrics): labels and verdicts are A, B or tie in the pair's original
# numbering, so they compare as they are stored.
PAIR_JUDGE_HUMAN_COLUMNS = [
    "trajectory_id",
    "other_id",
    "judge",
    "judge_verdicts",
    "human_labels",
    "adjudicated",
]
PAIR_ANNOTATOR_COLUMNS = ["trajectory_id", "other_id", "labels", "n_annotators", "adjudicated"]
_PAIR = ["trajectory_id", "other_id"]


def majority(values: list[str]) -> str | None:
    """The most frequent value, None when two or more share the top count (a split)."""
    counts = pd.Series(values, dtype=object).value_counts()
    if counts.empty or (len(counts) > 1 and counts.iloc[0] == counts.iloc[1]):
        return None
    return str(counts.index[0])


def _pair_humans(labels: pd.DataFrame) -> pd.DataFrame:
    if labels.empty:
        return labels
    keep = (
        ~labels["adjudication"].astype(bool)
        & ~labels["skipped"].astype(bool)
        & labels["category"].notna()
    )
    return labels[keep]


def _pairs_adjudicated(labels: pd.DataFrame) -> set[tuple[str, str]]:
    if labels.empty:
        return set()
    adj = labels[labels["adjudication"].astype(bool)]
    return set(zip(adj["trajectory_id"].astype(str), adj["other_id"].astype(str), strict=True))


def _tally(values: pd.Series) -> str:
    counts = values.astype(str).value_counts().sort_index()
    return ", ".join(f"{v}×{n}" for v, n in counts.items())


def pair_judge_human_disagreements(
    labels: pd.DataFrame, judgments: pd.DataFrame, rubric_id: str
) -> pd.DataFrame:
    """Pairs where a judge's majority verdict (over orders and samples) is not the humans'
    majority label, a split on either side counting as a disagreement; one row per (pair,
    judge), in pair order."""
    humans = _pair_humans(labels[labels["rubric_id"] == rubric_id] if not labels.empty else labels)
    if humans.empty or judgments.empty:
        return pd.DataFrame(columns=PAIR_JUDGE_HUMAN_COLUMNS)
    j = judgments[
        (judgments["rubric_id"] == rubric_id)
        & judgments["other_id"].notna()
        & judgments["error"].isna()
        & judgments["verdict"].notna()
    ]
    by_pair = {(str(a), str(b)): g for (a, b), g in humans.groupby(_PAIR)}
    adjudicated = _pairs_adjudicated(labels)
    rows = []
    for (a, b, judge), grp in j.groupby([*_PAIR, "judge"]):
        human = by_pair.get((str(a), str(b)))
        if human is None:
            continue
        verdict = majority(list(grp["verdict"].astype(str)))
        if verdict is not None and verdict == majority(list(human["category"].astype(str))):
            continue
        pairs = sorted(zip(human["annotator"], human["category"], strict=True))
        rows.append(
            {
                "trajectory_id": str(a),
                "other_id": str(b),
                "judge": str(judge),
                "judge_verdicts": _tally(grp["verdict"]),
                "human_labels": ", ".join(f"{who}={c}" for who, c in pairs),
                "adjudicated": (str(a), str(b)) in adjudicated,
            }
        )
    return pd.DataFrame(rows, columns=PAIR_JUDGE_HUMAN_COLUMNS)


def pair_annotator_disagreements(labels: pd.DataFrame, rubric_id: str) -> pd.DataFrame:
    """Pairs whose human labels (by different annotators) are not all the same, the most
    split first."""
    rubric_labels = labels[labels["rubric_id"] == rubric_id] if not labels.empty else labels
    humans = _pair_humans(rubric_labels)
    if humans.empty:
        return pd.DataFrame(columns=PAIR_ANNOTATOR_COLUMNS)
    adjudicated = _pairs_adjudicated(rubric_labels)
    rows = []
    for (a, b), grp in humans.groupby(_PAIR):
        if grp["category"].nunique() < 2:
            continue
        pairs = sorted(zip(grp["annotator"], grp["category"], strict=True))
        rows.append(
            {
                "trajectory_id": str(a),
                "other_id": str(b),
                "labels": ", ".join(f"{who}={c}" for who, c in pairs),
                "n_annotators": len(pairs),
                "adjudicated": (str(a), str(b)) in adjudicated,
                "_n": grp["category"].nunique(),
            }
        )
    out = pd.DataFrame(rows, columns=[*PAIR_ANNOTATOR_COLUMNS, "_n"])
    out = out.sort_values(["_n", *_PAIR], ascending=[False, True, True])
    return out[PAIR_ANNOTATOR_COLUMNS].reset_index(drop=True)
