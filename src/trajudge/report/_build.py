"""``build_report`` (from the store) and ``calibrate_report`` (from plain tables)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from trajudge.calibration import Threshold, validate_table
from trajudge.calibration.active._stored import active_summaries
from trajudge.core import InputError, now_iso
from trajudge.evalset import Fingerprint, coverage, diff_fingerprints, read_fingerprint
from trajudge.report._assemble import GATE_RULE, Parts, Tables, assemble
from trajudge.report._gates import (
    USAGE_TOLERANCE,
    baseline_regressions,
    check_gates,
    parse_gates,
    parse_stop_rule,
    read_baseline,
)
from trajudge.report._model import Report, labels_phrase
from trajudge.report.inputs._aligned_rows import aligned_thresholds
from trajudge.report.inputs._categorical_inputs import store_groups
from trajudge.report.inputs._labels import usage_means
from trajudge.report.inputs._sources import store_inputs
from trajudge.report.sections._summary import summary_lines
from trajudge.store import Store

Baseline = str | Path | Mapping[str, Any] | None

LENGTH_NOTE = (
    "length (for the verbosity probe) = characters of the trajectory as rendered for the "
    "judge, outputs capped as in the judge prompt"
)


def _primary(parts: Parts, wanted: str | None) -> str | None:
    keys = [j.source.key for j in parts.judges if j.source is not None]
    keys += [s.key for s in parts.sources]
    if wanted is not None:
        for key in (wanted, f"judge:{wanted}"):
            if key in keys:
                return key
        known = ", ".join(keys) or "none"
        raise InputError("primary_source", reason=f"no verdict source {wanted!r} ({known})")
    if not keys:
        return None
    if any(k.startswith("judge:") for k in keys):
        return keys[0]
    return "outcome" if "outcome" in keys else keys[0]


def _coverage(trajs: pd.DataFrame | None, ks: Sequence[int]) -> dict[str, Any] | None:
    if trajs is None or "tags" not in trajs or trajs.empty:
        return None
    frame = trajs.rename(columns={"trajectory_id": "id"})[["id", "task_id", "tags", "outcome"]]
    result = coverage(frame, success="outcome", ks=ks)
    table = result.table.astype(object).where(result.table.notna(), None)
    return {
        "success": "outcome",
        "table": table.to_dict(orient="records"),
        "n_cases": result.n_cases,
        "n_boundary": result.n_boundary,
        "boundary_share": None
        if math.isnan(result.boundary_share)
        else float(result.boundary_share),
        "missing": result.missing,
        "warnings": result.warnings,
    }


def _finish(
    parts: Parts,
    tables: Tables,
    *,
    dataset: str | None,
    label_source: str,
    ks: Sequence[int],
    n_boot: int,
    seed: int,
    gates: Sequence[str],
    baseline: Baseline,
    primary_source: str | None,
    fp: Fingerprint | None,
    fingerprint_file: str | Path | None,
    alignment: Sequence[dict[str, Any]] = (),
    baseline_tolerance: float = USAGE_TOLERANCE,
) -> Report:
    parsed = parse_gates(gates)
    base = read_baseline(baseline) if isinstance(baseline, str | Path) else baseline
    changes: list[str] = []
    if fp is not None and base is not None and isinstance(base.get("fingerprint"), dict):
        try:
            changes += diff_fingerprints(Fingerprint.from_dict(base["fingerprint"]), fp)
        except ValueError as exc:
            raise InputError("--baseline", field="fingerprint", reason=str(exc)) from None
    if fp is not None and fingerprint_file is not None:
        changes += diff_fingerprints(read_fingerprint(fingerprint_file), fp)
    human = label_source == "human"
    report = Report(
        dataset=dataset,
        created_at=now_iso(),
        ks=sorted({int(k) for k in ks}),
        label_source=label_source,
        labels_are_human=human,
        primary_source=_primary(parts, primary_source),
        summary=[],
        judges=parts.judges,
        sources=parts.sources,
        ceilings=parts.ceilings,
        flags=parts.flags,
        label_thresholds=parts.thresholds,
        n_labeled_items=parts.n_labeled_items,
        n_skipped_labels=parts.n_skipped_labels,
        tied_items=parts.tied_items,
        usage=usage_means(tables.trajs),
        gate_rule=GATE_RULE,
        n_gate_failed=parts.n_gate_failed,
        coverage=_coverage(tables.trajs, ks),
        fingerprint=None if fp is None else fp.to_dict(),
        fingerprint_changes=changes,
        gates=[g.text for g in parsed],
        gate_failures=[],
        notes=list(tables.notes),
        n_boot=n_boot,
        seed=seed,
        calibration=parts.calibration,
        categorical=parts.categorical,
        alignment=list(alignment),
        panel=parts.panel,
    )
    if tables.trajs is None:
        report.notes.append("no task ids: pass^k and pass@k need the task of each item")
    as_dict = report.to_dict()
    failures = check_gates(as_dict, parsed)
    if base is not None:
        failures += baseline_regressions(as_dict, base, tolerance=baseline_tolerance)
    report.gate_failures = failures
    report.summary = summary_lines(report)
    return report


def _from_tables(
    tables: Tables,
    *,
    dataset: str | None,
    label_source: str,
    ks: Sequence[int],
    n_boot: int,
    seed: int,
    threshold: float | None,
    dev_items: Collection[Any] | None,
    fail_under: Sequence[str],
    baseline: Baseline,
    primary_source: str | None,
    fp: Fingerprint | None,
    fingerprint_file: str | Path | None,
    rubric: str | None,
    rubric_dirs: Sequence[str | Path],
    jury: bool = False,
    inconsistent_as: str | None = None,
    judge_thresholds: dict[str, Threshold] | None = None,
    alignment: Sequence[dict[str, Any]] = (),
    baseline_tolerance: float = USAGE_TOLERANCE,
) -> Report:
    """Calibrate and assemble, then finish the report: the part both entry points share."""
    human = label_source == "human"
    parts = assemble(
        tables,
        label_source=label_source,
        human=human,
        phrase=labels_phrase(label_source, human),
        ks=ks,
        n_boot=n_boot,
        seed=seed,
        threshold=threshold,
        dev_items=dev_items,
        rubric=rubric,
        rubric_dirs=[str(d) for d in rubric_dirs],
        jury=jury,
        inconsistent_as=inconsistent_as,
        judge_thresholds=judge_thresholds,
    )
    return _finish(
        parts,
        tables,
        dataset=dataset,
        label_source=label_source,
        ks=ks,
        n_boot=n_boot,
        seed=seed,
        gates=fail_under,
        baseline=baseline,
        baseline_tolerance=baseline_tolerance,
        primary_source=primary_source,
        fp=fp,
        fingerprint_file=fingerprint_file,
        alignment=alignment,
    )


def build_report(
    store: Store,
    dataset: str,
    *,
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
    fingerprint_file: str | Path | None = None,
    rubric: str | None = None,
    rubric_dirs: Sequence[str | Path] = (),
    jury: bool = False,
    inconsistent_as: str | None = None,
    aligned: Sequence[dict[str, Any]] | None = None,
    gates: Collection[str] = ("gate",),
    stop_when: str = "kappa>=0.6",
) -> Report:
    """The report of a stored dataset: judges against labels, pass^k per source, CI gates.

    Parameters
    ----------
    store, dataset :
        Where the trajectories, rule results, judgments and labels are.
    label_source :
        ``"human"`` (default) compares judges with people's labels; any other source (e.g.
        ``"env_reward"``) with those REFERENCE labels, and the report says so everywhere.
    ks, n_boot, seed :
        The k of pass^k / pass@k; bootstrap resamples and seed of every interval.
    threshold :
        ``label >= threshold`` (and a judge's mean ``score >= threshold``) is a pass on
        ordinal scales. Default: the pass threshold of the rubric (each judge is compared
        with the labels of its own rubric); an ordinal scale whose rubric is not found
        needs ``threshold`` or ``rubric_dirs`` (``InputError`` otherwise).
    dev_items :
        Trajectory ids used only to search a judge's threshold; left out of every statistic.
    baseline :
        A previous ``report.json`` (path or dict): usage (cost, tokens, turns, latency per
        trajectory) above ``baseline_tolerance`` x its values, or a pass^k whose upper bound
        falls below its point estimate, fails the report.
    baseline_tolerance :
        The usage ratio to the baseline that counts as a regression (default 1.5).
    fail_under :
        Gate expressions (see :mod:`trajudge.report._gates`), e.g. ``"kappa>=0.6"``.
    primary_source :
        The source of unqualified ``pass^k`` gates (default: the first judge, else outcome).
    fingerprint_file :
        A saved agent fingerprint to compare with this dataset's.
    rubric :
        Only the judges and labels of this rubric id.
    rubric_dirs :
        Folders of the user's own rubrics (as ``rubric_dirs`` in the config), where their
        pass thresholds are read.
    jury :
        Add the jury of each rubric's judges (two or more) as a judge of its own.
    inconsistent_as :
        What a pairwise or nominal item whose two orders disagree becomes: ``"tie"`` (the
        default for pairwise verdicts) or ``"inconsistent"`` (the default for nominal ones).
    aligned :
        Aligned-judge records (``Store.aligned_judge``); default every aligned judge in the
        store. One judged here under its name, or fitted here on a judge that is here, is a
        judge of the report with its own threshold (measured on its holdout tasks when fitted
        here); the ones fitted here get an Alignment section.
    gates :
        The rule severities that gate (``trajudge.yaml``'s ``gates``: the ones whose failure
        skipped the judges); default ``gate``, the stored ``gates_passed``.
    stop_when :
        The stopping rule of the Labels section (``--strategy active``):
        ``STATISTIC>=NUMBER[@LEVEL]`` (:func:`trajudge.report.parse_stop_rule`).

    Notes
    -----
    Items are trajectories, and pairs of trajectories for pairwise judges, which get their
    own measures (accuracy per order, consistency, flip rate, kappa, win rates; see
    :func:`trajudge.calibration.analyze_categorical`); errored judgments are counted per
    judge and never scored. ``length`` is the rendered character count.
    """
    parse_gates(fail_under)  # a bad expression fails before any work
    stop_rule = parse_stop_rule(stop_when)
    inputs = store_inputs(store, dataset, label_source=label_source, aligned=aligned, gates=gates)
    judgments = validate_table(inputs.judgments, "judgments", source=f"{store.url} judgments")
    labels = validate_table(inputs.labels, "labels", source=f"{store.url} labels")
    tables = Tables(
        judgments=judgments,
        labels=labels,
        raw_labels=validate_table(inputs.raw_labels, "labels", source=f"{store.url} labels"),
        trajs=inputs.trajectories,
        has_rules=inputs.has_rules,
        notes=[LENGTH_NOTE, *inputs.notes],
        categorical=store_groups(
            inputs, rubric=rubric, rubric_dirs=[str(d) for d in rubric_dirs], kinds={}
        ),
    )
    report = _from_tables(
        tables,
        dataset=dataset,
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
        fp=inputs.fingerprint,
        fingerprint_file=fingerprint_file,
        rubric=rubric,
        rubric_dirs=rubric_dirs,
        jury=jury,
        inconsistent_as=inconsistent_as,
        judge_thresholds=aligned_thresholds(inputs.aligned),
        alignment=[r for r in inputs.aligned if r["dataset"] == dataset],
    )
    ids = judgments.get("rubric_id", pd.Series(dtype=str)).dropna().astype(str)
    chosen = sorted(set(ids)) if rubric is None else [rubric]
    report.labels_drawn = active_summaries(
        store, dataset, chosen, [str(d) for d in rubric_dirs], rule=stop_rule, ks=ks
    )
    return report
