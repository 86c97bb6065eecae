"""From normalised tables to a :class:`Report`: calibration per rubric, sources, gating.

The gate rule (DESIGN.md): a trajectory passes when every gate check passes and the chosen
verdict source says pass. So a trajectory that failed a rule gate counts as a fail for every
source except the raw environment outcome: for each judge (whether or not it judged the
trajectory) and for the labels (on labelled trajectories only, since labels are a sample).
Agreement statistics (kappa, AC1, TPR/TNR) compare the judge's own verdicts with the labels
and are not gated: they describe the judge, not the agent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from trajudge.calibration import (
    CalibrationResult,
    Threshold,
    analyze,
    consensus,
    first_position_probe,
    human_agreement,
    item_means,
    label_threshold,
)
from trajudge.report._categorical import (
    JURY,
    CategoricalRow,
    CategoricalTables,
    assemble_categorical,
)
from trajudge.report._jury import add_jury
from trajudge.report._model import Ceiling, Flag, JudgeRow, SourceResult
from trajudge.report._rows import _flags, _judge_row, gate, item_pass, source_result
from trajudge.report.inputs._labels import as_pass, consensus_pass
from trajudge.report.inputs._rubrics import rubric_groups, threshold_text
from trajudge.report.panel._build import rubric_panel

# The jury's calls are its members' verdicts, one "sample" each: probes that read samples as
# repeats of one judge measure how much the members differ, which is not about the jury.
_MEMBER_PROBES = ("stability", "central_tendency")

GATE_RULE = (
    "A trajectory passes when every gate check passes and the verdict source says pass: a "
    "trajectory that failed a rule gate is a fail for every source except the raw environment "
    "outcome (for label sources, on labelled trajectories). Agreement with the labels is "
    "measured on the judges' own verdicts, ungated."
)


@dataclass
class Tables:
    """Normalised inputs: validated judgments and labels, one row per trajectory.

    ``trajs`` has ``trajectory_id``, ``task_id``, ``outcome``, ``gates_passed`` and, when
    known, usage columns and boundary ``tags``; it is None when no task ids are known.
    """

    judgments: pd.DataFrame
    labels: pd.DataFrame
    raw_labels: pd.DataFrame
    trajs: pd.DataFrame | None
    has_rules: bool
    notes: list[str] = field(default_factory=list)
    # rubrics whose verdicts are categories (pairwise, nominal): their own measures
    categorical: list[CategoricalTables] = field(default_factory=list)


@dataclass
class Parts:
    """What :func:`assemble` computed, before the summary and the gates."""

    judges: list[JudgeRow]
    sources: list[SourceResult]
    ceilings: list[Ceiling]
    flags: list[Flag]
    thresholds: dict[str, dict[str, Any]]
    calibration: dict[str, CalibrationResult]
    label_pass: dict[str, pd.Series]
    n_labeled_items: int
    n_skipped_labels: int
    tied_items: list[str]
    n_gate_failed: int | None
    categorical: list[CategoricalRow] = field(default_factory=list)
    # per rubric: agreement by slice, the Dawid-Skene jury, the alt-test (report.panel)
    panel: dict[str, dict[str, Any]] = field(default_factory=dict)


def assemble(
    tables: Tables,
    *,
    label_source: str,
    human: bool,
    phrase: str,
    ks: Sequence[int],
    n_boot: int,
    seed: int,
    threshold: float | None,
    dev_items: Collection[Any] | None,
    rubric: str | None = None,
    rubric_dirs: Sequence[str] = (),
    jury: bool = False,
    inconsistent_as: str | None = None,
    judge_thresholds: dict[str, Threshold] | None = None,
    slice_method: str = "holm",
) -> Parts:
    """Calibrate every judge against the labels of its rubric, then pass^k per source with
    the gate rule applied. Pairwise and nominal judges (``tables.categorical``) get their
    own measures; ``jury`` adds the jury of each rubric's judges as a judge of its own."""
    ks = sorted({int(k) for k in ks})
    j, notes = tables.judgments, tables.notes
    dev = {str(i) for i in dev_items} if dev_items else set()
    trajs = tables.trajs
    if trajs is not None and dev:
        trajs = trajs[~trajs["trajectory_id"].isin(dev)].reset_index(drop=True)
    judge_groups, label_groups = rubric_groups(
        j,
        tables.labels,
        tables.raw_labels,
        rubric=rubric,
        rubric_dirs=rubric_dirs,
        human=human,
        notes=notes,
        elsewhere=[str(g.rubric) for g in tables.categorical],
    )
    judge_names = j.groupby("judge")["rubric_id"].nunique() if "rubric_id" in j else None
    rows: list[JudgeRow] = []
    flags: list[Flag] = []
    calibrations: dict[str, CalibrationResult] = {}
    thresholds: dict[str | None, Threshold] = {}
    panel: dict[str, dict[str, Any]] = {}
    for g in label_groups:
        thresholds[g.rubric] = label_threshold(
            g.labels["label"].dropna(), threshold=threshold, rubric_threshold=g.threshold
        )
    for g in judge_groups:
        if jury:
            g.judgments = add_jury(g.judgments, threshold=threshold, rubric_threshold=g.threshold)
        labs = g.labels[["item", "annotator", "label"]]
        if g.borrowed_from is not None:  # reference labels of another rubric, cut by theirs
            labs = as_pass(labs, thresholds[g.borrowed_from].value)
        result = analyze(
            g.judgments,
            labs,
            ks=ks,
            threshold=threshold,
            rubric_threshold=g.threshold,
            n_boot=n_boot,
            seed=seed,
            dev_items=dev_items,
            judge_thresholds=judge_thresholds,
        )
        calibrations[str(g.rubric)] = result
        level = result.label_threshold.value if result.label_threshold is not None else None
        h_pass = consensus_pass(as_pass(labs, level))
        verdicts: dict[str, pd.Series] = {}
        shares: dict[str, pd.Series] = {}
        for judge, report in result.judges.items():
            if judge == JURY:
                report = dataclasses.replace(
                    report, probes={**report.probes, **dict.fromkeys(_MEMBER_PROBES)}
                )
            ambiguous = judge_names is not None and judge_names.get(judge, 1) > 1
            name = f"{judge}:{g.rubric}" if ambiguous else judge
            rows_j = g.judgments[g.judgments["judge"] == judge]
            rows_j = rows_j[~rows_j["item"].isin(dev)]
            if judge != JURY:
                verdicts[name] = item_pass(rows_j, report.threshold)
                # the pass share over a binary judge's calls; an ordinal judge's verdict
                shares[name] = (
                    item_means(rows_j)
                    if report.threshold.value is None
                    else verdicts[name].astype(float)
                )
            rows.append(
                _judge_row(
                    name,
                    judge,
                    g.rubric,
                    rows_j,
                    report,
                    h_pass,
                    trajs,
                    tables.has_rules,
                    ks=ks,
                    n_boot=n_boot,
                    seed=seed,
                )
            )
            flags += _flags(name, report)
        if verdicts and len(h_pass[~h_pass.index.isin(dev)]):
            panel[str(g.rubric)] = rubric_panel(
                verdicts, shares, h_pass, as_pass(g.raw_labels, level), trajs, dev=dev,
                method=slice_method, n_boot=n_boot, seed=seed,
            )  # fmt: skip
    sources, ceilings, label_pass = [], [], {}
    n_labeled, tied = 0, []
    for g in label_groups:
        level = thresholds[g.rubric].value
        votes = consensus(as_pass(g.labels.dropna(subset=["label"]), level))
        tied += [str(i) for i in votes.index[votes["tie"]]]
        h_pass = votes["label"].astype(float).dropna()
        h_pass = h_pass[~h_pass.index.isin(dev)]
        n_labeled += len(h_pass)
        key = label_source if len(label_groups) == 1 else f"{label_source}:{g.rubric}"
        label_pass[key] = h_pass
        ceiling = human_agreement(as_pass(g.raw_labels[["item", "annotator", "label"]], level))
        if ceiling is not None:
            ceilings.append(Ceiling(g.rubric, ceiling))
        if trajs is not None and len(h_pass):
            title = phrase if len(label_groups) == 1 else f"{phrase} [{g.rubric}]"
            success = gate(h_pass, trajs, only_known=True) if tables.has_rules else h_pass
            sources.append(
                source_result(
                    key,
                    "labels",
                    title,
                    success,
                    trajs,
                    gated=tables.has_rules,
                    ks=ks,
                    n_boot=n_boot,
                    seed=seed,
                )
            )
    n_gate_failed = None
    if trajs is not None:
        out = trajs.set_index("trajectory_id")["outcome"]
        if out.notna().any():
            outcome = out.astype(object).where(out.notna(), None).astype(float)
            sources.insert(
                0,
                source_result(
                    "outcome",
                    "outcome",
                    "environment outcome",
                    outcome,
                    trajs,
                    gated=False,
                    ks=ks,
                    n_boot=n_boot,
                    seed=seed,
                ),
            )
        if tables.has_rules:
            gp = trajs.set_index("trajectory_id")["gates_passed"]
            n_gate_failed = int((gp == False).sum())  # noqa: E712
            rules = gp.astype(object).where(gp.notna(), None).astype(float)
            sources.insert(
                1 if out.notna().any() else 0,
                source_result(
                    "rules",
                    "rules",
                    "rule gates",
                    rules,
                    trajs,
                    gated=True,
                    ks=ks,
                    n_boot=n_boot,
                    seed=seed,
                ),
            )
    labs_all = tables.labels
    categorical, found = assemble_categorical(
        tables.categorical,
        n_boot=n_boot,
        seed=seed,
        inconsistent_as=inconsistent_as,
        jury=jury,
        notes=notes,
        panel=panel,
    )
    for row in categorical:
        first = row.calibration.first_position
        probe = None if first is None else first_position_probe(first)
        if probe is not None and probe.flagged:
            flags.append(Flag(row.name, probe.name, probe.estimate, probe.rule, probe.detail))
    for rubric_id, cat in found.items():
        n_labeled += cat.n_labeled_items
        tied += cat.tied_items
        if cat.human is not None:
            ceilings.append(Ceiling(rubric_id, cat.human))
    return Parts(
        judges=rows,
        sources=sources,
        ceilings=ceilings,
        flags=flags,
        thresholds={
            str(r): {"value": c.value, "source": threshold_text(c, r)}
            for r, c in thresholds.items()
            if c.value is not None
        },
        calibration=calibrations,
        label_pass=label_pass,
        n_labeled_items=n_labeled,
        n_skipped_labels=int(labs_all["label"].isna().sum())
        + sum(c.n_skipped_labels for c in found.values()),
        tied_items=sorted(set(tied)),
        n_gate_failed=n_gate_failed,
        categorical=categorical,
        panel=panel,
    )
