"""The Dawid-Skene jury against majority, mean and the best single judge, on holdout items.

The jury learns whom to trust on the dev items, where judges and annotators rated the same
items: Dawid-Skene over all of them gives each judge a confusion matrix. On the holdout items
the jury reads the judges only, through those matrices, and is scored against the
annotators' consensus there, as is every judge alone, the majority of the judges and the
mean of their pass shares. The best single judge is the one with the best kappa on dev (the
choice a team would make without the jury), and the difference of kappa between the jury and
it gets a paired task-clustered bootstrap interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from trajudge.calibration._estimate import Estimate
from trajudge.calibration.agreement._agreement import cohen_kappa, kappa_from_counts
from trajudge.calibration.intervals._bootstrap import (
    SumStatistic,
    cluster_bootstrap_many,
    item_codes,
    per_item_sums,
)
from trajudge.calibration.panel._dawid_skene import DawidSkene, dawid_skene


@dataclass(frozen=True)
class JuryComparison:
    """Kappa on holdout of the Dawid-Skene jury, majority, mean and every judge alone.

    ``kappa`` maps ``"dawid-skene"``, ``"majority"``, ``"mean"`` and each judge to its kappa
    against the holdout consensus (with a task-clustered interval); ``best`` is the judge with
    the best kappa on dev; ``diff`` the jury's kappa minus the best judge's (paired
    interval); ``model`` the Dawid-Skene fit on dev (its weights are the judges' and
    annotators' say).
    """

    kappa: dict[str, Estimate]
    best: str
    diff: Estimate
    model: DawidSkene
    n_dev: int
    n_holdout: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "kappa": {k: v.to_dict() for k, v in self.kappa.items()},
            "best_single_judge": self.best,
            "diff_vs_best": self.diff.to_dict(),
            "dawid_skene": self.model.to_dict(),
            "n_dev": self.n_dev,
            "n_holdout": self.n_holdout,
        }


def _long(table: pd.DataFrame, *, categorical: bool = False) -> pd.DataFrame:
    """Judges' verdicts as ``item, rater, label`` rows: a pass share above 1/2 is a pass
    (label 1), or, ``categorical``, the category as it is."""
    stacked = table.stack()
    values = stacked.to_numpy()
    long = pd.DataFrame(
        {
            "item": stacked.index.get_level_values(0),
            "rater": [str(r) for r in stacked.index.get_level_values(1)],
            "label": values if categorical else (values.astype(float) > 0.5).astype(int),
        }
    )
    return long[["item", "rater", "label"]]


def _plurality(votes: pd.DataFrame, order: Sequence[Any]) -> pd.Series:
    """Per item the category most judges gave; where two or more share the top count, the
    one given by the first judge of ``order`` (best on dev first) that gave one of them, so
    every method is scored on the same items. NaN where no judge gave a verdict."""
    out = {}
    for item, row in votes.iterrows():
        counts = row.dropna().value_counts()
        top = set(counts.index[counts == counts.max()]) if len(counts) else set()
        pick = next((row[j] for j in order if row[j] in top), np.nan) if top else np.nan
        out[item] = pick
    return pd.Series(out, index=votes.index, dtype=object)


def jury_comparison(
    *,
    judges: pd.DataFrame,
    annotators: pd.DataFrame,
    reference: pd.Series,
    tasks: pd.Series,
    holdout: pd.Series,
    classes: Sequence[Any] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> JuryComparison:
    """Fit Dawid-Skene on dev, compare juries and judges on holdout (module docstring).

    Parameters
    ----------
    judges : DataFrame
        Index item, one column per judge: its pass share over its calls (0..1; a verdict
        0/1 is a share too), or with ``classes`` its category; NaN where it gave no
        verdict. At least two judges.
    annotators : DataFrame
        ``item, annotator, label`` rows: the human labels (0/1, or categories).
    reference : Series
        Item -> 0/1 (or a category): the annotators' consensus, the truth on holdout.
    tasks, holdout : Series
        Item -> task (the bootstrap's unit), item -> True for holdout items.
    classes : sequence, optional
        The categories of nominal verdicts, or of pairwise ones (A, B and tie as three
        classes): Dawid-Skene over K classes, each judge's confusion K x K, kappa over K
        categories. The majority is then the plurality category (a shared top count goes to
        the judge best on dev among those who gave one of them: with two judges that judge's
        verdict), and there is no "mean" (categories have none).
        None: pass/fail.
    n_boot, seed, level :
        Resamples, generator seed, interval level.

    Returns
    -------
    JuryComparison
    """
    if judges.shape[1] < 2:
        raise ValueError("a jury needs at least two judges")
    categorical = classes is not None
    ks = list(classes) if classes is not None else [0, 1]
    is_holdout = holdout.reindex(judges.index).fillna(False).astype(bool)
    dev_items, test_items = judges.index[~is_holdout], judges.index[is_holdout]
    humans = annotators.rename(columns={"annotator": "rater"})[["item", "rater", "label"]]
    humans = humans.assign(rater="human:" + humans["rater"].astype(str))
    ratings = pd.concat(
        [
            _long(judges.loc[dev_items], categorical=categorical),
            humans[humans["item"].isin(set(dev_items))],
        ],
        ignore_index=True,
    )
    model = dawid_skene(ratings=ratings, classes=ks)
    test = [i for i in test_items if i in reference.index]
    dev = [i for i in dev_items if i in reference.index]
    if categorical:
        verdicts = judges.astype(object).where(judges.notna())
    else:
        verdicts = (judges > 0.5).astype(float).where(judges.notna())
    found = _long(judges.loc[test], categorical=categorical)
    post = model.predict(found).reindex(test) if len(found) else pd.DataFrame(index=test)
    if len(found):  # the most probable class (the first of equals), none without a judge
        best_class = pd.Series(np.array(ks, dtype=object)[post.to_numpy().argmax(axis=1)],
                               index=test).where(post.notna().all(axis=1))  # fmt: skip
    else:
        best_class = pd.Series(np.nan, index=test, dtype=object)
    votes = verdicts.loc[test]

    def dev_kappa(j: Any) -> float:
        v = verdicts.loc[dev, j]
        ok = v.notna()
        k = cohen_kappa(reference.reindex(dev)[ok], v[ok], labels=ks)
        return -np.inf if np.isnan(k) else k

    ranked = sorted(judges.columns, key=dev_kappa, reverse=True)  # stable: ties keep order
    best = str(ranked[0])
    calls: dict[str, pd.Series]
    if categorical:
        calls = {"dawid-skene": best_class, "majority": _plurality(votes, ranked)}
    else:
        calls = {
            "dawid-skene": best_class.astype(float),
            # an even split is a fail, as in the report's own jury
            "majority": (votes.sum(axis=1) > votes.notna().sum(axis=1) / 2).astype(float),
            "mean": (judges.loc[test].mean(axis=1) > 0.5).astype(float),
        }
    calls.update({str(j): verdicts.loc[test, j] for j in judges.columns})
    truth = reference.reindex(test)
    names = list(calls)
    n_k = len(ks)
    cells = n_k * n_k
    index = pd.Index(ks)
    t_code = index.get_indexer(pd.Index(truth.to_numpy()))
    rows = np.zeros((len(test), cells * len(names)))
    for j, name in enumerate(names):
        v_code = index.get_indexer(pd.Index(calls[name].to_numpy()))
        ok = (v_code >= 0) & (t_code >= 0)  # NaN (no verdict) is no class
        rows[np.flatnonzero(ok), cells * j + t_code[ok] * n_k + v_code[ok]] = 1.0
    codes, n_tasks = item_codes(tasks.reindex(test).astype(str).to_numpy())
    sums = per_item_sums(codes, n_tasks, rows)

    def kappa_of(j: int) -> SumStatistic:
        return lambda x: kappa_from_counts(
            x[..., cells * j : cells * (j + 1)].reshape(*x.shape[:-1], n_k, n_k)
        )

    stats = {name: kappa_of(j) for j, name in enumerate(names)}
    jury, top = kappa_of(0), kappa_of(names.index(best))
    stats["diff"] = lambda x: jury(x) - top(x)
    got = cluster_bootstrap_many(sums, stats, n_boot=n_boot, seed=seed, level=level)
    return JuryComparison(
        kappa={name: got[name][0] for name in names},
        best=best,
        diff=got["diff"][0],
        model=model,
        n_dev=len(dev),
        n_holdout=len(test),
    )
