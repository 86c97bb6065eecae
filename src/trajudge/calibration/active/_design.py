r"""Which items to label: inclusion probabilities from the judge's uncertainty, and the draw.

The design is Poisson sampling in a random order. Every item i gets a probability
:math:`\pi_i`; walking the items in an order independent of everything else, item i is drawn
(sent to people) when an independent uniform :math:`u_i < \pi_i`. Labelling may stop after
any prefix of that order: the items considered so far are a uniformly random subset, and each
of them was drawn with its own known probability, which is what the estimators of
:mod:`trajudge.calibration.active._ipw` need.

:math:`\pi_i` favours items whose verdict is likely wrong. Zrnic & Candès (2024) show that
the variance of the active estimator is smallest with :math:`\pi_i \propto
\sqrt{E[(Y - f)^2 \mid x_i]}`; for a 0/1 verdict that expectation is the chance the verdict is
wrong, which :func:`judge_uncertainty` estimates from what the judge itself shows. The
proportional part is mixed with the uniform design so that every probability has a floor:
an uncertainty signal that says nothing costs little, and no weight :math:`1/\pi_i` is huge.

References
----------
Zrnic & Candès (2024), "Active Statistical Inference", ICML 2024, arXiv:2403.03208.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from trajudge.calibration._estimate import FloatArray, as_1d, check_same_length

__all__ = ["draw", "fitted_uncertainty", "judge_uncertainty", "sampling_probabilities"]


def _unit(values: npt.ArrayLike | None, name: str, n: int | None) -> FloatArray | None:
    if values is None:
        return None
    v = as_1d(values, name).astype(np.float64)
    if np.isnan(v).any() or (v < 0).any() or (v > 1).any():
        raise ValueError(f"{name} must be in [0, 1] without NaN")
    if n is not None and v.size != n:
        raise ValueError(f"{name} has {v.size} values, expected {n}")
    return v


def judge_uncertainty(
    *,
    pass_share: npt.ArrayLike,
    flipped: npt.ArrayLike | None = None,
    spread: npt.ArrayLike | None = None,
    margin: npt.ArrayLike | None = None,
) -> FloatArray:
    """The chance each item's verdict is wrong, as far as the judge itself shows, in [0, 0.5].

    Parameters
    ----------
    pass_share : array-like of shape (N,)
        Share of the judge's samples and presentation orders that passed the item (the
        verdict is the majority): ``min(share, 1 - share)`` is the sample disagreement.
    flipped : array-like of shape (N,), optional
        1 where the verdict changed with the presentation order (a flip): as uncertain as a
        coin, 0.5.
    spread : array-like of shape (N,), optional
        Spread of the expected scores across orders and samples, as a share of the scale:
        half of it counts.
    margin : array-like of shape (N,), optional
        Distance of the mean score from the pass cut, as a share of the half scale (0 on the
        cut, 1 at the far end): ``(1 - margin) / 2`` counts, so an item on the cut is a coin.

    Returns
    -------
    numpy.ndarray
        The largest of the signals given, per item.

    Examples
    --------
    >>> judge_uncertainty(pass_share=[1.0, 0.8, 0.5], flipped=[0, 0, 0]).tolist()
    [0.0, 0.19999999999999996, 0.5]
    >>> judge_uncertainty(pass_share=[1.0, 1.0], margin=[1.0, 0.2]).tolist()
    [0.0, 0.4]
    """
    share = _unit(pass_share, "pass_share", None)
    assert share is not None
    n = share.size
    out = np.minimum(share, 1.0 - share)
    flip = _unit(flipped, "flipped", n)
    if flip is not None:
        out = np.maximum(out, 0.5 * flip)
    spr = _unit(spread, "spread", n)
    if spr is not None:
        out = np.maximum(out, 0.5 * spr)
    mar = _unit(margin, "margin", n)
    if mar is not None:
        out = np.maximum(out, 0.5 * (1.0 - mar))
    return out


def sampling_probabilities(
    *, uncertainty: npt.ArrayLike, budget: float, floor_share: float = 0.3
) -> FloatArray:
    r"""Inclusion probabilities with expected sum ``budget``, favouring uncertain items.

    :math:`\pi_i = b/N \cdot (s + (1 - s)\, \sqrt{e_i} / \overline{\sqrt{e}})` with
    :math:`s` = ``floor_share``, :math:`e_i` the uncertainty and :math:`b` the budget
    (Zrnic & Candès 2024: :math:`\pi \propto \sqrt{E[(Y-f)^2 \mid x]}`, mixed with the
    uniform design). Every probability is at least :math:`s\,b/N`. Probabilities above 1 are
    set to 1 and the rest scaled up so the sum stays ``budget`` (the floor scales with them).
    When every uncertainty is equal the design is uniform, :math:`b/N`.

    Parameters
    ----------
    uncertainty : array-like of shape (N,)
        Non-negative, e.g. :func:`judge_uncertainty`.
    budget : float
        Expected number of labels, in (0, N].
    floor_share : float
        The uniform design's share of the mixture, in (0, 1]: 1 is uniform sampling.

    Examples
    --------
    >>> sampling_probabilities(uncertainty=[0.0, 0.0, 0.25, 0.25], budget=2, floor_share=0.5)
    array([0.25, 0.25, 0.75, 0.75])
    """
    e = as_1d(uncertainty, "uncertainty").astype(np.float64)
    n = e.size
    if n == 0 or np.isnan(e).any() or (e < 0).any():
        raise ValueError("uncertainty must be non-empty, non-negative, without NaN")
    if not 0 < budget <= n:
        raise ValueError(f"budget must be in (0, {n}], got {budget}")
    if not 0 < floor_share <= 1:
        raise ValueError(f"floor_share must be in (0, 1], got {floor_share}")
    root = np.sqrt(e)
    shape = np.ones(n) if root.mean() == 0 else floor_share + (1 - floor_share) * root / root.mean()
    pi = budget * shape / shape.sum()
    # water-filling: cap at 1, spread the excess over the others in proportion, until none
    # is above 1 (at most N rounds; each caps at least one item)
    for _ in range(n):
        capped = pi >= 1.0
        if not (pi > 1.0 + 1e-12).any():
            break
        rest = budget - capped.sum()
        pi = np.where(capped, 1.0, shape * rest / shape[~capped].sum())
    out: FloatArray = np.minimum(pi, 1.0)
    return out


def draw(*, probabilities: npt.ArrayLike, uniforms: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Poisson sampling: item i is drawn when ``uniforms[i] < probabilities[i]``.

    The uniforms must be independent of the items' labels and of each other (a seeded
    generator, or a hash of the item id as the labelling app uses).

    Examples
    --------
    >>> draw(probabilities=[0.5, 0.5, 1.0], uniforms=[0.2, 0.7, 0.99]).tolist()
    [True, False, True]
    """
    pi = as_1d(probabilities, "probabilities").astype(np.float64)
    u = as_1d(uniforms, "uniforms").astype(np.float64)
    check_same_length(probabilities=pi, uniforms=u)
    if np.isnan(pi).any() or (pi <= 0).any() or (pi > 1).any():
        raise ValueError("probabilities must be in (0, 1]")
    out: npt.NDArray[np.bool_] = u < pi
    return out


