"""``analyze``: judges against humans, bias probes, corrected rates and pass^k in one call."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from trajudge.calibration._tables import read_table, validate_table
from trajudge.calibration.agreement._raters import consensus, human_agreement
from trajudge.calibration.analysis._judge_report import Human, judge_report
from trajudge.calibration.analysis._results import CalibrationResult
from trajudge.calibration.rates._reliability import ReliabilityResult, reliability
from trajudge.calibration.verdicts._verdicts import (
    Threshold,
    item_verdicts,
    judge_threshold,
    label_threshold,
)
from trajudge.core import InputError


def _human(labels: pd.DataFrame, threshold: Threshold) -> Human:
    ordinal = threshold.value is not None
    as_pass = labels.assign(label=_as_binary(labels, threshold))
    binary = consensus(as_pass)
    scale = consensus(labels) if ordinal else binary
    return Human(
        binary=binary["label"].dropna().astype(float),
        scale=scale["label"].dropna().astype(float),
        ordinal=ordinal,
    )


def _tasks(judgments: pd.DataFrame, outcomes: pd.DataFrame | None) -> pd.Series | None:
    parts = []
    for frame in (judgments, outcomes):
        if frame is not None and "task_id" in frame:
            parts.append(frame[["item", "task_id"]])
    if not parts:
        return None
    both = pd.concat(parts).drop_duplicates()
    missing = both[both["task_id"].isna()]
    if len(missing):
        raise InputError(
            "judgments", field="task_id", reason=f"missing for item {missing.iloc[0, 0]!r}"
        )
    clash = both.groupby("item")["task_id"].nunique()
    if (clash > 1).any():
        item = clash.index[clash > 1][0]
        raise InputError("judgments", field="task_id", reason=f"item {item!r} has two task ids")
    return both.set_index("item")["task_id"]


def _reliability_sources(
    verdicts: dict[str, pd.Series],
    human: Human,
    outcomes: pd.DataFrame | None,
    tasks: pd.Series,
    ks: list[int],
) -> dict[str, ReliabilityResult]:
    out: dict[str, ReliabilityResult] = {}

    def run(success: pd.Series) -> ReliabilityResult:
        frame = pd.DataFrame({"task_id": tasks, "success": success.reindex(tasks.index)})
        return reliability(frame.reset_index(drop=True), ks=ks)

    for name, v in verdicts.items():
        out[f"judge:{name}"] = run(v)
    out["human"] = run(human.binary)
    if outcomes is not None:
        out["outcome"] = run(outcomes.set_index("item")["outcome"])
    return out


def analyze(
    judgments: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    outcomes: pd.DataFrame | None = None,
    ks: Sequence[int] = (1, 2, 3, 4),
    threshold: float | None = None,
    rubric_threshold: float | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    dev_items: Collection[Any] | None = None,
    judge_thresholds: Mapping[str, Threshold] | None = None,
) -> CalibrationResult:
    """Calibrate every judge against the human labels.

    Parameters
    ----------
    judgments : DataFrame
        One row per judge call: ``item, judge, order (ab|ba), sample`` and ``score`` and/or
        ``verdict``; optional ``error, latency_s, cost_usd, length, task_id, agent_model,
        judge_model``. Errored rows are counted per judge and left out of every score.
    labels : DataFrame
        ``item, annotator, label`` (number or pass/fail; empty = skipped, counted).
    outcomes : DataFrame, optional
        ``item, outcome[, task_id]``: the environment's verdict, a third pass^k source.
    ks : sequence of int
        The k of pass@k and pass^k.
    threshold : float, optional
        ``score >= threshold`` is a pass, for ordinal judge scores and ordinal labels alike
        (``--threshold``; source "given").
    rubric_threshold : float, optional
        The pass threshold the rubric's ordinal scale declares (source "rubric"): used for
        ordinal labels and, unless dev items tune it, for judges' ordinal scores when
        ``threshold`` is not given. With ordinal values and neither of them (nor dev items
        for a judge), ``InputError`` says what to give: a threshold is never inferred from the
        observed scores, and never from other judges.
    n_boot, seed :
        Bootstrap resamples and seed for every interval. Intervals resample tasks when task
        ids are known (trials of a task are correlated), else items.
    dev_items : collection, optional
        Items used only to search a judge's threshold; left out of every statistic.
    judge_thresholds : mapping, optional
        Judge name -> the :class:`Threshold` its scores are cut at, before any other rule
        (an aligned judge's threshold, fitted elsewhere: ``trajudge align``).

    Returns
    -------
    CalibrationResult
        Per judge a :class:`JudgeReport` (one verdict per item, see :func:`item_verdicts`);
        the human ceiling; pass^k / pass@k per verdict source (each judge, the human
        consensus, the outcome) when task ids are given.
    """
    j = validate_table(judgments, "judgments", source="judgments")
    lab = validate_table(labels, "labels", source="labels")
    out = validate_table(outcomes, "outcomes", source="outcomes") if outcomes is not None else None
    dev = {str(i) for i in dev_items} if dev_items else set()
    known = lab.dropna(subset=["label"])
    labels_at = label_threshold(
        known["label"], threshold=threshold, rubric_threshold=rubric_threshold
    )
    full_human = _human(known, labels_at)
    dev_truth = full_human.binary[full_human.binary.index.isin(dev)] if dev else None
    fixed = dict(judge_thresholds or {})
    thresholds = {
        str(name): fixed.get(str(name))
        or judge_threshold(
            str(name),
            rows,
            threshold=threshold,
            rubric_threshold=rubric_threshold,
            dev_truth=dev_truth,
        )
        for name, rows in j.groupby("judge", sort=True)
    }
    j, known = j[~j["item"].isin(dev)], known[~known["item"].isin(dev)]
    out = out[~out["item"].isin(dev)] if out is not None else None
    human = _human(known, labels_at)
    tasks = _tasks(j, out)
    reports, verdicts = {}, {}
    for name, rows in j.groupby("judge", sort=True):
        th = thresholds[str(name)]
        reports[str(name)] = judge_report(
            str(name),
            rows,
            human,
            th,
            tasks=tasks,
            ks=sorted(set(ks)),
            n_boot=n_boot,
            seed=seed,
        )
        verdicts[str(name)] = item_verdicts(rows, threshold=th.value)
    as_pass = known.assign(label=_as_binary(known, labels_at))
    ceiling = human_agreement(as_pass)
    tied = consensus(as_pass)
    return CalibrationResult(
        judges=reports,
        human=ceiling,
        n_labeled_items=len(human.binary),
        tied_items=[str(i) for i in tied.index[tied["tie"]]],
        n_skipped_labels=int(lab["label"].isna().sum()),
        reliability={}
        if tasks is None
        else _reliability_sources(verdicts, human, out, tasks, sorted(set(ks))),
        ks=sorted(set(ks)),
        n_boot=n_boot,
        seed=seed,
        n_dev_items=len(dev),
        label_threshold=labels_at,
    )


def _as_binary(labels: pd.DataFrame, threshold: Threshold) -> pd.Series:
    if threshold.value is None:
        return labels["label"]
    return (labels["label"] >= threshold.value).astype(float).where(labels["label"].notna())


def calibrate_files(
    judgments_path: str | Path,
    labels_path: str | Path,
    *,
    outcomes_path: str | Path | None = None,
    **opts: Any,
) -> CalibrationResult:
    """:func:`analyze` on tables read with :func:`read_table` (CSV, JSONL or Parquet).

    Bad files raise :class:`InputError` naming the file, row and column.
    """
    judgments = read_table(judgments_path, schema="judgments")
    labels = read_table(labels_path, schema="labels")
    outcomes = read_table(outcomes_path, schema="outcomes") if outcomes_path else None
    return analyze(judgments, labels, outcomes=outcomes, **opts)
