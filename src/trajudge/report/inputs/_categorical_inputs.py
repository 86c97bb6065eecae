"""Which rubrics' verdicts are categories, and their validated tables.

The verdict kind of a rubric is, in this order: ``--scale`` (plain tables), the kind its rubric
file declares (shipped rubrics or ``--rubric-dir``), else inferred from the values
(:func:`trajudge.calibration.infer_kind`) and said so in the report. Judgments from the store
are categorical when they are pairwise or carry a category instead of a score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from trajudge.calibration import RawTable, infer_kind, validate_table
from trajudge.core import InputError
from trajudge.report._categorical import CategoricalTables
from trajudge.report.inputs._sources import StoreInputs
from trajudge.rubrics import find_rubric
from trajudge.rubrics._kinds import CATEGORICAL, KINDS

OPTION = "--scale"


def _kind_of(
    rubric_id: str | None,
    scale: str | None,
    rubric_dirs: Sequence[str],
    judgments: pd.DataFrame,
    labels: pd.DataFrame,
) -> tuple[str, str, list[str]]:
    """``(kind, where it came from, categories)`` of one rubric's tables."""
    if scale is not None:
        return scale, "given with --scale", []
    found = find_rubric(rubric_id, rubric_dirs)
    if found is not None:
        cats = found.scale.categories if found.scale.categorical else []
        return found.scale.kind, f"declared by rubric {found.id}", cats
    kind, why = infer_kind(judgments, labels)
    return kind, f"inferred: {why}; --scale chooses", []


def _rubric_ids(frame: pd.DataFrame) -> list[str | None]:
    if "rubric_id" not in frame:
        return [None] * len(frame)
    return [
        None if v is None or (isinstance(v, float) and pd.isna(v)) or not str(v).strip() else str(v)
        for v in frame["rubric_id"].tolist()
    ]


def split_plain(
    judgments: RawTable,
    labels: RawTable,
    *,
    scale: str | None,
    rubric: str | None,
    rubric_dirs: Sequence[str],
    ba_mapped: bool | None,
    kinds: dict[str, dict[str, Any]],
) -> tuple[pd.DataFrame, pd.DataFrame, list[CategoricalTables]]:
    """Plain tables split by verdict kind: the validated numeric judgments and labels (every
    binary or ordinal rubric, as before) and one :class:`CategoricalTables` per rubric whose
    verdicts are categories. ``kinds`` receives each rubric's kind and its source."""
    if scale is not None and scale not in KINDS:
        raise InputError(OPTION, reason=f"{scale!r} is not one of {', '.join(KINDS)}")
    j_ids, l_ids = _rubric_ids(judgments.frame), _rubric_ids(labels.frame)
    j_named = any(x is not None for x in j_ids)
    l_named = any(x is not None for x in l_ids)
    named: list[str | None] = [*sorted({x for x in j_ids if x is not None})]
    wanted: list[str | None] = [rubric] if rubric is not None else named or [None]
    numeric_j: set[int] = set()
    numeric_l: set[int] = set()
    groups: list[CategoricalTables] = []
    for r in wanted:
        j_rows = [i for i, x in enumerate(j_ids) if not j_named or x == r]
        l_rows = [i for i, x in enumerate(l_ids) if not l_named or x == r]
        kind, source, cats = _kind_of(
            r, scale, rubric_dirs, judgments.frame.iloc[j_rows], labels.frame.iloc[l_rows]
        )
        kinds[str(r)] = {"kind": kind, "source": source}
        if kind not in CATEGORICAL:
            numeric_j.update(j_rows)
            numeric_l.update(l_rows)
            continue
        if len(wanted) > 1 and not l_named:
            raise InputError(
                "--rubric",
                reason=f"the judgments carry {len(wanted)} rubrics ({', '.join(map(str, wanted))}) "
                "and the labels name none: choose one with --rubric",
            )
        groups.append(
            CategoricalTables(
                rubric=r,
                kind=kind,
                kind_source=source,
                judgments=judgments.validate(
                    "judgments", rows=j_rows, kind=kind, ba_mapped=ba_mapped
                ),
                labels=labels.validate("labels", rows=l_rows, kind=kind),
                categories=cats,
            )
        )
    if not groups:  # every rubric binary or ordinal: the tables as they are
        return judgments.validate("judgments"), labels.validate("labels"), groups
    # rows naming no rubric among rows that do stay in, so validation refuses them by line
    numeric_j.update(i for i, x in enumerate(j_ids) if j_named and x is None)
    numeric_l.update(i for i, x in enumerate(l_ids) if l_named and x is None)
    nj = judgments.validate("judgments", rows=sorted(numeric_j))
    nl = labels.validate("labels", rows=sorted(numeric_l))
    return nj, nl, groups


def store_groups(
    inputs: StoreInputs,
    *,
    rubric: str | None,
    rubric_dirs: Sequence[str],
    kinds: dict[str, dict[str, Any]],
) -> list[CategoricalTables]:
    """One :class:`CategoricalTables` per pairwise or nominal rubric of a stored dataset."""
    out: list[CategoricalTables] = []
    for judgments, labels, kind in (
        (inputs.pair_judgments, inputs.pair_labels, "pairwise"),
        (inputs.category_judgments, inputs.category_labels, "nominal"),
    ):
        if judgments.empty:
            continue
        for rid, rows in judgments.groupby("rubric_id", sort=True):
            if rubric is not None and rid != rubric:
                continue
            found = find_rubric(str(rid), rubric_dirs)
            cats = found.scale.categories if found is not None and found.scale.categorical else []
            source = (
                f"declared by rubric {rid}"
                if found is not None
                else "read from the stored judgments"
            )
            kinds[str(rid)] = {"kind": kind, "source": source}
            labs = labels[labels["rubric_id"] == rid] if len(labels) else labels
            out.append(
                CategoricalTables(
                    rubric=str(rid),
                    kind=kind,
                    kind_source=source,
                    judgments=validate_table(
                        rows, "judgments", source="judgments", kind=kind, ba_mapped=True
                    ),
                    labels=validate_table(
                        labs[["item", "annotator", "label"]]
                        if len(labs)
                        else pd.DataFrame(columns=["item", "annotator", "label"]),
                        "labels",
                        source="labels",
                        kind=kind,
                    ),
                    categories=cats,
                )
            )
    return out