def fitted_uncertainty(
    *,
    uncertainty: npt.ArrayLike,
    labelled_uncertainty: npt.ArrayLike,
    labelled_error: npt.ArrayLike,
    labelled_probability: npt.ArrayLike,
    bins: int = 4,
    prior: float = 5.0,
) -> FloatArray:
    """The judge's error rate by uncertainty level, learnt from labels already drawn.

    The raw signal of :func:`judge_uncertainty` may not track the judge's errors (a confident
    judge can be wrong as often as a hesitant one). This calibrates it: the items are cut
    into ``bins`` groups at the quantiles of ``uncertainty``; each group's error rate is the
    inverse-probability-weighted share of wrong verdicts among the labelled items that fall
    in it, shrunk towards the overall rate with ``prior`` pseudo-labels. Feeding the result
    to :func:`sampling_probabilities` for the items not yet considered keeps the design
    valid (the probabilities depend only on labels drawn before) and makes it uniform when
    the signal says nothing: the fitted rates are then about equal (Zrnic & Candès 2024,
    §5: learning the uncertainty from the labels as they come).

    Examples
    --------
    >>> fitted_uncertainty(uncertainty=[0, 0, 0.4, 0.4], labelled_uncertainty=[0, 0.4, 0.4],
    ...                    labelled_error=[0, 1, 1], labelled_probability=[1, 1, 1], bins=2,
    ...                    prior=0).tolist()
    [0.0, 0.0, 1.0, 1.0]
    """
    u = as_1d(uncertainty, "uncertainty").astype(np.float64)
    lu = as_1d(labelled_uncertainty, "labelled_uncertainty").astype(np.float64)
    err = as_1d(labelled_error, "labelled_error").astype(np.float64)
    lp = as_1d(labelled_probability, "labelled_probability").astype(np.float64)
    check_same_length(labelled_uncertainty=lu, labelled_error=err, labelled_probability=lp)
    if np.isnan(lp).any() or (lp <= 0).any() or (lp > 1).any():
        raise ValueError("labelled_probability must be in (0, 1]")
    if not np.isin(err, (0.0, 1.0)).all():
        raise ValueError("labelled_error must be 0/1")
    cuts = np.linspace(0, 1, bins + 1)[1:-1]
    edges: FloatArray = np.unique(np.quantile(u, cuts)) if u.size else np.zeros(0)
    w = 1.0 / lp
    overall = float(np.sum(w * err) / np.sum(w)) if lu.size else 0.0
    item_bin, lab_bin = np.searchsorted(edges, u, "left"), np.searchsorted(edges, lu, "left")
    rates = np.empty(len(edges) + 1)
    for b in range(rates.size):
        inside = lab_bin == b
        k = int(inside.sum())  # shrink by counts, not weights: a weight is not a label
        mean = float(np.sum(w[inside] * err[inside]) / np.sum(w[inside])) if k else overall
        rates[b] = (k * mean + prior * overall) / (k + prior) if k + prior > 0 else overall
    out: FloatArray = rates[item_bin]
    return out
