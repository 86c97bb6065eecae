"""Many raters: Krippendorff's alpha, the human consensus per item, the human ceiling.

Labels come as a long table with one row per (item, annotator): columns ``item``,
``annotator``, ``label``. Agreement among humans on the items several of them labelled is the
ceiling a judge can be expected to reach.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import krippendorff
import numpy as np
import pandas as pd

from trajudge.calibration._estimate import num
from trajudge.calibration.agreement._agreement import Weights, cohen_kappa

Level = Literal["nominal", "ordinal", "interval"]


def _matrix_for_alpha(data: Any, level: Level) -> np.ndarray[Any, np.dtype[np.float64]]:
    frame = pd.DataFrame(np.asarray(data, dtype=object))
    if level != "nominal":
        return np.asarray(frame.apply(pd.to_numeric).to_numpy(dtype=np.float64))
    # nominal: any hashable labels, coded as numbers
    values = [v for v in frame.to_numpy().ravel().tolist() if not pd.isna(v)]
    codes = {v: i for i, v in enumerate(dict.fromkeys(values))}
    coded = frame.map(lambda v: np.nan if pd.isna(v) else codes[v])
    return np.asarray(coded.to_numpy(dtype=np.float64))


def krippendorff_alpha(reliability_data: Any, *, level: Level = "nominal") -> float:
    r"""Krippendorff's alpha for any number of raters, with missing ratings.

    .. math:: \alpha = 1 - \frac{D_o}{D_e}

    with :math:`D_o` the observed and :math:`D_e` the expected disagreement over pairable
    values (units with at least two ratings). Computed by the ``krippendorff`` package.

    Parameters
    ----------
    reliability_data : array-like of shape (n_raters, n_units)
        Ratings, NaN (or None) where a rater did not rate a unit. Nominal data may be any
        hashable labels; ordinal and interval data must be numeric.
    level : {"nominal", "ordinal", "interval"}
        The level of measurement (the distance metric).

    Returns
    -------
    float
        NaN when fewer than two distinct values occur or no unit has two ratings.

    Examples
    --------
    >>> data = [[1, 1, 0], [1, 0, 0]]  # 3 units, 2 raters, one disagreement
    >>> round(krippendorff_alpha(data), 4)  # Do = 2/6, De = 18/30: alpha = 1 - (1/3)/(3/5)
    0.4444

    References
    ----------
    Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", U. Penn.;
    Castro (2017), the ``krippendorff`` package.
    """
    if level not in ("nominal", "ordinal", "interval"):
        raise ValueError(f"level must be nominal, ordinal or interval, got {level!r}")
    matrix = _matrix_for_alpha(reliability_data, level)
    if matrix.ndim != 2:
        raise ValueError("reliability_data must be 2-D: (raters, units)")
    pairable = np.sum(~np.isnan(matrix), axis=0) >= 2
    values = np.unique(matrix[:, pairable][~np.isnan(matrix[:, pairable])])
    if values.size < 2:
        return math.nan
    return float(
        krippendorff.alpha(reliability_data=matrix[:, pairable], level_of_measurement=level)
    )


def reliability_matrix(labels: pd.DataFrame) -> pd.DataFrame:
    """Annotators x items matrix from a long ``(item, annotator, label)`` table (NaN = missing).

    Raises ValueError when an annotator labelled the same item twice.
    """
    dup = labels.duplicated(["item", "annotator"])
    if dup.any():
        row = labels[dup].iloc[0]
        raise ValueError(f"annotator {row['annotator']!r} labelled item {row['item']!r} twice")
    return labels.pivot(index="annotator", columns="item", values="label")


def consensus(labels: pd.DataFrame) -> pd.DataFrame:
    """Majority label per item, with ties reported and the number of labels behind it.

    Parameters
    ----------
    labels : DataFrame
        Columns ``item``, ``annotator``, ``label`` (missing labels are not counted).

    Returns
    -------
    DataFrame
        Indexed by item, columns ``label`` (the majority label; NaN when the top count is
        shared by two or more labels), ``tie`` (bool), ``n_labels`` and ``n_majority``.

    Examples
    --------
    >>> df = pd.DataFrame({"item": ["a", "a", "a", "b", "b"], "annotator": [1, 2, 3, 1, 2],
    ...                    "label": [1, 1, 0, 1, 0]})
    >>> c = consensus(df)
    >>> c.loc["a", "label"], bool(c.loc["b", "tie"]), int(c.loc["a", "n_labels"])
    (1, True, 3)
    """
    known = labels.dropna(subset=["label"])
    counts = known.groupby(["item", "label"], sort=True).size().rename("count").reset_index()
    top = counts.groupby("item")["count"].transform("max")
    winners = counts[counts["count"] == top]
    n_winners = winners.groupby("item").size()
    first = winners.groupby("item").first()
    out = pd.DataFrame(index=n_winners.index)
    out["tie"] = n_winners > 1
    out["label"] = first["label"].astype(object).where(~out["tie"], np.nan)
    out["n_labels"] = known.groupby("item").size()
    out["n_majority"] = first["count"]
    return out[["label", "tie", "n_labels", "n_majority"]]


@dataclass(frozen=True)
class HumanAgreement:
    """Agreement among human annotators on the items several of them labelled.

    ``pairs`` lists, per annotator pair with at least ``min_overlap`` shared items, the number
    of shared items and Cohen's kappa on them; ``mean_kappa`` is their mean (NaN pairs left
    out; NaN when none is defined); ``alpha`` is Krippendorff's alpha over all annotators.
    """

    n_annotators: int
    n_items: int  # items with two or more labels
    mean_kappa: float
    alpha: float
    level: Level
    pairs: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_annotators": self.n_annotators,
            "n_items": self.n_items,
            "mean_kappa": num(self.mean_kappa),
            "alpha": num(self.alpha),
            "level": self.level,
            "pairs": [{**p, "kappa": num(p["kappa"])} for p in self.pairs],
        }


def human_agreement(
    labels: pd.DataFrame,
    *,
    level: Level = "nominal",
    weights: Weights = None,
    min_overlap: int = 2,
) -> HumanAgreement | None:
    """Human-vs-human agreement: mean pairwise Cohen's kappa and Krippendorff's alpha.

    Parameters
    ----------
    labels : DataFrame
        Columns ``item``, ``annotator``, ``label``.
    level : {"nominal", "ordinal", "interval"}
        Level of measurement for alpha.
    weights : {None, "linear", "quadratic"}
        Weights for the pairwise kappas.
    min_overlap : int
        Fewest shared items for a pair of annotators to be compared.

    Returns
    -------
    HumanAgreement or None
        None when no item has labels from two annotators (the ceiling does not apply).

    Examples
    --------
    >>> df = pd.DataFrame({"item": [1, 2, 3, 1, 2, 3], "annotator": list("aaabbb"),
    ...                    "label": [1, 1, 0, 1, 0, 0]})
    >>> h = human_agreement(df)
    >>> round(h.mean_kappa, 4), round(h.alpha, 4)  # kappa: po = 2/3, pe = 4/9
    (0.4, 0.4444)
    """
    known = labels.dropna(subset=["label"])
    matrix = reliability_matrix(known)
    multi = matrix.notna().sum(axis=0) >= 2
    if not multi.any():
        return None
    matrix = matrix.loc[:, multi]
    scale = sorted(pd.unique(known["label"]).tolist(), key=lambda v: (str(type(v)), v))
    pairs = []
    for a1, a2 in itertools.combinations(matrix.index.tolist(), 2):
        both = matrix.loc[[a1, a2]].dropna(axis=1)
        if both.shape[1] < min_overlap:
            continue
        k = cohen_kappa(
            both.loc[a1].to_numpy(), both.loc[a2].to_numpy(), weights=weights, labels=scale
        )
        pairs.append({"a": str(a1), "b": str(a2), "n": int(both.shape[1]), "kappa": k})
    kappas = np.array([p["kappa"] for p in pairs], dtype=np.float64)
    ok = kappas[~np.isnan(kappas)]
    return HumanAgreement(
        n_annotators=int((matrix.notna().sum(axis=1) > 0).sum()),
        n_items=int(matrix.shape[1]),
        mean_kappa=float(ok.mean()) if ok.size else math.nan,
        alpha=krippendorff_alpha(matrix.to_numpy(dtype=object), level=level),
        level=level,
        pairs=pairs,
    )
