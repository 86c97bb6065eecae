"""Pairwise and nominal judges in the report: their tables, rows and the categorical jury.

A categorical judge (verdicts A/B/tie, or named categories) is compared with the majority
category of the labels of its rubric by :func:`trajudge.calibration.analyze_categorical`:
accuracy per order, positional consistency, flip rate, first-position pick rate, kappa per
order and aggregated, confusion matrix, win rates. It has no pass/fail, hence no pass^k.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from trajudge.calibration import (
    CategoricalReport,
    CategoricalResult,
    analyze_categorical,
    categorical_items,
)
from trajudge.calibration.categorical._categorical_analysis import gold_categories
from trajudge.calibration.panel import alt_test
from trajudge.report.panel._build import jury_figures

JURY = "jury"


@dataclass
class CategoricalTables:
    """The validated judgments and labels of one rubric whose verdicts are categories.

    ``judgments``: ``item, judge, order, sample, verdict`` (pairwise verdicts in the original
    numbering), optional ``error, task_id, system_a, system_b, judge_model, cost_usd,
    latency_s, judge_config_sha256``; ``labels``: ``item, annotator, label``.
    ``kind_source`` says where the kind came from (the rubric, ``--scale``, or inferred).
    """

    rubric: str | None
    kind: str
    kind_source: str
    judgments: pd.DataFrame
    labels: pd.DataFrame
    categories: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CategoricalRow:
    """One pairwise or nominal judge (or the jury of a rubric's judges) in the report."""

    name: str
    judge: str
    rubric_id: str | None
    kind: str
    models: list[str]
    calibration: CategoricalReport
    config: dict[str, Any] | None = None
    members: list[str] = field(default_factory=list)  # the jury's judges

    def to_dict(self) -> dict[str, Any]:
        full = self.calibration.to_dict()
        return {
            "name": self.name,
            "judge": self.judge,
            "rubric_id": self.rubric_id,
            "kind": self.kind,
            "models": self.models,
            "config": self.config,
            "members": self.members,
            # the figures gates read (``--fail-under kappa>=0.6`` covers these judges too)
            "kappa": full["kappa"].get("aggregate"),
            "agreement": full["agreement"],
            "flip_rate": full["flip_rate"],
            "consistency": full["consistency"],
            "accuracy": full["accuracy_average"],
            "n_judgments": self.calibration.n_rows + self.calibration.n_errors,
            "n_errors": self.calibration.n_errors,
            "n_items": self.calibration.n_items,
            "calibration": full,
        }


def jury_rows(judgments: pd.DataFrame, kind: str, inconsistent_as: str | None) -> pd.DataFrame:
    """The jury as a judge of its own: one call per member judge (a "sample"), whose verdict
    is that member's aggregate; the jury's aggregate is then their majority category
    (:func:`trajudge.judges.aggregate_jury` with ``categorical=True``), ties of the top count
    becoming ``inconsistent_as``."""
    parts = []
    for i, (_, rows) in enumerate(judgments.groupby("judge", sort=True)):
        agg = categorical_items(rows, kind=kind, inconsistent_as=inconsistent_as)
        parts.append(
            pd.DataFrame(
                {
                    "item": agg.index,
                    "judge": JURY,
                    "order": "ab",
                    "sample": i,
                    "verdict": agg["verdict"].to_numpy(),
                    "error": None,
                }
            )
        )
    out = pd.concat(parts, ignore_index=True)
    # What describes the item (rubric, task, systems) and is the same in every member's rows
    # is the jury's too; what describes a call (model, score, cost) is not.
    first = judgments.drop_duplicates("item").set_index("item")
    by_item = judgments.groupby("item", sort=False)
    for col in judgments.columns:
        if col in out or col == "item":
            continue
        if (by_item[col].nunique(dropna=False) <= 1).all():
            out[col] = out["item"].map(first[col])
    return out


def categorical_panel(
    judgments: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    kind: str,
    inconsistent_as: str | None,
    categories: Sequence[str] = (),
    n_boot: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """The Dawid-Skene jury of the rubric's pairwise or nominal judges (each category a
    class; a pairwise verdict's A / B / tie three classes) and the alt-test of each judge:
    its aggregate category per item against the labellers' own labels (an adjudication is
    no annotator)."""
    own = labels[~labels["annotator"].astype(str).str.startswith("adjudication:")]
    own = own.dropna(subset=["label"])
    out: dict[str, Any] = {"slices": [], "jury": None, "alt_test": {}, "notes": []}
    verdicts = {
        str(judge): categorical_items(rows, kind=kind, inconsistent_as=inconsistent_as)[
            "verdict"
        ].dropna()
        for judge, rows in judgments.groupby("judge", sort=True)
    }
    gold, _ = gold_categories(labels[["item", "annotator", "label"]])
    if len(gold):
        said = {str(c) for verdict in verdicts.values() for c in verdict}
        seen = said | {str(c) for c in own["label"]}
        classes = [*categories, *sorted(seen - set(categories))]
        known = judgments.drop_duplicates("item").set_index("item").get("task_id")
        every = pd.Index(sorted({i for v in verdicts.values() for i in v.index} | set(gold.index),
                                key=str))  # fmt: skip
        tasks = pd.Series(
            [str(known.get(i)) if known is not None and pd.notna(known.get(i)) else str(i)
             for i in every], index=every,
        )  # fmt: skip
        out["jury"] = jury_figures(
            verdicts, own[["item", "annotator", "label"]], gold, tasks,
            n_boot=n_boot, seed=seed, notes=out["notes"], classes=classes,
        )  # fmt: skip
    else:
        out["notes"].append("Dawid-Skene jury: no item has a majority label to score it on")
    n = own["annotator"].nunique()
    if n < 3:
        out["notes"].append(f"alternative annotator test: needs 3 or more annotators, {n} labelled")
        return out
    for judge, verdict in verdicts.items():
        found = alt_test(judge=verdict, annotators=own[["item", "annotator", "label"]])
        out["alt_test"][judge] = found.to_dict()
    return out


def assemble_categorical(
    groups: Sequence[CategoricalTables],
    *,
    n_boot: int,
    seed: int,
    inconsistent_as: str | None,
    jury: bool,
    notes: list[str],
    panel: dict[str, dict[str, Any]] | None = None,
) -> tuple[list[CategoricalRow], dict[str, CategoricalResult]]:
    """Calibrate the judges of every categorical rubric (and, with ``jury``, the jury of the
    judges of each rubric that has two or more). ``panel`` receives, per rubric, the
    alternative annotator test of each judge (``report.panel``)."""
    rows: list[CategoricalRow] = []
    results: dict[str, CategoricalResult] = {}
    for g in groups:
        if g.judgments.empty:
            continue
        judgments = g.judgments
        members = sorted(str(j) for j in judgments["judge"].unique())
        if jury and len(members) >= 2:
            judgments = pd.concat(
                [judgments, jury_rows(judgments, g.kind, inconsistent_as)], ignore_index=True
            )
        result = analyze_categorical(
            judgments,
            g.labels[["item", "annotator", "label"]],
            kind=g.kind,
            categories=g.categories,
            inconsistent_as=inconsistent_as,
            ba_mapped=True,
            n_boot=n_boot,
            seed=seed,
        )
        results[str(g.rubric)] = result
        notes.append(
            f"rubric {g.rubric}: {g.kind} verdicts ({g.kind_source}); an item whose two orders "
            f"disagree counts as {next(iter(result.judges.values())).inconsistent_as!r}"
        )
        if panel is not None:
            panel[str(g.rubric)] = categorical_panel(
                judgments[judgments["judge"] != JURY],
                g.labels,
                kind=g.kind,
                inconsistent_as=inconsistent_as,
                categories=g.categories,
                n_boot=n_boot,
                seed=seed,
            )
        for judge, report in result.judges.items():
            name = f"{judge}:{g.rubric}" if _several_rubrics(groups, judge) else judge
            mine = judgments[judgments["judge"] == judge]
            rows.append(
                CategoricalRow(
                    name=name,
                    judge=judge,
                    rubric_id=g.rubric,
                    kind=g.kind,
                    models=sorted(
                        {str(m) for m in mine.get("judge_model", pd.Series(dtype=object)).dropna()}
                    ),
                    calibration=report,
                    config=_config(mine),
                    members=members if judge == JURY else [],
                )
            )
    return rows, results


def _several_rubrics(groups: Sequence[CategoricalTables], judge: str) -> bool:
    return sum(judge in set(g.judgments["judge"]) for g in groups) > 1


def _config(rows: pd.DataFrame) -> dict[str, Any] | None:
    if "judge_config_sha256" not in rows or rows.empty:
        return None
    first = rows.iloc[0]

    def text(col: str) -> str | None:
        value = first.get(col)
        return value if isinstance(value, str) else None

    return {
        "sha256": text("judge_config_sha256"),
        "model": text("judge_model"),
        "api_base": text("judge_api_base"),
    }
