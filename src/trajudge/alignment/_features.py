"""Per-item features of a judge's calls: what the alignment methods fit on.

A judge scores an item several times (both presentation orders, several samples). Alignment
works per item, on the aggregate the report uses (the mean score against a threshold) and on
how much the calls disagree (their spread), which says how sure the judge is.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The feature columns :func:`item_features` always returns (``expected_score`` too when the
#: judgments carry one).
FEATURES = ("score", "score_sd", "score_range", "vote_share", "vote_agreement")


def item_features(judgments: pd.DataFrame, *, threshold: float | None = None) -> pd.DataFrame:
    r"""Aggregate a judge's calls to one row of features per item.

    Parameters
    ----------
    judgments : DataFrame
        One row per call of ONE judge: ``item`` and ``score`` (numbers; 0/1 for a binary
        judge); optional ``verdict`` (0/1), ``order`` (``ab``/``ba``), ``task_id``,
        ``expected_score`` (the probability-weighted score read from token probabilities,
        NaN where the provider gave none) and ``error`` (rows with an error are left out).
    threshold : float, optional
        The rubric's pass threshold: a call passes when ``score >= threshold``. Without it a
        call passes when its ``verdict`` is 1 (or, without verdicts, its 0/1 score is 1).

    Returns
    -------
    DataFrame
        One row per item, sorted by item, with columns

        * ``item``, ``task_id`` (when given), ``n_calls``;
        * ``score``: mean score over the calls, :math:`\bar s`;
        * ``score_sd``: their standard deviation (ddof 0; 0 for one call) and ``score_range``
          (max - min): the spread across orders and samples;
        * ``order_gap``: mean score in order ``ab`` minus in ``ba`` (NaN without both orders);
        * ``vote_share``: share of calls that pass; ``vote_agreement``:
          :math:`\max(v, 1 - v)`, the agreement of the calls with their majority;
        * ``expected_score``: mean of the calls' expected scores, NaN unless every call of
          the item has one;
        * ``verdict``: the judge's verdict as it stands: :math:`\bar s \ge` ``threshold``
          when a threshold is given (the ordinal aggregate), else ``vote_share > 0.5`` (a tie
          fails).

    Examples
    --------
    >>> j = pd.DataFrame({"item": ["a"] * 4 + ["b"] * 2, "order": ["ab", "ab", "ba", "ba"] * 1
    ...                   + ["ab", "ba"], "score": [4, 5, 3, 4, 2, 2]})
    >>> f = item_features(j, threshold=4)
    >>> f[["item", "score", "score_range", "order_gap", "vote_share", "verdict"]].values.tolist()
    [['a', 4.0, 2.0, 1.0, 0.75, 1.0], ['b', 2.0, 0.0, 0.0, 0.0, 0.0]]
    """
    if not {"item", "score"} <= set(judgments.columns):
        raise ValueError("judgments need columns 'item' and 'score'")
    rows = judgments
    if "error" in rows.columns:
        rows = rows[rows["error"].isna()]
    if rows["score"].isna().any():
        bad = rows.loc[rows["score"].isna(), "item"].iloc[0]
        raise ValueError(f"item {bad!r}: a call without error has no score")
    score = rows["score"].astype(float)
    if threshold is not None:
        passed = (score >= threshold).astype(float)
    elif "verdict" in rows.columns and rows["verdict"].notna().all():
        passed = rows["verdict"].astype(float)
    else:
        if not set(score.unique().tolist()) <= {0.0, 1.0}:
            raise ValueError("ordinal scores need a threshold to say which calls pass")
        passed = score
    frame = pd.DataFrame({"item": rows["item"].to_numpy(), "s": score.to_numpy()})
    frame["p"] = passed.to_numpy()
    g = frame.groupby("item", sort=True)
    out = pd.DataFrame(
        {
            "n_calls": g.size(),
            "score": g["s"].mean(),
            "score_sd": g["s"].std(ddof=0),
            "score_range": g["s"].max() - g["s"].min(),
            "vote_share": g["p"].mean(),
        }
    )
    out["vote_agreement"] = np.maximum(out["vote_share"], 1.0 - out["vote_share"])
    out["order_gap"] = _order_gap(rows, score)
    if "expected_score" in rows.columns:
        e = pd.DataFrame({"item": rows["item"].to_numpy(), "e": rows["expected_score"].to_numpy()})
        eg = e.groupby("item", sort=True)["e"]
        out["expected_score"] = eg.mean().where(eg.count() == eg.size())
    if threshold is not None:
        out["verdict"] = (out["score"] >= threshold).astype(float)
    else:
        out["verdict"] = (out["vote_share"] > 0.5).astype(float)
    if "task_id" in rows.columns:
        tasks = rows.groupby("item", sort=True)["task_id"].agg(["first", "nunique"])
        if (tasks["nunique"] > 1).any():
            raise ValueError(f"item {tasks.index[tasks['nunique'] > 1][0]!r} has two task ids")
        out.insert(0, "task_id", tasks["first"])
    return out.reset_index()


def _order_gap(rows: pd.DataFrame, score: pd.Series) -> pd.Series:
    if "order" not in rows.columns:
        return pd.Series(np.nan, index=pd.Index(sorted(rows["item"].unique()), name="item"))
    frame = pd.DataFrame({"item": rows["item"].to_numpy(), "o": rows["order"].to_numpy()})
    frame["s"] = score.to_numpy()
    means = frame.pivot_table(index="item", columns="o", values="s", aggfunc="mean")
    if not {"ab", "ba"} <= set(means.columns):
        return pd.Series(np.nan, index=means.index)
    return means["ab"] - means["ba"]
