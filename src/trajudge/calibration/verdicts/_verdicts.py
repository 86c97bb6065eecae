"""One verdict per item from a judge's calls, and where ordinal scales are threshold.

A judge may be called several times on one item: in both presentation orders (``ab``,
``ba``) and several samples per order. Every figure of the report (kappa, agreement,
TPR/TNR, the corrected rates, pass^k, the labeling app's judge column) uses ONE aggregate
per item, computed here, by verdict kind:

* the calls of each order are combined first (samples), then the orders, so that an order
  with a failed call does not weigh more than the other (position bias cancels by design);
* ordinal scores: the mean score over orders (each the mean of its samples) against the pass
  threshold (``mean >= threshold``). A pair scored 5 and 3 with threshold 4 is a pass (mean 4);
* pass/fail verdicts (binary): that mean pass share, a pass when above one half (a tie is a
  fail);
* categories (pairwise ``A`` / ``B`` / ``tie`` in the original numbering, or the named
  categories of a nominal scale): in each order the majority category of its samples; then a
  category given in both orders stands, and two different ones (a position flip) become
  ``inconsistent_as``: ``tie`` by default for pairwise verdicts, ``inconsistent`` for
  nominal ones (and on request for pairwise ones). An order whose samples have no single
  majority counts as that value too. An item judged in one order keeps that order's verdict.

Errored calls are left out; an item whose every call failed has no verdict (it is absent
from the result, never counted as a pass or a fail).

The pass threshold of an ordinal scale comes from the caller (``--threshold``), the rubric
that declares the scale, or a search on dev items for a judge: never from the data of other
judges or from the observed spread of scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from trajudge.calibration._validation import as_binary, as_float
from trajudge.calibration.agreement._agreement import cohen_kappa
from trajudge.core import InputError
from trajudge.rubrics._kinds import (
    CATEGORICAL,
    default_inconsistent,
)


def _majority(frame: pd.DataFrame, keys: list[str], undecided: str) -> pd.Series:
    """The most frequent ``v`` per group of ``keys``; ``undecided`` where two or more share
    the top count."""
    counts = frame.groupby([*keys, "v"], sort=True).size().rename("n").reset_index()
    top = counts.groupby(keys)["n"].transform("max")
    best = counts[counts["n"] == top]
    n_best = best.groupby(keys)["v"].transform("size")
    best = best.assign(v=best["v"].where(n_best == 1, undecided)).drop_duplicates(keys)
    return best.set_index(keys)["v"]


def categorical_items(
    rows: pd.DataFrame, *, kind: str = "pairwise", inconsistent_as: str | None = None
) -> pd.DataFrame:
    """Per item, the verdict in each order and the aggregate (see the module docstring).

    Parameters
    ----------
    rows : DataFrame
        One row per call: ``item``, ``order`` (optional; ``ab`` when absent), ``verdict``
        (a category; pairwise verdicts in the original numbering), optional ``error``
        (errored rows are left out).
    kind : {"pairwise", "nominal"}
        The verdict kind.
    inconsistent_as : str, optional
        What a flip becomes; default :func:`default_inconsistent` of ``kind``.

    Returns
    -------
    DataFrame
        Indexed by item (sorted): ``ab``, ``ba`` (each order's verdict, NaN when that order
        has no successful call), ``verdict`` (the aggregate) and ``flipped`` (both orders
        gave a verdict and they differ).

    Examples
    --------
    >>> rows = pd.DataFrame({"item": ["x", "x", "y", "y", "z"],
    ...                      "order": ["ab", "ba", "ab", "ba", "ab"],
    ...                      "verdict": ["A", "A", "A", "B", "B"]})
    >>> categorical_items(rows)[["verdict", "flipped"]].values.tolist()
    [['A', False], ['tie', True], ['B', False]]
    """
    undecided = default_inconsistent(kind) if inconsistent_as is None else inconsistent_as
    ok = _ok_rows(rows)
    ok = ok[ok["verdict"].notna()] if "verdict" in ok else ok.iloc[0:0]
    cols = ["ab", "ba", "verdict", "flipped"]
    if ok.empty:
        return pd.DataFrame(columns=cols, index=pd.Index([], name="item"))
    order = ok["order"] if "order" in ok else pd.Series("ab", index=ok.index)
    frame = pd.DataFrame(
        {
            "item": ok["item"].to_numpy(),
            "order": order.to_numpy(),
            "v": ok["verdict"].astype(str).to_numpy(),
        }
    )
    per_order = _majority(frame, ["item", "order"], undecided).unstack("order")
    out = pd.DataFrame(index=per_order.index.rename("item"))
    for o in ("ab", "ba"):
        out[o] = per_order[o] if o in per_order.columns else np.nan
    both = out["ab"].notna() & out["ba"].notna()
    out["flipped"] = both & (out["ab"] != out["ba"])
    out["verdict"] = out["ab"].where(out["ab"].notna(), out["ba"])
    out.loc[out["flipped"], "verdict"] = undecided
    return out.sort_index()[cols]


@dataclass(frozen=True)
class Threshold:
    """How scores became pass/fail: ``pass`` iff ``score >= value``.

    ``source`` is "binary" (the values are already pass/fail; value None), "given" (the
    ``threshold`` argument, ``--threshold``), "rubric" (the pass threshold the rubric's scale
    declares) or "dev" (searched on the dev items, which are then left out of every
    statistic).
    """

    value: float | None
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "source": self.source}


def _ok_rows(rows: pd.DataFrame) -> pd.DataFrame:
    if "error" not in rows:
        return rows
    return rows[rows["error"].isna()]


def _row_values(ok: pd.DataFrame, ordinal: bool) -> np.ndarray[Any, Any]:
    if ordinal:
        return as_float(ok["score"], "score", allow_missing=False)
    if "verdict" in ok:
        src = ok["verdict"].where(ok["verdict"].notna(), ok["score"])
    else:
        src = ok["score"]
    return as_binary(src.to_numpy(), "verdict")


def item_means(rows: pd.DataFrame, *, ordinal: bool = False) -> pd.Series:
    """Per item, the judge's order-balanced mean: of the scores (ordinal) or pass shares.

    Parameters
    ----------
    rows : DataFrame
        One row per call: ``item``, ``order`` (optional; one order assumed when absent),
        ``score`` and/or ``verdict``, optional ``error`` (errored rows are left out).
    ordinal : bool
        True for an ordinal scale (the mean is of the scores); False for pass/fail values
        (the mean is of the 0/1 verdicts, or of the 0/1 scores where no verdict is given).

    Returns
    -------
    Series
        Indexed by item (sorted); items without a successful call are absent.

    Examples
    --------
    >>> rows = pd.DataFrame({"item": ["x", "x", "x"], "order": ["ab", "ab", "ba"],
    ...                      "score": [5.0, 4.0, 3.0]})
    >>> float(item_means(rows, ordinal=True).loc["x"])  # ab: 4.5, ba: 3.0 -> 3.75
    3.75
    """
    ok = _ok_rows(rows)
    if ok.empty:
        return pd.Series(dtype=float, name="mean")
    order = ok["order"] if "order" in ok else pd.Series("ab", index=ok.index)
    frame = pd.DataFrame(
        {"item": ok["item"].to_numpy(), "order": order.to_numpy(), "v": _row_values(ok, ordinal)}
    )
    per_order = frame.groupby(["item", "order"], sort=True)["v"].mean()
    return per_order.groupby(level="item", sort=True).mean().rename("mean")


def item_verdicts(
    rows: pd.DataFrame,
    *,
    threshold: float | None = None,
    kind: str | None = None,
    inconsistent_as: str | None = None,
) -> pd.Series:
    """Per item, the judge's verdict over its calls (see the module docstring).

    ``kind`` "pairwise" or "nominal": the aggregate category per item
    (:func:`categorical_items`; ``inconsistent_as`` says what a flip becomes). Otherwise a
    0/1 verdict: ``threshold`` None for pass/fail values, a pass when the order-balanced pass
    share is above one half (a tie, e.g. pass in one order and fail in the other, is a fail);
    a number for an ordinal scale, a pass when the order-balanced mean score is at least the
    threshold.

    Examples
    --------
    >>> rows = pd.DataFrame({"item": ["x", "x", "y", "y"], "order": ["ab", "ba"] * 2,
    ...                      "score": [5.0, 3.0, 4.0, 2.0]})
    >>> item_verdicts(rows, threshold=4).tolist()  # x: mean 4 (a pass), y: mean 3
    [1.0, 0.0]
    """
    if kind in CATEGORICAL:
        found = categorical_items(rows, kind=str(kind), inconsistent_as=inconsistent_as)
        return found["verdict"].astype(object).rename("verdict")
    means = item_means(rows, ordinal=threshold is not None)
    if threshold is None:
        return (means > 0.5).astype(float).rename("pass")
    return (means >= threshold).astype(float).rename("pass")


def row_passes(rows: pd.DataFrame, *, threshold: float | None = None) -> pd.Series:
    """Each successful call's own 0/1 verdict (for per-call measures: flips, stability)."""
    ok = _ok_rows(rows)
    values = _row_values(ok, threshold is not None)
    if threshold is not None:
        values = (values >= threshold).astype(float)
    return pd.Series(values, index=ok.index, name="pass")


