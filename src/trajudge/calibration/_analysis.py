"""``analyze``: judges against humans, bias probes, corrected rates and pass^k in one call."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from trajudge.calibration._judge_report import Human, best_threshold, judge_report
from trajudge.calibration._raters import consensus, human_agreement
from trajudge.calibration._reliability import ReliabilityResult, reliability
from trajudge.calibration._results import CalibrationResult, Threshold
from trajudge.calibration._tables import read_table, validate_table
from trajudge.trajectories import InputError


def _binary(values: pd.Series) -> bool:
    return set(values.dropna().unique().tolist()) <= {0.0, 1.0}


def _midpoint(scale: Sequence[float]) -> float:
    """The lowest scale value strictly above the middle of the scale."""
    values = sorted(set(scale))
    middle = (values[0] + values[-1]) / 2.0
    return next(v for v in values if v > middle)


def _human(labels: pd.DataFrame, cut: float | None) -> Human:
    ordinal = not _binary(labels["label"])
    as_pass = labels.assign(
        label=(labels["label"] >= cut).astype(float) if ordinal else labels["label"]
    )
    binary = consensus(as_pass)
    scale = consensus(labels) if ordinal else binary
    return Human(
        binary=binary["label"].dropna().astype(float),
        scale=scale["label"].dropna().astype(float),
        ordinal=ordinal,
    )


def _judge_threshold(
    rows: pd.DataFrame,
    human: Human,
    *,
    threshold: float | None,
    human_cut: float | None,
    dev: set[str],
) -> Threshold:
    ok = rows[rows["error"].isna()]
    ordinal = bool(ok["score"].notna().all()) and not _binary(ok["score"])
    if threshold is not None and ordinal:
        return Threshold(float(threshold), "given")
    # dev items tune the cut of ordinal scores, even where the judge also gave its own
    # verdict (a verdict applies the rubric's fixed threshold; the dev search replaces it)
    on_dev = ok[ok["item"].isin(dev) & ok["item"].isin(human.binary.index)]
    if ordinal and len(on_dev):
        t = best_threshold(on_dev["score"], on_dev["item"].map(human.binary))
        if not math.isnan(t):
            return Threshold(t, "dev")
    if ok["verdict"].notna().all() or _binary(ok["score"]):
        return Threshold(None, "binary")
    if threshold is not None:
        return Threshold(float(threshold), "given")
    if human_cut is not None:
        return Threshold(human_cut, "midpoint")
    return Threshold(_midpoint(ok["score"].tolist()), "midpoint")


def _pass_column(rows: pd.DataFrame, threshold: Threshold) -> pd.Series:
    if threshold.value is None:
        src = rows["verdict"].where(rows["verdict"].notna(), rows["score"])
        return src.astype(float)
    return (rows["score"] >= threshold.value).astype(float).where(rows["score"].notna())


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
        raise InputError("judgments", None, "task_id", f"missing for item {missing.iloc[0, 0]!r}")
    clash = both.groupby("item")["task_id"].nunique()
    if (clash > 1).any():
        item = clash.index[clash > 1][0]
        raise InputError("judgments", None, "task_id", f"item {item!r} has two task ids")
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
    n_boot: int = 2000,
    seed: int = 0,
    dev_items: Collection[Any] | None = None,
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
        ``score >= threshold`` is a pass, for judge scores and ordinal labels alike. Without
        it: 0/1 scores and verdicts are used as they are; ordinal labels are cut at the lowest
        scale value above the middle of the scale; an ordinal judge is cut at the best-kappa
        value on ``dev_items`` if given, else at the same midpoint. The result states it.
    n_boot, seed :
        Bootstrap resamples and seed for every interval.
    dev_items : collection, optional
        Items used only to search the judge's threshold; left out of every statistic.

    Returns
    -------
    CalibrationResult
        Per judge a :class:`JudgeReport`; the human ceiling; pass^k / pass@k per verdict
        source (each judge, the human consensus, the outcome) when task ids are given.
    """
    j = validate_table(judgments, "judgments", source="judgments")
    lab = validate_table(labels, "labels", source="labels")
    out = validate_table(outcomes, "outcomes", source="outcomes") if outcomes is not None else None
    dev = {str(i) for i in dev_items} if dev_items else set()
    known = lab.dropna(subset=["label"])
    scale = known["label"].tolist() + j.loc[j["error"].isna(), "score"].tolist()
    ordinal_labels = not _binary(known["label"])
    human_cut = (
        None
        if not ordinal_labels
        else float(threshold)
        if threshold is not None
        else _midpoint(scale)
    )
    full_human = _human(known, human_cut)
    cuts = {
        name: _judge_threshold(rows, full_human, threshold=threshold, human_cut=human_cut, dev=dev)
        for name, rows in j.groupby("judge", sort=True)
    }
    j, known = j[~j["item"].isin(dev)], known[~known["item"].isin(dev)]
    out = out[~out["item"].isin(dev)] if out is not None else None
    human = _human(known, human_cut)
    tasks = _tasks(j, out)
    reports, verdicts = {}, {}
    for name, rows in j.groupby("judge", sort=True):
        rows = rows.assign(**{"pass": _pass_column(rows, cuts[str(name)])})
        reports[str(name)] = judge_report(
            str(name),
            rows,
            human,
            cuts[str(name)],
            tasks=tasks,
            ks=sorted(set(ks)),
            n_boot=n_boot,
            seed=seed,
        )
        ok = rows[rows["error"].isna()]
        verdicts[str(name)] = (ok.groupby("item")["pass"].mean() > 0.5).astype(float)
    as_pass = known.assign(label=_as_binary(known, human_cut))
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
    )


def _as_binary(labels: pd.DataFrame, cut: float | None) -> pd.Series:
    return labels["label"] if cut is None else (labels["label"] >= cut).astype(float)


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
