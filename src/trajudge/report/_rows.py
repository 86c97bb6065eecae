"""The rows of the report: a verdict source's pass^k and pass@k with intervals over tasks (gated: a
failed gate counts as a fail), and a judge's row with its flags and recorded configuration."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from trajudge.calibration import (
    Estimate,
    JudgeReport,
    Threshold,
    corrected_pass_hat_k,
    corrected_pass_rate,
    item_verdicts,
    reliability,
    reliability_intervals,
)
from trajudge.report._model import Flag, JudgeRow, SourceKind, SourceResult


def item_pass(rows: pd.DataFrame, threshold: Threshold) -> pd.Series:
    """A judge's pass/fail per item: :func:`trajudge.calibration.item_verdicts`, the one
    aggregate over orders and samples that every figure uses."""
    return item_verdicts(rows, threshold=threshold.value)


def gate(success: pd.Series, trajs: pd.DataFrame, *, only_known: bool = False) -> pd.Series:
    """Success per trajectory with failed gates turned into fails (see the module docstring)."""
    ids = trajs["trajectory_id"]
    s = success.reindex(ids.to_numpy()).astype(float)
    failed = np.array(trajs["gates_passed"] == False)  # noqa: E712 - None stays unknown
    if only_known:
        failed = failed & s.notna().to_numpy()
    s[failed] = 0.0
    return s


def source_result(
    key: str,
    kind: SourceKind,
    title: str,
    success: pd.Series,
    trajs: pd.DataFrame,
    *,
    gated: bool,
    ks: Sequence[int],
    n_boot: int,
    seed: int,
) -> SourceResult:
    """pass^k / pass@k of a per-trajectory success series, with intervals over tasks."""
    frame = pd.DataFrame(
        {
            "task_id": trajs["task_id"].to_numpy(),
            "success": success.reindex(trajs["trajectory_id"].to_numpy()).to_numpy(dtype=float),
        }
    )
    frame["success"] = frame["success"].astype(object).where(frame["success"].notna(), None)
    r = reliability(frame, ks=ks)
    iv = reliability_intervals(frame, ks=ks, n_boot=n_boot, seed=seed)
    return SourceResult(
        key=key,
        kind=kind,
        title=title,
        gated=gated,
        pass_hat={k: Estimate(r.pass_hat[k], *iv["pass^k"][k], r.n_tasks[k]) for k in r.ks},
        pass_at={k: Estimate(r.pass_at[k], *iv["pass@k"][k], r.n_tasks[k]) for k in r.ks},
        n_tasks=dict(r.n_tasks),
        n_trajectories=r.n_trajectories,
        n_unknown=r.n_unknown,
        unstable_tasks=r.unstable_tasks,
    )


def _flags(name: str, report: JudgeReport) -> list[Flag]:
    return [
        Flag(name, probe, p.estimate, p.rule, p.detail)
        for probe, p in report.probes.items()
        if p is not None and p.flagged
    ]


def _judge_row(
    name: str,
    judge: str,
    rubric: str | None,
    rows: pd.DataFrame,
    report: JudgeReport,
    h_pass: pd.Series,
    trajs: pd.DataFrame | None,
    has_rules: bool,
    *,
    ks: list[int],
    n_boot: int,
    seed: int,
) -> JudgeRow:
    models = sorted({str(m) for m in rows.get("judge_model", pd.Series(dtype=object)).dropna()})
    config = judge_config(rows)
    if trajs is None:
        return JudgeRow(
            name,
            judge,
            rubric,
            models,
            report,
            None,
            report.corrected_rate,
            report.corrected_pass_hat,
            config,
        )
    verdict = item_pass(rows, report.threshold)
    # a judge without a single verdict says nothing about any trajectory: its pass^k is
    # undefined rather than "every gated trajectory failed"
    gated_rule = has_rules and len(verdict) > 0
    success = gate(verdict, trajs) if gated_rule else verdict
    source = source_result(
        f"judge:{name}",
        "judge",
        f"judge {name}",
        success,
        trajs,
        gated=gated_rule,
        ks=ks,
        n_boot=n_boot,
        seed=seed,
    )
    corrected_rate, corrected_k = report.corrected_rate, report.corrected_pass_hat
    if gated_rule:
        # gated trajectories are certain fails; the judge's TPR/TNR (the table's) correct
        # its verdicts on the others
        info = trajs.set_index("trajectory_id")
        gated = (info["gates_passed"] == False).to_numpy()  # noqa: E712 - None: not gated
        v = verdict.reindex(info.index)
        keep = (v.notna().to_numpy() | gated) & info["task_id"].notna().to_numpy()
        ids = info.index[keep]
        args = (v.loc[ids].to_numpy(), h_pass.reindex(ids).to_numpy(dtype=float))
        tasks = info.loc[ids, "task_id"].to_numpy()
        corrected_rate = corrected_pass_rate(
            *args, clusters=tasks, gated=gated[keep], n_boot=n_boot, seed=seed
        )
        corrected_k = corrected_pass_hat_k(
            *args, tasks, gated=gated[keep], ks=ks, n_boot=n_boot, seed=seed
        )
    return JudgeRow(
        name, judge, rubric, models, report, source, corrected_rate, corrected_k, config
    )


def judge_config(rows: pd.DataFrame) -> dict[str, Any] | None:
    """The configuration of a judge's rows (one, see ``_sources``); None for files without."""
    if "judge_config_sha256" not in rows or rows.empty:
        return None
    first = rows.iloc[0]

    def text(col: str) -> str | None:
        value = first.get(col)
        return value if isinstance(value, str) else None  # NaN / None: not recorded

    return {
        "sha256": text("judge_config_sha256"),
        "model": text("judge_model"),
        "api_base": text("judge_api_base"),
    }
