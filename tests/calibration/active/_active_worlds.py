"""Synthetic labelling worlds for the active-sampling simulations.

A world is a dataset of N items a judge scored several times: ``pass_share`` is the share of
its samples that passed an item, the verdict the majority. Most items are easy (every sample
agrees); the rest are hard (the samples split). In an *informative* world the judge's doubt
tracks its errors: easy items are rarely wrong, a hard item with share s is a pass with
chance s. In an *uninformative* one every verdict is wrong with the same chance, whatever the
samples said. Human labels are drawn from those chances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trajudge.calibration.active._design import (
    draw,
    fitted_uncertainty,
    judge_uncertainty,
    sampling_probabilities,
)
from trajudge.calibration.active._ipw import ActiveEstimates, active_estimates


@dataclass(frozen=True)
class World:
    verdict: np.ndarray
    label: np.ndarray
    uncertainty: np.ndarray

    @property
    def kappa(self) -> float:
        f, y = self.verdict, self.label
        po = np.mean(f == y)
        pe = f.mean() * y.mean() + (1 - f.mean()) * (1 - y.mean())
        return float((po - pe) / (1 - pe))


def world(rng: np.random.Generator, *, informative: bool, n: int = 2000) -> World:
    hard = rng.random(n) < rng.uniform(0.05, 0.2)
    side = rng.random(n) < rng.uniform(0.3, 0.8)
    share = np.where(hard, rng.choice([0.4, 0.6], n), side.astype(float))
    verdict = (share >= 0.5).astype(float)
    if informative:
        easy_error = rng.uniform(0.005, 0.02)
        chance = np.where(hard, share, np.where(verdict == 1, 1 - easy_error, easy_error))
    else:
        error = rng.uniform(0.05, 0.2)
        chance = np.where(verdict == 1, 1 - error, error)
    label = (rng.random(n) < chance).astype(float)
    return World(verdict, label, judge_uncertainty(pass_share=share))


def label_world(
    rng: np.random.Generator, w: World, *, budget: float, active: bool, pilot: float = 0.2
) -> ActiveEstimates:
    """Draw labels in a random order and estimate. Uniform: every item with budget/N. Active:
    the first ``pilot`` share of the order uniformly, the rest with probabilities from the
    uncertainty fitted on the pilot's labels (the design a labelling session runs)."""
    n = w.verdict.size
    first = int(pilot * n) if active else n
    pi = np.full(n, budget / n)
    drawn = draw(probabilities=pi, uniforms=rng.random(n))
    if active:
        head = drawn[:first]
        errors = (w.verdict[:first] != w.label[:first])[head].astype(float)
        fitted = fitted_uncertainty(
            uncertainty=w.uncertainty[first:],
            labelled_uncertainty=w.uncertainty[:first][head],
            labelled_error=errors,
            labelled_probability=pi[:first][head],
        )
        rest = budget * (n - first) / n
        pi[first:] = sampling_probabilities(uncertainty=fitted, budget=rest)
        drawn[first:] = draw(probabilities=pi[first:], uniforms=rng.random(n - first))
    label = np.where(drawn, w.label, np.nan)
    return active_estimates(verdict=w.verdict, label=label, probability=pi)
