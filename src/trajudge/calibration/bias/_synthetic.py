"""Synthetic worlds and judges whose defects are dials, for validating the probes by implantation.

A world holds items (trajectories) with a true quality level 1..5, a length that grows with
quality, the agent's model and a task id. Humans label the level with a small error. A judge
scores each item in both presentation orders and several samples; its defects are dials:

* ``noise``: standard deviation of per-call noise on the judge's latent score;
* ``position``: probability that a call returns the first-shown side (a pass in order ``ab``,
  a fail in ``ba``) whatever the item;
* ``length``: latent-score points added per standard deviation of log length;
* ``self_preference``: latent-score points added when the agent's family is the judge's;
* ``compression``: shrinks departures from the scale middle (0 = none, 1 = all scores 3);
* ``leniency``: latent-score points added to every item.

The clean judge (all dials 0 but a small noise) shows no bias; the probes should stay quiet on
it and find each planted dial.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: agent models by family; the judge's family decides which items are "its own"
_AGENTS = {"openai": "gpt-4o", "anthropic": "claude-3-5-sonnet"}
PASS_LEVEL = 4  # level >= 4 is a pass (threshold for the 1..5 scale)


@dataclass(frozen=True)
class SyntheticJudge:
    """A judge with defect dials (see the module docstring)."""

    name: str = "judge"
    model: str = "gpt-4o-mini"
    noise: float = 0.3
    position: float = 0.0
    length: float = 0.0
    self_preference: float = 0.0
    compression: float = 0.0
    leniency: float = 0.0


def synthetic_world(
    n_items: int = 400,
    *,
    trials: int = 4,
    seed: int = 0,
    levels: Sequence[float] = (0.2, 0.2, 0.2, 0.2, 0.2),
) -> pd.DataFrame:
    """Items with a true level 1..5, a length, an agent model and a task id.

    Log length is ``0.5 * level + N(0, 1)``, so longer items are better on average (the
    confound the verbosity probe must see through). ``task_id`` groups ``trials`` items.
    """
    rng = np.random.default_rng(seed)
    level = rng.choice(np.arange(1, 6), size=n_items, p=np.asarray(levels) / np.sum(levels))
    log_len = 0.5 * level + rng.normal(size=n_items)
    family = rng.choice(list(_AGENTS), size=n_items)
    return pd.DataFrame(
        {
            "item": [f"t{i:05d}" for i in range(n_items)],
            "task_id": [f"task{i // trials:04d}" for i in range(n_items)],
            "level": level,
            "truth": level >= PASS_LEVEL,
            "length": np.round(np.exp(5 + log_len)).astype(int),
            "agent_model": [_AGENTS[f] for f in family],
        }
    )


def synthetic_labels(
    world: pd.DataFrame,
    *,
    annotators: int = 2,
    error: float = 0.05,
    items: Sequence[str] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Human labels: each annotator gives the true level, off by one with probability ``error``."""
    rng = np.random.default_rng(seed)
    sub = world if items is None else world[world["item"].isin(list(items))]
    rows = []
    for a in range(annotators):
        off = rng.random(len(sub)) < error
        step = rng.choice([-1, 1], size=len(sub))
        label = np.clip(sub["level"].to_numpy() + off * step, 1, 5)
        rows.append(pd.DataFrame({"item": sub["item"], "annotator": f"h{a}", "label": label}))
    return pd.concat(rows, ignore_index=True)


def _family(model: str) -> str:
    return "anthropic" if "claude" in model else "openai"


def synthetic_judgments(
    world: pd.DataFrame,
    judges: Sequence[SyntheticJudge],
    *,
    orders: Sequence[str] = ("ab", "ba"),
    samples: int = 3,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per (item, judge, order, sample) with a 1..5 ``score`` and the metadata columns."""
    rng = np.random.default_rng(seed)
    frames = []
    n = len(world)
    z_len = np.log(world["length"].to_numpy(float))
    z_len = (z_len - z_len.mean()) / z_len.std()
    own = np.array([_family(m) for m in world["agent_model"]])
    for judge in judges:
        base = world["level"].to_numpy(float)
        base = 3 + (1 - judge.compression) * (base - 3) + judge.leniency
        base = base + judge.length * z_len + judge.self_preference * (own == _family(judge.model))
        for order in orders:
            for s in range(samples):
                score = np.clip(np.round(base + rng.normal(0, judge.noise, n)), 1, 5)
                forced = rng.random(n) < judge.position
                first = np.maximum(score, PASS_LEVEL) if order == "ab" else np.minimum(score, 3)
                score = np.where(forced, first, score)
                frames.append(
                    pd.DataFrame(
                        {
                            "item": world["item"],
                            "judge": judge.name,
                            "order": order,
                            "sample": s,
                            "score": score,
                            "length": world["length"],
                            "task_id": world["task_id"],
                            "agent_model": world["agent_model"],
                            "judge_model": judge.model,
                            "cost_usd": 0.002,
                            "latency_s": 1.5,
                        }
                    )
                )
    return pd.concat(frames, ignore_index=True)
