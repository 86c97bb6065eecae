"""Aggregation: samples and orders of one judge, then several judges (a jury)."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from trajudge.core import InputError
from trajudge.judges.calls._judgment import Judgment
from trajudge.rubrics._kinds import pairwise_verdict
from trajudge.rubrics._rubric import Rubric, load_rubric


@dataclass(frozen=True)
class Aggregate:
    """A judge's conclusion on one item, from its judgments.

    ``score`` is the order-balanced mean score (ordinal) or pass share (binary), NaN when no
    call succeeded (an error is never a pass or a fail) and for categorical verdicts, whose
    aggregate is ``verdict`` (pairwise ``A``/``B``/``tie`` in the original numbering, or a
    nominal category; None when no call succeeded). ``inconsistent`` is None when it does
    not apply (pointwise, or an order is missing). ``passed`` is None for categorical
    verdicts and without a rubric.
    """

    score: float
    n: int
    n_errors: int
    by_order: dict[str, float]
    inconsistent: bool | None
    passed: bool | None
    verdict: str | None = None
    by_order_verdict: dict[str, str] = field(default_factory=dict)


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def _kind(rubric: Rubric | None, ok: Sequence[Judgment]) -> str:
    if rubric is not None:
        return rubric.scale.kind
    if any(j.mode == "pairwise" for j in ok):
        return "pairwise"
    if ok and all(j.score is None for j in ok):  # categories without a known rubric
        return "nominal"
    return "ordinal"


def aggregate_judgments(
    judgments: Sequence[Judgment],
    rubric: Rubric | None = None,
    *,
    inconsistent_as: str | None = None,
) -> Aggregate:
    """Combine the calls for one item: samples within an order, then the orders.

    The per-item verdict is :func:`trajudge.calibration.item_verdicts`, the one aggregation
    every figure of the report uses (ordinal: the mean score over orders against the pass
    threshold; binary: the pass share above one half; pairwise / nominal: the category both
    orders agree on, a flip becoming ``inconsistent_as``, ``tie`` by default for pairwise).
    ``inconsistent`` (position flip):

    - pairwise: the mapped-back verdicts of ``ab`` and ``ba`` differ (e.g. A wins when shown
      first and loses when shown second: the judge followed the position);
    - reference: the sign of (candidate - reference) differs between the two orders.
    """
    # imported on use: the statistics load pandas, which judging alone does not need
    from trajudge.calibration import categorical_items, item_means, item_verdicts

    ok = [
        j for j in judgments if j.error is None and (j.score is not None or j.verdict is not None)
    ]
    n_errors = len(judgments) - len(ok)
    kind = _kind(rubric, ok)
    rows = pd.DataFrame(
        {
            "item": ["item"] * len(ok),
            "order": [j.order for j in ok],
            "score": [j.score for j in ok],
            "verdict": [j.verdict for j in ok],
        }
    )
    if kind in ("pairwise", "nominal"):
        found = categorical_items(rows, kind=kind, inconsistent_as=inconsistent_as)
        if found.empty:
            return Aggregate(math.nan, 0, n_errors, {}, None, None)
        first = found.iloc[0]
        by_verdict = {o: str(first[o]) for o in ("ab", "ba") if isinstance(first[o], str)}
        flip = bool(first["flipped"]) if len(by_verdict) == 2 else None
        return Aggregate(
            math.nan, len(ok), n_errors, {}, flip, None, str(first["verdict"]), by_verdict
        )
    ordinal = kind != "binary"
    if kind == "binary":  # pass/fail values: the 0/1 score stands for the verdict
        rows["verdict"] = None
    by_order: dict[str, float] = {}
    for order in ("ab", "ba"):
        these = rows[rows["order"] == order]
        if len(these):
            by_order[order] = float(item_means(these, ordinal=ordinal).iloc[0])
    score = float(item_means(rows, ordinal=ordinal).iloc[0]) if len(rows) else math.nan
    margins: dict[str, float] = {}
    for order in ("ab", "ba"):
        refs = [
            float(j.score or 0) - j.other_score
            for j in ok
            if j.order == order and j.other_score is not None
        ]
        if refs:
            margins[order] = sum(refs) / len(refs)
    mode = rubric.mode if rubric is not None else (ok[0].mode if ok else "pointwise")
    inconsistent: bool | None = None
    if mode == "reference" and len(margins) == 2:
        inconsistent = _sign(margins["ab"]) != _sign(margins["ba"])
    passed: bool | None = None
    if rubric is not None and not math.isnan(score):
        threshold = None if kind == "binary" else rubric.scale.pass_threshold
        passed = bool(item_verdicts(rows, threshold=threshold).iloc[0] == 1.0)
    return Aggregate(score, len(ok), n_errors, by_order, inconsistent, passed)


@dataclass(frozen=True)
class JuryVerdict:
    """Several judges' aggregates combined: mean (ordinal), majority (binary, categorical).

    ``verdict`` is the majority category of categorical judges (None otherwise, or when the
    top count is shared: no majority).
    """

    score: float
    n_judges: int
    n_missing: int
    agreement: float
    verdict: str | None = None


def aggregate_jury(
    aggregates: Sequence[Aggregate], *, binary: bool = False, categorical: bool = False
) -> JuryVerdict:
    """Combine judges: the mean of their scores, or for a binary scale the majority vote.

    Judges without a score (all calls failed) are left out and counted in ``n_missing``.
    ``agreement`` is the share of judges on the majority side (binary) or within one scale
    point of the jury's score (ordinal). With no scores at all, the score is NaN. A binary
    judge's side is its ``passed`` verdict when known (else score > 1/2).
    ``categorical``: the judges' ``verdict`` categories; the jury's is the most frequent one
    (None when two or more share the top count), ``agreement`` the share that gave it.

    >>> a = [Aggregate(1.0, 1, 0, {"ab": 1.0}, None, True),
    ...      Aggregate(0.0, 1, 0, {"ab": 0.0}, None, False),
    ...      Aggregate(1.0, 1, 0, {"ab": 1.0}, None, True)]
    >>> v = aggregate_jury(a, binary=True)
    >>> (v.score, v.n_judges, round(v.agreement, 3))
    (1.0, 3, 0.667)
    """
    if categorical:
        votes = [a.verdict for a in aggregates if a.verdict is not None]
        missing = len(aggregates) - len(votes)
        if not votes:
            return JuryVerdict(math.nan, 0, missing, math.nan)
        counts = Counter(votes).most_common()
        top = counts[0][1]
        winner = counts[0][0] if sum(1 for _, c in counts if c == top) == 1 else None
        return JuryVerdict(math.nan, len(votes), missing, top / len(votes), winner)
    scores = [a.score for a in aggregates if not math.isnan(a.score)]
    missing = len(aggregates) - len(scores)
    if not scores:
        return JuryVerdict(math.nan, 0, missing, math.nan)
    if binary:
        side = [
            (1.0 if a.passed else 0.0) if a.passed is not None else float(a.score > 0.5)
            for a in aggregates
            if not math.isnan(a.score)
        ]
        ones = sum(side)
        score = 1.0 if ones > len(side) - ones else 0.0 if ones < len(side) - ones else 0.5
        agree = sum(1 for s in side if s == score) / len(side) if score != 0.5 else 0.5
    else:
        score = sum(scores) / len(scores)
        agree = sum(1 for s in scores if abs(s - score) <= 1.0) / len(scores)
    return JuryVerdict(score, len(scores), missing, agree)


def aggregate_frame(
    frame: pd.DataFrame, rubrics: Mapping[str, Rubric] | None = None
) -> pd.DataFrame:
    """Aggregate a judgments table (``Store.judgments_frame``) per item and judge.

    One row per (trajectory_id, other_id, judge, rubric_id): ``score``, ``verdict`` (the
    category of pairwise and nominal judges), ``n``, ``n_errors``, ``inconsistent`` (position
    flip, None where it does not apply) and ``passed``. Rubrics are looked up in ``rubrics``
    by id, else among the shipped ones; an unknown rubric is aggregated as ordinal with
    ``passed`` None (as pairwise when its rows are pairwise).
    """
    columns = [
        "trajectory_id",
        "other_id",
        "judge",
        "rubric_id",
        "mode",
        "score",
        "verdict",
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
                "verdict": agg.verdict,
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
        verdict=_verdict(row),
        error=_none(row.get("error")),  # type: ignore[arg-type]
        other_score=None if other_score is None else float(other_score),
    )


def _verdict(row: Mapping[str, object]) -> str | None:
    """The stored verdict, pairwise ones read in the original numbering (``win`` = A)."""
    value = _none(row.get("verdict"))
    if value is None:
        return None
    if row.get("mode") == "pairwise":
        return pairwise_verdict(value)
    return str(value)