def is_binary(values: Any) -> bool:
    """Whether the non-missing values are all 0 or 1."""
    v = pd.Series(np.asarray(values, dtype=object)).dropna()
    return bool(set(pd.to_numeric(v, errors="coerce").tolist()) <= {0.0, 1.0})


def _span(values: pd.Series) -> str:
    v = values.dropna()
    return f"{v.min():g}..{v.max():g}" if len(v) else "none"


def label_threshold(
    labels: Any, *, threshold: float | None = None, rubric_threshold: float | None = None
) -> Threshold:
    """Where labels become pass/fail: ``label >= value``, or "binary" for pass/fail labels.

    Ordinal labels (any value other than 0 and 1) are cut at ``threshold`` when given, else
    at ``rubric_threshold`` (the rubric's pass threshold). Nothing else: without either, an
    ``InputError`` says what to give. The threshold never depends on judges' scores.

    >>> label_threshold([1, 5, 4], rubric_threshold=4)
    Threshold(value=4.0, source='rubric')
    """
    values = pd.Series(as_float(labels, "label"))
    if is_binary(values):
        return Threshold(None, "binary")
    if threshold is not None:
        return Threshold(float(threshold), "given")
    if rubric_threshold is not None:
        return Threshold(float(rubric_threshold), "rubric")
    raise InputError(
        "labels",
        field="label",
        reason=f"ordinal labels ({_span(values)}) need a pass threshold: give threshold "
        "(--threshold) or the rubric that declares it (--rubric)",
    )


