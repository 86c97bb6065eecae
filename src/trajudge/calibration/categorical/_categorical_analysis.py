"""``analyze_categorical``: pairwise or nominal judges against the labels' majority category."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from trajudge.calibration._tables import validate_table
from trajudge.calibration.agreement._raters import consensus, human_agreement
from trajudge.calibration.categorical._categorical import categorical_report
from trajudge.calibration.categorical._categorical_model import CategoricalResult
from trajudge.core import InputError
from trajudge.rubrics._kinds import CATEGORICAL


def gold_categories(labels: pd.DataFrame) -> tuple[pd.Series, list[str]]:
    """The majority category per item (items whose top count is shared are left out) and
    the list of those tied items."""
    known = labels.dropna(subset=["label"])
    if known.empty:
        return pd.Series(dtype=object), []
    votes = consensus(known)
    gold = votes["label"].dropna().astype(str)
    return gold, [str(i) for i in votes.index[votes["tie"]]]


def _tasks(judgments: pd.DataFrame) -> dict[Any, Any] | None:
    if "task_id" not in judgments or judgments["task_id"].isna().all():
        return None
    pairs = judgments[["item", "task_id"]].dropna().drop_duplicates()
    clash = pairs.groupby("item")["task_id"].nunique()
    if (clash > 1).any():
        item = clash.index[clash > 1][0]
        raise InputError("judgments", field="task_id", reason=f"item {item!r} has two task ids")
    return dict(zip(pairs["item"], pairs["task_id"], strict=True))


def _systems(judgments: pd.DataFrame) -> pd.DataFrame | None:
    if not {"system_a", "system_b"} <= set(judgments.columns):
        return None
    return judgments.drop_duplicates("item").set_index("item")[["system_a", "system_b"]]


def analyze_categorical(
    judgments: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    kind: str = "pairwise",
    categories: Sequence[str] = (),
    inconsistent_as: str | None = None,
    ba_mapped: bool | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> CategoricalResult:
    """Calibrate every pairwise or nominal judge against the labels' majority category.

    Parameters
    ----------
    judgments : DataFrame
        One row per call: ``item, judge, order (ab|ba), sample, verdict`` (a category; a
        pairwise verdict A, B or tie), optional ``error, task_id, system_a, system_b``. A row
        without a verdict is an errored call (counted, never scored).
    labels : DataFrame
        ``item, annotator, label`` (a category; empty = skipped).
    kind : {"pairwise", "nominal"}
    categories : sequence of str
        The scale's categories (the rubric's), so that unused ones still count in kappa.
    inconsistent_as : str, optional
        What an item whose two orders disagree becomes: ``tie`` (default for pairwise) or
        ``inconsistent`` (default for nominal; never equal to a gold label).
    ba_mapped : bool or None
        Whether pairwise verdicts in order ``ba`` are already in the original numbering
        (True) or name the side as shown (False); needed when there are ``ba`` rows.
    n_boot, seed :
        Bootstrap resamples and seed of every interval (tasks resampled when ``task_id`` is
        given, else items).

    Returns
    -------
    CategoricalResult
        Per judge a :class:`CategoricalReport`; the labellers' agreement (pairwise Cohen's
        kappas, Krippendorff's alpha, nominal) on items labelled by two or more.
    """
    if kind not in CATEGORICAL:
        raise InputError("--scale", reason=f"{kind!r} is not pairwise or nominal")
    j = validate_table(judgments, "judgments", source="judgments", kind=kind, ba_mapped=ba_mapped)
    lab = validate_table(labels, "labels", source="labels", kind=kind)
    gold, tied = gold_categories(lab)
    clusters = _tasks(j)
    systems = _systems(j)
    reports = {
        str(name): categorical_report(
            str(name),
            rows,
            gold,
            kind=kind,
            categories=categories,
            inconsistent_as=inconsistent_as,
            clusters=clusters,
            systems=systems,
            n_boot=n_boot,
            seed=seed,
        )
        for name, rows in j.groupby("judge", sort=True)
    }
    known = lab.dropna(subset=["label"])
    return CategoricalResult(
        kind=kind,
        judges=reports,
        human=human_agreement(known) if len(known) else None,
        n_labeled_items=len(gold),
        tied_items=tied,
        n_skipped_labels=int(lab["label"].isna().sum()),
    )
