"""Aggregation: samples and orders of one judge, then several judges (a jury)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from trajudge.judges._judgment import Judgment
from trajudge.judges._rubric import Rubric, load_rubric
from trajudge.trajectories import InputError


@dataclass(frozen=True)
class Aggregate:
    """A judge's conclusion on one item, from its judgments.

    ``score`` is NaN when no call succeeded (an error is never a pass or a fail);
    ``inconsistent`` is None when it does not apply (pointwise, or an order is missing).
    """

    score: float
    n: int
    n_errors: int
    by_order: dict[str, float]
    inconsistent: bool | None
    passed: bool | None


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def _combine(values: list[float], binary: bool) -> float:
    if binary:
        ones = sum(1 for v in values if v >= 0.5)
        zeros = len(values) - ones
        return 1.0 if ones > zeros else 0.0 if zeros > ones else 0.5
    return sum(values) / len(values)


def aggregate_judgments(judgments: Sequence[Judgment], rubric: Rubric | None = None) -> Aggregate:
    """Combine the calls for one item: samples within an order, then the orders.

    Samples of one order: the mean (ordinal) or the majority (binary; an even split is 0.5).
    Orders: the mean of the per-order values. ``inconsistent`` (position flip):

    - pairwise: the mapped-back preference differs in sign between ``ab`` and ``ba``
      (e.g. trajectory wins as A and loses as B: the judge followed the position);
    - reference: the sign of (candidate - reference) differs between the two orders.
    """
    ok = [j for j in judgments if j.error is None and j.score is not None]
    n_errors = len(judgments) - len(ok)
    binary = rubric is not None and rubric.scale.kind == "binary"
    mode = rubric.mode if rubric is not None else (ok[0].mode if ok else "pointwise")
    by_order: dict[str, float] = {}
    margins: dict[str, float] = {}
    for order in ("ab", "ba"):
        these = [j for j in ok if j.order == order]
        if not these:
            continue
        by_order[order] = _combine([float(j.score) for j in these if j.score is not None], binary)
        refs = [(float(j.score or 0) - j.other_score) for j in these if j.other_score is not None]
        if refs:
            margins[order] = sum(refs) / len(refs)
    score = sum(by_order.values()) / len(by_order) if by_order else math.nan
    inconsistent: bool | None = None
    if mode == "pairwise" and len(by_order) == 2:
        inconsistent = _sign(by_order["ab"] - 2) != _sign(by_order["ba"] - 2)
    elif mode == "reference" and len(margins) == 2:
        inconsistent = _sign(margins["ab"]) != _sign(margins["ba"])
    passed: bool | None = None
    if rubric is not None and mode != "pairwise" and not math.isnan(score):
        passed = rubric.scale.passed(score)
    return Aggregate(score, len(ok), n_errors, by_order, inconsistent, passed)


@dataclass(frozen=True)
class JuryVerdict:
    """Several judges' aggregates combined: mean (ordinal) or majority (binary)."""

    score: float
    n_judges: int
    n_missing: int
    agreement: float


def aggregate_jury(aggregates: Sequence[Aggregate], *, binary: bool = False) -> JuryVerdict:
    """Combine judges: the mean of their scores, or for a binary scale the majority vote.

    Judges without a score (all calls failed) are left out and counted in ``n_missing``.
    ``agreement`` is the share of judges on the majority side (binary) or within one scale
    point of the jury's score (ordinal). With no scores at all, the score is NaN.

    >>> a = [Aggregate(1.0, 1, 0, {"ab": 1.0}, None, True),
    ...      Aggregate(0.0, 1, 0, {"ab": 0.0}, None, False),
    ...      Aggregate(1.0, 1, 0, {"ab": 1.0}, None, True)]
    >>> v = aggregate_jury(a, binary=True)
    >>> (v.score, v.n_judges, round(v.agreement, 3))
    (1.0, 3, 0.667)
    """
    scores = [a.score for a in aggregates if not math.isnan(a.score)]
    missing = len(aggregates) - len(scores)
    if not scores:
        return JuryVerdict(math.nan, 0, missing, math.nan)
    if binary:
        score = _combine([1.0 if s >= 0.5 else 0.0 for s in scores], True)
        side = [1.0 if s >= 0.5 else 0.0 for s in scores]
        agree = sum(1 for s in side if s == score) / len(side) if score != 0.5 else 0.5
    else:
        score = sum(scores) / len(scores)
        agree = sum(1 for s in scores if abs(s - score) <= 1.0) / len(scores)
    return JuryVerdict(score, len(scores), missing, agree)


def aggregate_frame(
    frame: pd.DataFrame, rubrics: Mapping[str, Rubric] | None = None
) -> pd.DataFrame:
    """Aggregate a judgments table (``Store.judgments_frame``) per item and judge.

    One row per (trajectory_id, other_id, judge, rubric_id): ``score``, ``n``, ``n_errors``,
    ``inconsistent`` (position flip, None where it does not apply) and ``passed``. Rubrics are
    looked up in ``rubrics`` by id, else among the shipped ones; an unknown rubric is
    aggregated as ordinal with ``passed`` None.
    """
    columns = [
        "trajectory_id",
        "other_id",
        "judge",
        "rubric_id",
        "mode",
        "score",
        "n",
        "n_errors",
        "inconsistent",
        "passed",
    ]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    known: dict[str, Rubric | None] = dict(rubrics or {})
    out: list[dict[str, object]] = []
    records: dict[tuple[str, str | None, str, str], list[dict[str, object]]] = {}
    for rec in frame.to_dict("records"):
        row = {str(k): v for k, v in rec.items()}
        oid = _none(row.get("other_id"))
        key = (
            str(row["trajectory_id"]),
            None if oid is None else str(oid),
            str(row["judge"]),
            str(row["rubric_id"]),
        )
        records.setdefault(key, []).append(row)
    for (tid, oid, judge, rid), rows in records.items():
        if rid not in known:
            try:
                known[rid] = load_rubric(rid)
            except InputError:
                known[rid] = None
        agg = aggregate_judgments([_from_row(r) for r in rows], known[rid])
        out.append(
            {
                "trajectory_id": tid,
                "other_id": oid,
                "judge": judge,
                "rubric_id": rid,
                "mode": rows[0]["mode"],
                "score": agg.score,
                "n": agg.n,
                "n_errors": agg.n_errors,
                "inconsistent": agg.inconsistent,
                "passed": agg.passed,
            }
        )
    return pd.DataFrame(out, columns=columns)


def _none(value: object) -> object:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _from_row(row: Mapping[str, object]) -> Judgment:
    raw = row.get("raw")
    other_score = None
    if isinstance(raw, str) and raw:
        try:
            other_score = json.loads(raw).get("other_score")
        except ValueError:
            other_score = None
    score = _none(row.get("score"))
    return Judgment(
        trajectory_id=str(row["trajectory_id"]),
        other_id=_none(row.get("other_id")),  # type: ignore[arg-type]
        judge=str(row["judge"]),
        rubric_id=str(row["rubric_id"]),
        rubric_version=str(row["rubric_version"]),
        model=str(row["model"]),
        mode=str(row["mode"]),
        order="ba" if row.get("order") == "ba" else "ab",
        sample=int(row.get("sample") or 0),  # type: ignore[call-overload]
        score=None if score is None else float(score),  # type: ignore[arg-type]
        error=_none(row.get("error")),  # type: ignore[arg-type]
        other_score=None if other_score is None else float(other_score),
    )