def judge_threshold(
    judge: str,
    rows: pd.DataFrame,
    *,
    threshold: float | None = None,
    rubric_threshold: float | None = None,
    dev_truth: pd.Series | None = None,
) -> Threshold:
    """Where a judge's scores become pass/fail.

    The judge's scale is ordinal when ``rubric_threshold`` is given (its rubric declares an
    ordinal scale) or its scores take values other than 0 and 1; otherwise its verdicts are
    used as they are ("binary"). An ordinal judge is cut at, in this order: ``threshold``
    ("given"); the threshold with the best kappa against ``dev_truth`` (item -> 0/1 on the dev
    items) over its per-item mean scores ("dev"); ``rubric_threshold`` ("rubric").
    Without any of them, ``InputError``.
    """
    ok = _ok_rows(rows)
    scores = ok["score"] if "score" in ok else pd.Series(dtype=float)
    ordinal = rubric_threshold is not None or not is_binary(scores)
    if not ordinal:
        return Threshold(None, "binary")
    if threshold is not None:
        return Threshold(float(threshold), "given")
    if dev_truth is not None and len(dev_truth):
        on_dev = ok[ok["item"].isin(dev_truth.index)]
        means = item_means(on_dev, ordinal=True)
        if len(means):
            t = best_threshold(means.to_numpy(), dev_truth.reindex(means.index).to_numpy())
            if not math.isnan(t):
                return Threshold(t, "dev")
    if rubric_threshold is not None:
        return Threshold(float(rubric_threshold), "rubric")
    raise InputError(
        "judgments",
        field="score",
        reason=f"judge {judge!r} gives ordinal scores ({_span(scores)}) "
        "that need a pass threshold: "
        "give threshold (--threshold), the rubric that declares it (--rubric) or dev items",
    )


def best_threshold(scores: Any, human_pass: Any) -> float:
    """The threshold ``score >= t`` over observed score values that maximises binary Cohen's kappa.

    Ties go to the lowest such t; NaN when no threshold gives a defined kappa (or no rows).

    >>> best_threshold([1, 2, 3, 4, 5, 5], [0, 0, 0, 1, 1, 1])
    4.0
    """
    s = as_float(scores, "scores", allow_missing=False)
    h = as_binary(human_pass, "human_pass")
    best, best_k = math.nan, -math.inf
    for t in np.unique(s):
        k = cohen_kappa(h, (s >= t).astype(float), labels=[0.0, 1.0])
        if not math.isnan(k) and k > best_k:
            best, best_k = float(t), k
    return best
