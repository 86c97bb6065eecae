"""What the lead's page counts so far (pure, over the label and judgment frames): Cohen's
kappa between every two annotators on the items both labeled, and each judge against the
humans, each with a clustered bootstrap interval (``trajudge.calibration.bootstrap_kappa``,
resampling items).

An ordinal rubric's kappa between annotators is quadratic-weighted (a 4 against a 5 is a
smaller disagreement than a 1 against a 5); a binary or nominal one is unweighted. A judge
against the humans is compared on pass / fail (the judge's mean score and the humans' mean
label each against the rubric's pass threshold), as the Review page's disagreements are; a
nominal rubric has no threshold, so no such row.
"""

from __future__ import annotations

import itertools
from typing import Literal

import numpy as np
import pandas as pd

from trajudge.calibration import bootstrap_kappa
from trajudge.judges import Rubric

PAIR_COLUMNS = ["annotator_a", "annotator_b", "items", "kappa", "low", "high"]
JUDGE_COLUMNS = ["judge", "items", "kappa", "low", "high"]
N_BOOT = 1000


def human_values(labels: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """One row per (item, annotator) label of the rubric: ``trajectory_id``, ``annotator``,
    ``y`` (the value, or a nominal rubric's category); skips and adjudications left out."""
    if labels.empty:
        return pd.DataFrame(columns=["trajectory_id", "annotator", "y"])
    keep = (
        (labels["rubric_id"] == rubric.id)
        & ~labels["adjudication"].astype(bool)
        & ~labels["skipped"].astype(bool)
    )
    rows = labels[keep]
    y = rows["category"] if rubric.scale.kind == "nominal" else rows["value"]
    out = pd.DataFrame(
        {"trajectory_id": rows["trajectory_id"].astype(str), "annotator": rows["annotator"], "y": y}
    )
    return out[out["y"].notna()].reset_index(drop=True)


Weights = Literal["linear", "quadratic"] | None


def _kappa_row(y1: pd.Series, y2: pd.Series, items: pd.Series, weights: Weights) -> list[float]:
    if len(items) < 2:
        return [float("nan")] * 3
    labels = sorted(set(y1) | set(y2), key=str)
    est, _ = bootstrap_kappa(
        y1.to_numpy(),
        y2.to_numpy(),
        items.to_numpy(),
        weights=weights,
        labels=labels,
        n_boot=N_BOOT,
        seed=0,
    )
    return [est.value, est.low, est.high]


def pairwise_agreement(labels: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """Cohen's kappa of every two annotators on the items both labeled, with its interval."""
    values = human_values(labels, rubric)
    weights: Weights = "quadratic" if rubric.scale.kind == "ordinal" else None
    wide = values.pivot_table(
        index="trajectory_id", columns="annotator", values="y", aggfunc="first"
    )
    rows = []
    for a, b in itertools.combinations(sorted(wide.columns), 2):
        both = wide[[a, b]].dropna()
        items = pd.Series(both.index, dtype=str)
        rows.append([a, b, len(both), *_kappa_row(both[a], both[b], items, weights)])
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def judge_agreement(labels: pd.DataFrame, judgments: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """Each judge against the humans on pass / fail, on the items both scored, with its
    interval (no rows under a nominal rubric, which has no pass threshold)."""
    values = human_values(labels, rubric)
    if rubric.scale.kind == "nominal" or values.empty or judgments.empty:
        return pd.DataFrame(columns=JUDGE_COLUMNS)
    pairwise = judgments["mode"].eq("pairwise")
    j = judgments[
        (judgments["rubric_id"] == rubric.id)
        & judgments["error"].isna()
        & judgments["score"].notna()
        & ~pairwise
    ]
    humans = values.assign(y=values["y"].astype(float)).groupby("trajectory_id")["y"].mean()
    rows = []
    for judge, grp in j.groupby("judge"):
        scores = grp.groupby(grp["trajectory_id"].astype(str))["score"].mean()
        both = pd.concat([humans.rename("h"), scores.rename("j")], axis=1, join="inner")
        h = pd.Series([rubric.scale.passed(float(v)) for v in both["h"]], dtype=bool)
        s = pd.Series([rubric.scale.passed(float(v)) for v in both["j"]], dtype=bool)
        items = pd.Series(both.index, dtype=str)
        rows.append([judge, len(both), *_kappa_row(h, s, items, None)])
    return pd.DataFrame(rows, columns=JUDGE_COLUMNS)


def rounded(frame: pd.DataFrame) -> pd.DataFrame:
    """The kappa columns to 3 decimals, for the page."""
    out = frame.copy()
    for col in ("kappa", "low", "high"):
        if col in out:
            out[col] = np.round(out[col].astype(float), 3)
    return out
