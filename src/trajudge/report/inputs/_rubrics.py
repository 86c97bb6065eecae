"""Judges and labels matched by rubric, and where each rubric's ordinal scale is threshold.

A label says something about one rubric's question: a judge is compared only with labels of
its own rubric. Judgments and labels from the store always name their rubric; plain tables
may not, and then the match must be unambiguous or chosen with ``--rubric``.

The pass threshold of an ordinal scale comes from ``--threshold`` or from the rubric that
declares the scale (shipped rubrics, or the folders given with ``--rubric-dir`` /
``rubric_dirs`` in the config), never from the scores of the judges in the report.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import pandas as pd

from trajudge.calibration import Threshold
from trajudge.core import InputError
from trajudge.rubrics import find_rubric

OPTION = "--rubric"


def rubric_threshold(rubric_id: str | None, rubric_dirs: Sequence[str] = ()) -> float | None:
    """The pass threshold of the rubric's ordinal scale; None for a binary or unknown rubric."""
    rubric = find_rubric(rubric_id, rubric_dirs)
    if rubric is None or rubric.scale.kind != "ordinal":
        return None
    return rubric.scale.pass_threshold


def threshold_text(threshold: Threshold, rubric_id: str | None) -> str:
    """Where a threshold came from, in words (for the report's notes)."""
    if threshold.source == "given":
        return "given (--threshold)"
    if threshold.source == "rubric":
        return f"the pass threshold of rubric {rubric_id}"
    if threshold.source == "dev":
        return "the best κ on the dev items"
    if threshold.source == "aligned":
        return "its aligned rule, fitted on dev (trajudge align; see Alignment)"
    return "pass/fail values"


@dataclass
class RubricGroup:
    """The judgments and labels that belong to one rubric (``rubric`` None: not named)."""

    rubric: str | None
    judgments: pd.DataFrame
    labels: pd.DataFrame  # the chosen labels (adjudications resolved)
    raw_labels: pd.DataFrame  # labellers' own labels, for the ceiling
    threshold: float | None  # the rubric's ordinal pass threshold
    borrowed_from: str | None = None  # labels of another rubric (reference labels only)


def _ids(frame: pd.DataFrame) -> list[str] | None:
    if "rubric_id" not in frame or frame["rubric_id"].isna().all():
        return None
    return sorted({str(r) for r in frame["rubric_id"].dropna()})


def _of(frame: pd.DataFrame, rubric: str | None) -> pd.DataFrame:
    if rubric is None or "rubric_id" not in frame:
        return frame
    return frame[frame["rubric_id"].astype(str) == rubric]


def _ambiguous(what: str, ids: list[str], other: str) -> InputError:
    return InputError(
        OPTION,
        reason=f"the {what} carry {len(ids)} rubrics ({', '.join(ids)}) and the {other} name none: "
        f"choose one with {OPTION}",
    )


def rubric_groups(
    judgments: pd.DataFrame,
    labels: pd.DataFrame,
    raw_labels: pd.DataFrame,
    *,
    rubric: str | None,
    rubric_dirs: Sequence[str],
    human: bool,
    notes: list[str],
    elsewhere: Collection[str] = (),
) -> tuple[list[RubricGroup], list[RubricGroup]]:
    """Groups of judges (each with the labels of its rubric) and groups of labels.

    The first list has one group per rubric of the judgments, the second one per rubric of
    the labels (the label sources of the report). Rules:

    * ``rubric`` given: only judgments and labels of that rubric (rows that name another
      rubric are left out); its threshold applies. A rubric in ``elsewhere`` (the pairwise
      and nominal rubrics, kept in tables of their own) leaves these tables empty.
    * both tables name rubrics: matched by id. A judge whose rubric has no labels gets
      none (a note says so), except with reference labels (not human) of a single rubric:
      those are compared with every judge, and a note says so.
    * one table names rubrics, the other does not: fine when the naming one has exactly
      one rubric; otherwise ``InputError`` asking for ``--rubric``.
    """
    j_ids, l_ids = _ids(judgments), _ids(labels)
    if rubric is not None:
        known = find_rubric(rubric, rubric_dirs) is not None
        if not known and j_ids is None and l_ids is None:
            raise InputError(OPTION, reason=f"no rubric {rubric!r} (shipped or in a folder)")
        seen = sorted(set(j_ids or []) | set(l_ids or []))
        if seen and rubric not in seen and rubric not in elsewhere:
            raise InputError(
                OPTION, reason=f"no judgments or labels of rubric {rubric!r} ({', '.join(seen)})"
            )
        judgments, labels, raw_labels = (_of(f, rubric) for f in (judgments, labels, raw_labels))
        j_ids = l_ids = [rubric]
    elif j_ids is None and l_ids is not None and len(l_ids) > 1 and len(judgments):
        raise _ambiguous("labels", l_ids, "judgments")
    elif l_ids is None and j_ids is not None and len(j_ids) > 1 and len(labels):
        raise _ambiguous("judgments", j_ids, "labels")
    elif j_ids is None and l_ids is not None:
        j_ids = l_ids[:1] if len(judgments) else []
    elif l_ids is None and j_ids is not None:
        l_ids = j_ids[:1] if len(labels) else []
    judge_ids: list[str | None] = list(j_ids) if j_ids is not None else [None]
    label_ids: list[str | None] = list(l_ids) if l_ids is not None else [None]
    if not len(judgments):
        judge_ids = []
    if not len(labels):
        label_ids = []
    named = _ids(labels) is not None

    def group(r: str | None, labs_of: str | None) -> RubricGroup:
        pick = labs_of if named else None
        return RubricGroup(
            rubric=r,
            judgments=_of(judgments, r) if _ids(judgments) is not None else judgments,
            labels=_of(labels, pick),
            raw_labels=_of(raw_labels, pick),
            threshold=rubric_threshold(r, rubric_dirs),
        )

    judges: list[RubricGroup] = []
    for r in judge_ids:
        g = group(r, r)
        if g.labels.empty and len(labels) and r not in label_ids:
            if not human and len(label_ids) == 1:
                g = group(r, label_ids[0])
                g.borrowed_from = label_ids[0]
                notes.append(
                    f"the judges of rubric {r} are compared with the reference labels of "
                    f"rubric {label_ids[0]}"
                )
            else:
                notes.append(
                    f"rubric {r}: no labels of this rubric (labels exist for "
                    f"{', '.join(str(x) for x in label_ids)}): its judges have no κ"
                )
        judges.append(g)
    return judges, [group(r, r) for r in label_ids]
