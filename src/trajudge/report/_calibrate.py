"""``calibrate_report``: the report from plain judgments, labels and outcomes tables (files), as
``trajudge calibrate`` builds it, without a store."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from trajudge.calibration import read_raw_table, read_table
from trajudge.core import InputError
from trajudge.report._assemble import Tables
from trajudge.report._build import Baseline, _from_tables
from trajudge.report._gates import USAGE_TOLERANCE, parse_gates
from trajudge.report._model import Report
from trajudge.report.inputs._categorical_inputs import split_plain


def _file_trajs(judgments: pd.DataFrame, outcomes: pd.DataFrame | None) -> pd.DataFrame | None:
    parts = [judgments[["item", "task_id"]]] if "task_id" in judgments else []
    if outcomes is not None and "task_id" in outcomes:
        parts.append(outcomes[["item", "task_id"]])
    if not parts:
        return None
    tasks = pd.concat(parts).dropna().drop_duplicates()
    clash = tasks.groupby("item")["task_id"].nunique()
    if (clash > 1).any():
        item = clash.index[clash > 1][0]
        raise InputError("judgments", field="task_id", reason=f"item {item!r} has two task ids")
    frame = tasks.drop_duplicates("item").rename(columns={"item": "trajectory_id"})
    outcome = None if outcomes is None else outcomes.set_index("item")["outcome"]
    frame["outcome"] = None if outcome is None else frame["trajectory_id"].map(outcome)
    frame["gates_passed"] = None
    return frame.reset_index(drop=True)


def calibrate_report(
    judgments: str | Path,
    labels: str | Path,
    *,
    outcomes: str | Path | None = None,
    label_source: str = "human",
    ks: Sequence[int] = (1, 2, 3, 4),
    n_boot: int = 2000,
    seed: int = 0,
    threshold: float | None = None,
    dev_items: Collection[Any] | None = None,
    baseline: Baseline = None,
    baseline_tolerance: float = USAGE_TOLERANCE,
    fail_under: Sequence[str] = (),
    primary_source: str | None = None,
    rubric: str | None = None,
    rubric_dirs: Sequence[str | Path] = (),
    scale: str | None = None,
    ba_mapped: bool | None = None,
    jury: bool = False,
    inconsistent_as: str | None = None,
) -> Report:
    """The same report from plain tables (CSV, JSONL or Parquet; see ``calibrate_files``).

    ``judgments``: item, judge, order, sample, verdict and/or score (optional task_id, error,
    cost_usd, latency_s, length, agent_model, judge_model, rubric_id); ``labels``: item,
    annotator, label (optional rubric_id); ``outcomes``: item, outcome (optional task_id).
    Without task ids there is no pass^k. ``rubric`` chooses the rubric: its pass threshold
    cuts ordinal scales, and only rows of that rubric are used when the tables name rubrics
    (needed when they name several and cannot be matched). Bad files raise
    :class:`InputError` naming the file, row and column.

    The verdict kind of each rubric's rows is ``scale`` (binary, ordinal, pairwise or
    nominal), else the kind its rubric declares, else inferred from the values (and said so
    in the report's notes). Pairwise and nominal judges get their own measures (see
    :func:`trajudge.calibration.analyze_categorical`): ``item`` is then the pair (or the
    classified item), ``verdict`` A / B / tie or a category, ``label`` likewise. Pairwise
    rows of order ``ba`` need ``ba_mapped``: True when their verdicts are already in the
    original numbering, False when they name the side as shown.
    """
    parse_gates(fail_under)
    kinds: dict[str, dict[str, Any]] = {}
    j, lab, categorical = split_plain(
        read_raw_table(judgments),
        read_raw_table(labels),
        scale=scale,
        rubric=rubric,
        rubric_dirs=[str(d) for d in rubric_dirs],
        ba_mapped=ba_mapped,
        kinds=kinds,
    )
    out = read_table(outcomes, schema="outcomes") if outcomes is not None else None
    tables = Tables(
        judgments=j,
        labels=lab,
        raw_labels=lab,
        trajs=_file_trajs(j, out),
        has_rules=False,
        categorical=categorical,
    )
    return _from_tables(
        tables,
        dataset=None,
        label_source=label_source,
        ks=ks,
        n_boot=n_boot,
        seed=seed,
        threshold=threshold,
        dev_items=dev_items,
        fail_under=fail_under,
        baseline=baseline,
        baseline_tolerance=baseline_tolerance,
        primary_source=primary_source,
        fp=None,
        fingerprint_file=None,
        rubric=rubric,
        rubric_dirs=rubric_dirs,
        jury=jury,
        inconsistent_as=inconsistent_as,
    )
