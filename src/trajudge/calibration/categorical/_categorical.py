"""Measures of categorical judges (pairwise A/B/tie, nominal categories) against gold labels.

Statistics as plain functions over per-item arrays, plus :func:`categorical_report`, which
computes all of them for one judge from its calls. Every statistic of the aggregate verdict
uses :func:`trajudge.calibration.categorical_items` (the one per-item aggregation).

How a missing verdict (an errored call, e.g. an unparsed winner) counts, as in LLMBar's
``evaluate.py``: in the per-order accuracy and the positional consistency it is an outcome
of its own, never correct, and the same as the other order's when that one is missing too.
Kappa, the confusion matrix and the aggregate leave it out (an error is never a verdict).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from trajudge.calibration._estimate import Estimate
from trajudge.calibration._validation import as_1d, check_same_length
from trajudge.calibration.agreement._agreement import confusion
from trajudge.calibration.categorical._categorical_model import CategoricalReport, Count, WinRate
from trajudge.calibration.intervals._bootstrap import (
    bootstrap_kappa,
    item_codes,
    per_item_sums,
    proportion_bootstrap,
)
from trajudge.calibration.verdicts._verdicts import _majority, _ok_rows, categorical_items
from trajudge.rubrics._kinds import INCONSISTENT, default_inconsistent

MISSING = "\x00missing"  # the outcome of an order whose every call failed (never a category)


def _share(hits: Any, clusters: Any, n_boot: int, seed: int) -> Estimate:
    """``mean(hits)`` over rows with a bootstrap interval resampling ``clusters`` (Clopper-Pearson
    on the effective number of clusters where the bootstrap cannot show uncertainty)."""
    h = np.asarray(hits, dtype=np.float64)
    if h.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    codes, n = item_codes(np.asarray(clusters))
    sums = per_item_sums(codes, n, np.column_stack([h, np.ones_like(h)]))
    return proportion_bootstrap(sums, n_boot=n_boot, seed=seed)


def positional_consistency(first: Any, second: Any) -> Count:
    """Share of items whose outcome is the same in both presentation orders.

    ``first`` and ``second`` are the per-item outcomes in orders ``ab`` and ``ba`` (mapped
    back to the original numbering); None / NaN is a missing verdict, which counts as an
    outcome of its own (two missing verdicts agree), as LLMBar's "positional agreement".

    >>> positional_consistency(["A", "B", None, "A"], ["A", "A", None, None]).value
    0.5
    """
    a, b = as_1d(first, "first"), as_1d(second, "second")
    check_same_length(first=a, second=b)
    fa = [MISSING if pd.isna(x) else x for x in a.tolist()]
    fb = [MISSING if pd.isna(x) else x for x in b.tolist()]
    return Count(sum(x == y for x, y in zip(fa, fb, strict=True)), len(fa))


def order_accuracy(verdicts: Any, gold: Any) -> Count:
    """Share of items whose verdict equals the gold label; a missing verdict (None / NaN) is
    never correct and stays in the denominator.

    >>> order_accuracy(["A", None, "B"], ["A", "A", "A"]).correct
    1
    """
    v, g = as_1d(verdicts, "verdicts"), as_1d(gold, "gold")
    check_same_length(verdicts=v, gold=g)
    return Count(sum((not pd.isna(x)) and x == y for x, y in zip(v, g, strict=True)), len(v))


def first_position_rate(
    ab: Any, ba: Any, clusters: Any, *, n_boot: int = 2000, seed: int = 0
) -> Estimate:
    """Share of decisive pairwise verdicts that picked the trajectory shown first.

    ``ab`` and ``ba`` are verdicts in the original numbering: in order ``ab`` the first shown
    is A, in ``ba`` it is B, so ``rate = (#A in ab + #B in ba) / #(A or B verdicts)``, ties
    left out (0.5 for a judge without position bias). Each row is one verdict; ``clusters``
    its resampling unit.

    Here ``ab`` has two decisive verdicts, both first-shown (A); ``ba`` has three, two of them
    first-shown (B): 4 of 5.

    >>> first_position_rate(["A", "A", "tie"], ["A", "B", "B"], [1, 2, 3], n_boot=50).value
    0.8
    """
    a, b, c = as_1d(ab, "ab"), as_1d(ba, "ba"), as_1d(clusters, "clusters")
    check_same_length(ab=a, ba=b, clusters=c)
    picks, decisive, cl = [], [], []
    for va, vb, k in zip(a.tolist(), b.tolist(), c.tolist(), strict=True):
        for v, first in ((va, "A"), (vb, "B")):
            if v in ("A", "B"):
                picks.append(float(v == first))
                decisive.append(1.0)
                cl.append(k)
    return _share(picks, cl, n_boot, seed) if picks else Estimate(math.nan, *(math.nan,) * 2, 0)


def win_rates(
    verdicts: Any,
    system_a: Any,
    system_b: Any,
    clusters: Any,
    *,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[WinRate]:
    """Each system's win rate over the pairs it is part of: ``(wins + ties / 2) / pairs``.

    ``verdicts`` are the per-pair aggregates (A, B, tie; ``inconsistent`` counts as a tie)
    with A from ``system_a`` and B from ``system_b``; pairs of a system with itself are left
    out. Intervals resample ``clusters`` (tasks).

    >>> [(w.system, w.wins, w.rate.value) for w in win_rates(
    ...     ["A", "B", "tie"], ["x", "x", "x"], ["y", "y", "y"], [1, 2, 3], n_boot=50)]
    [('x', 1, 0.5), ('y', 1, 0.5)]
    """
    v, sa = as_1d(verdicts, "verdicts"), as_1d(system_a, "system_a")
    sb, c = as_1d(system_b, "system_b"), as_1d(clusters, "clusters")
    check_same_length(verdicts=v, system_a=sa, system_b=sb, clusters=c)
    systems = sorted({str(x) for x in (*sa.tolist(), *sb.tolist())})
    out = []
    for s in systems:
        points, cl, counts = [], [], {"win": 0, "tie": 0, "loss": 0}
        for verdict, a, b, k in zip(v.tolist(), sa.tolist(), sb.tolist(), c.tolist(), strict=True):
            if str(a) == str(b) or s not in (str(a), str(b)):
                continue
            mine = "A" if str(a) == s else "B"
            outcome = "win" if verdict == mine else "tie" if verdict not in ("A", "B") else "loss"
            counts[outcome] += 1
            points.append({"win": 1.0, "tie": 0.5, "loss": 0.0}[outcome])
            cl.append(k)
        if points:
            rate = _share(points, cl, n_boot, seed)
            out.append(WinRate(s, counts["win"], counts["tie"], counts["loss"], rate))
    return out


def _per_order(rows: pd.DataFrame, undecided: str) -> pd.DataFrame:
    """item x order: the majority verdict of the successful calls, MISSING where an order
    was run but every call failed; orders never run are absent (NaN)."""
    run = rows.groupby(["item", "order"]).size().unstack("order")
    ok = _ok_rows(rows)
    ok = ok[ok["verdict"].notna()]
    out = pd.DataFrame(index=run.index)
    if len(ok):
        frame = pd.DataFrame(
            {"item": ok["item"].to_numpy(), "order": ok["order"].to_numpy(),
             "v": ok["verdict"].astype(str).to_numpy()}
        )  # fmt: skip
        maj = _majority(frame, ["item", "order"], undecided).unstack("order")
    else:
        maj = pd.DataFrame(index=run.index)
    for o in ("ab", "ba"):
        if o not in run.columns:
            out[o] = np.nan
            continue
        got = maj[o].reindex(run.index) if o in maj.columns else pd.Series(np.nan, run.index)
        out[o] = got.where(got.notna() | run[o].isna(), MISSING)
    return out


def categorical_report(
    name: str,
    rows: pd.DataFrame,
    gold: pd.Series,
    *,
    kind: str = "pairwise",
    categories: Sequence[str] = (),
    inconsistent_as: str | None = None,
    clusters: Mapping[Any, Any] | None = None,
    systems: pd.DataFrame | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> CategoricalReport:
    """Every measure of one categorical judge against ``gold`` (item -> category).

    ``rows``: its calls (``item``, ``order``, ``sample``, ``verdict``, optional ``error``;
    pairwise verdicts in the original numbering). ``clusters`` maps an item to its task
    (intervals resample tasks; items otherwise). ``systems``: item -> ``system_a``,
    ``system_b`` for win rates (pairwise). See the module docstring for missing verdicts.
    """
    undecided = default_inconsistent(kind) if inconsistent_as is None else inconsistent_as
    errored = rows["error"].notna() if "error" in rows else pd.Series(False, index=rows.index)
    if "order" not in rows:
        rows = rows.assign(order="ab")
    agg = categorical_items(rows, kind=kind, inconsistent_as=undecided)
    per_order = _per_order(rows, undecided)

    def cl(items: Any) -> np.ndarray:
        if clusters is None:
            return np.asarray(list(items), dtype=object)
        return np.asarray([clusters.get(i, i) for i in items], dtype=object)

    shown = [v for o in ("ab", "ba") if o in per_order for v in per_order[o].dropna()]
    seen = [*gold.astype(str), *agg["verdict"].astype(str), *(v for v in shown if v != MISSING)]
    labels = list(dict.fromkeys([*categories, *sorted(set(seen))]))
    boot: dict[str, Any] = {"n_boot": n_boot, "seed": seed}
    accuracy: dict[str, Count] = {}
    kappa: dict[str, Estimate] = {}
    n_missing: dict[str, int] = {}
    for o in ("ab", "ba"):
        col = per_order[o].dropna() if o in per_order else pd.Series(dtype=object)
        col = col[col.index.isin(gold.index)]
        if col.empty:
            continue
        n_missing[o] = int((col == MISSING).sum())
        accuracy[o] = order_accuracy(col.where(col != MISSING, None), gold.loc[col.index])
        have = col[col != MISSING]
        kappa[o] = bootstrap_kappa(
            gold.loc[have.index].astype(str), have.astype(str), cl(have.index),
            labels=labels, **boot,
        )[0]  # fmt: skip
    both = per_order.dropna(subset=["ab", "ba"]) if len(per_order) else per_order
    consistency = positional_consistency(
        both["ab"].where(both["ab"] != MISSING, None), both["ba"].where(both["ba"] != MISSING, None)
    )
    decided = agg[agg["ab"].notna() & agg["ba"].notna()]
    flip = _share(decided["flipped"].astype(float), cl(decided.index), **boot)
    first = None
    if kind == "pairwise" and len(decided):
        calls = _ok_rows(rows)
        calls = calls[calls["item"].isin(decided.index) & calls["verdict"].notna()]
        ab = calls[calls["order"] == "ab"]
        ba = calls[calls["order"] == "ba"]
        first = first_position_rate(
            [*ab["verdict"], *([None] * len(ba))],
            [*([None] * len(ab)), *ba["verdict"]],
            cl([*ab["item"], *ba["item"]]),
            **boot,
        )
    labelled = agg.index.intersection(gold.index)
    y_h, y_j = gold.loc[labelled].astype(str), agg.loc[labelled, "verdict"].astype(str)
    kappa["aggregate"] = bootstrap_kappa(y_h, y_j, cl(labelled), labels=labels, **boot)[0]
    agreement = _share((y_h.to_numpy() == y_j.to_numpy()).astype(float), cl(labelled), **boot)
    wins = None
    if kind == "pairwise" and systems is not None and len(agg):
        sys = systems.reindex(agg.index)
        keep = sys["system_a"].notna() & sys["system_b"].notna()
        wins = win_rates(
            agg.loc[keep, "verdict"], sys.loc[keep, "system_a"], sys.loc[keep, "system_b"],
            cl(agg.index[keep]), **boot,
        )  # fmt: skip
    used = [c for c in labels if c in set(y_h) | set(y_j)] or labels
    return CategoricalReport(
        judge=name,
        kind=kind,
        inconsistent_as=undecided,
        n_rows=int((~errored).sum()),
        n_errors=int(errored.sum()),
        n_items=len(labelled),
        accuracy=accuracy,
        n_missing=n_missing,
        consistency=consistency,
        flip_rate=flip if len(decided) else None,
        first_position=first,
        kappa=kappa,
        agreement=agreement,
        labels=used,
        confusion=confusion(y_h.to_numpy(), y_j.to_numpy(), used).tolist() if len(y_h) else [],
        win_rates=wins,
        n_flipped=int(decided["flipped"].sum()),
        inconsistent_items=[str(i) for i in agg.index[agg["flipped"]]],
        categories=[c for c in labels if c != INCONSISTENT],
    )
