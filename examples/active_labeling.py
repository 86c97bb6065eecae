"""Label fewer items: the active design against uniform sampling on a synthetic judged set.

2,000 items a judge scored five times each. On most, the five samples agree and the judge is
right 99% of the time; on the rest they split and it is close to a coin. People's labels are
simulated from those chances. Uniform sampling labels 400 items; the active design 300,
drawn by the judge's uncertainty with known probabilities and weighted back. Both print the
pass rate and κ with 95% intervals, and the stopping rule for κ ≥ 0.6.

    python examples/active_labeling.py
"""

from __future__ import annotations

import numpy as np

from trajudge.calibration import (
    active_estimates,
    draw,
    judge_uncertainty,
    sampling_probabilities,
    stop_status,
)

rng = np.random.default_rng(7)
n = 2000
hard = rng.random(n) < 0.15
share = np.where(hard, rng.choice([0.4, 0.6], n), (rng.random(n) < 0.6).astype(float))
verdict = (share >= 0.5).astype(float)
chance = np.where(hard, share, np.where(verdict == 1, 0.99, 0.01))
truth = (rng.random(n) < chance).astype(float)  # what people would say
uncertainty = judge_uncertainty(pass_share=share)

print(f"{'design':8} {'labels':>6}  {'pass rate':18}  {'kappa':18}  stop (kappa >= 0.6)")
for design, budget in (("uniform", 400), ("active", 300)):
    weights = uncertainty if design == "active" else np.ones(n)
    pi = sampling_probabilities(uncertainty=weights, budget=budget)
    drawn = draw(probabilities=pi, uniforms=rng.random(n))
    label = np.where(drawn, truth, np.nan)
    est = active_estimates(verdict=verdict, label=label, probability=pi)
    stop = stop_status(statistic="kappa", target=0.6, verdict=verdict, label=label, probability=pi)
    p, k = est.pass_rate, est.kappa
    print(
        f"{design:8} {est.n_labeled:>6}  {p.value:.3f} [{p.low:.3f}, {p.high:.3f}]  "
        f"{k.value:.3f} [{k.low:.3f}, {k.high:.3f}]  {stop.message}"
    )
print(f"truth: pass rate {truth.mean():.3f}")
