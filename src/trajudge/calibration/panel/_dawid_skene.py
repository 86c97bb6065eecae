"""Dawid-Skene: a jury that learns whom to trust, from the labels alone.

Every rater (judge or annotator) has a confusion matrix ``pi[r][true, given]``; the items'
true classes are hidden. EM alternates between the posterior of each item's class given
every rater's label (E) and the raters' confusion matrices and the class prior given those
posteriors (M). A judge that is right more often gets a larger say; one that always passes
gets none. The classes may be any number: pass/fail, the categories of a nominal verdict,
or a pairwise verdict's A / B / tie as three classes (each rater's confusion matrix is then
3 x 3: a judge that says "tie" when one side won is told apart from one that picks the wrong
side).

References
----------
Dawid & Skene (1979), "Maximum likelihood estimation of observer error-rates using the EM
algorithm", J. R. Statist. Soc. C 28(1), 20-28.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from trajudge.calibration._estimate import FloatArray, num

#: added to every confusion count in the M step, so that a class a rater never gave keeps a
#: small probability and one label cannot send a posterior to exactly 0 or 1
SMOOTHING = 0.01


@dataclass(frozen=True)
class DawidSkene:
    """A fitted Dawid-Skene model.

    ``classes`` in order; ``prior[k]``; ``confusion[rater]`` a (K x K) matrix, row = true
    class, column = the label the rater gives, each row summing to 1; ``posterior`` one row
    per item (index: item) with a column per class; ``n_iter`` and ``converged`` say how EM
    ended.
    """

    classes: list[Any]
    prior: FloatArray
    confusion: dict[str, FloatArray]
    posterior: pd.DataFrame
    n_iter: int
    converged: bool

    def weight(self, rater: str) -> float:
        r"""The rater's weight in the jury's log-odds for two classes (pass = the second):
        :math:`\log \frac{\pi_{11}\,\pi_{00}}{\pi_{10}\,\pi_{01}}`, the log diagnostic odds
        ratio. A label from this rater moves the posterior log-odds by plus or minus (about)
        half of it; 0 for a rater who says the same whatever the truth."""
        c = self.confusion[rater]
        return float(np.log(c[1, 1] * c[0, 0] / (c[1, 0] * c[0, 1])))

    def accuracy(self, rater: str) -> float:
        r"""The chance the rater gives the true class, under the fitted prior:
        :math:`\sum_k p_k\,\pi_{kk}`. Any number of classes (nominal verdicts, or pairwise
        ones as A / B / tie); read beside the prior's largest share, what a rater who
        always gives the most common class scores."""
        return float(np.dot(self.prior, np.diag(self.confusion[rater])))

    def predict(self, ratings: pd.DataFrame) -> pd.DataFrame:
        """Posteriors of new items from the fitted confusion matrices and prior (no refit):
        ``ratings`` has ``item``, ``rater``, ``label``; raters the model does not know are
        refused (ValueError)."""
        unknown = sorted(set(ratings["rater"].astype(str)) - set(self.confusion))
        if unknown:
            raise ValueError(f"raters not in the model: {', '.join(unknown)}")
        items, counts = _counts(ratings, self.classes, list(self.confusion))
        logpost = _log_posterior(counts, self.prior, self._stack())
        return pd.DataFrame(_normalise(logpost), index=items, columns=self.classes)

    def _stack(self) -> FloatArray:
        return np.stack([self.confusion[r] for r in self.confusion])

    def to_dict(self) -> dict[str, Any]:
        two = len(self.classes) == 2
        return {
            "classes": [c if isinstance(c, str) else float(c) for c in self.classes],
            "prior": [float(p) for p in self.prior],
            "raters": {
                r: {
                    "confusion": c.tolist(),
                    "weight": num(self.weight(r)) if two else None,
                    "accuracy": num(self.accuracy(r)),
                }
                for r, c in self.confusion.items()
            },
            "n_iter": self.n_iter,
            "converged": self.converged,
        }


def _counts(
    ratings: pd.DataFrame, classes: Sequence[Any], raters: Sequence[str]
) -> tuple[list[Any], FloatArray]:
    """``counts[i, r, l]``: how many times rater r gave item i the label l."""
    frame = ratings.dropna(subset=["label"])
    items = sorted(frame["item"].unique(), key=str)
    i = pd.Index(items).get_indexer(pd.Index(frame["item"]))
    r = pd.Index(list(raters)).get_indexer(pd.Index(frame["rater"].astype(str)))
    lab = pd.Index(list(classes)).get_indexer(pd.Index(frame["label"]))
    if (lab < 0).any():
        bad = frame["label"].to_numpy()[lab < 0][0]
        raise ValueError(f"label {bad!r} is not among classes {list(classes)}")
    counts = np.zeros((len(items), len(raters), len(classes)))
    np.add.at(counts, (i, r, lab), 1.0)
    return items, counts


def _log_posterior(counts: FloatArray, prior: FloatArray, confusion: FloatArray) -> FloatArray:
    # log p(class k) + sum over raters and labels of n[i, r, l] * log pi[r][k, l]; a zero
    # probability is floored at the smallest normal float so that 0 * log 0 stays 0, not NaN
    tiny = np.finfo(np.float64).tiny
    logs = np.log(np.maximum(confusion, tiny))
    out = np.log(np.maximum(prior, tiny))[None, :] + np.einsum("irl,rkl->ik", counts, logs)
    return np.asarray(out, dtype=np.float64)


def _normalise(logpost: FloatArray) -> FloatArray:
    shifted = np.exp(logpost - logpost.max(axis=1, keepdims=True))
    return np.asarray(shifted / shifted.sum(axis=1, keepdims=True), dtype=np.float64)


def _m_step(
    counts: FloatArray, post: FloatArray, smoothing: float
) -> tuple[FloatArray, FloatArray]:
    prior = post.mean(axis=0)
    # joint[r, k, l] = sum_i post[i, k] * counts[i, r, l]
    joint = np.einsum("ik,irl->rkl", post, counts) + smoothing
    return prior, joint / joint.sum(axis=2, keepdims=True)


def dawid_skene(
    *,
    ratings: pd.DataFrame,
    classes: Sequence[Any] | None = None,
    max_iter: int = 100,
    tol: float = 1e-6,
    smoothing: float = SMOOTHING,
) -> DawidSkene:
    """Fit Dawid-Skene by EM.

    Parameters
    ----------
    ratings : DataFrame
        One row per rating: ``item``, ``rater`` (a judge or an annotator) and ``label``
        (missing labels are set aside). A rater may rate an item several times.
    classes :
        The classes in order (default: the sorted labels seen); for pass/fail, ``[0, 1]``.
    max_iter, tol :
        EM stops after ``max_iter`` rounds or when no posterior moves by more than ``tol``.
    smoothing :
        Pseudo-count added to every confusion cell in the M step (0 gives the textbook
        maximum-likelihood update).

    Returns
    -------
    DawidSkene
        Started from the per-item vote shares (the soft majority), as in Dawid & Skene.

    Examples
    --------
    >>> r = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "rater": list("abcabc"),
    ...                   "label": [1, 1, 0, 0, 0, 0]})
    >>> m = dawid_skene(ratings=r, classes=[0, 1], max_iter=1, smoothing=0)
    >>> m.posterior.round(3).to_numpy().tolist()  # see tests/calibration/panel
    [[0.111, 0.889], [1.0, 0.0]]
    """
    frame = ratings.dropna(subset=["label"])
    classes = sorted(frame["label"].unique()) if classes is None else list(classes)
    raters = sorted({str(r) for r in frame["rater"]})
    frame = frame.assign(rater=frame["rater"].astype(str))
    items, counts = _counts(frame, classes, raters)
    post = counts.sum(axis=1)
    post = post / np.maximum(post.sum(axis=1, keepdims=True), 1.0)
    converged, n_iter = False, 0
    prior, confusion = _m_step(counts, post, smoothing)
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - n_iter is reported
        new = _normalise(_log_posterior(counts, prior, confusion))
        moved = float(np.max(np.abs(new - post))) if new.size else 0.0
        post = new
        prior, confusion = _m_step(counts, post, smoothing)
        if moved <= tol:
            converged = True
            break
    return DawidSkene(
        classes=list(classes),
        prior=prior,
        confusion={r: confusion[j] for j, r in enumerate(raters)},
        posterior=pd.DataFrame(post, index=items, columns=classes),
        n_iter=n_iter,
        converged=converged,
    )
