"""Synthetic worlds for the alignment tests: items, a judge with planted defects, labels.

Built from the package's own synthetic world and judges (the dials leniency, compression,
noise, position), the real per-item aggregation (``item_features``) and the real dev/holdout
split (``trajudge.evalset.split_of``, whole tasks per side). Many worlds are drawn in ONE
vectorised call and cut apart by task, so a 200-world test stays fast.
"""

from __future__ import annotations

import pandas as pd

from trajudge.calibration import (
    SyntheticJudge,
    item_features,
    synthetic_judgments,
    synthetic_labels,
    synthetic_world,
)
from trajudge.evalset import split_of

PASS = 4  # the rubric's threshold on the 1..5 scale (and the synthetic world's pass level)


def labelled_items(
    judge: SyntheticJudge,
    *,
    n_items: int,
    seed: int,
    trials: int = 4,
    samples: int = 3,
    dev_share: float = 0.5,
    label_error: float = 0.05,
    threshold: float = PASS,
) -> pd.DataFrame:
    """One row per item, ready for ``align``: features, ``label`` (one annotator's level >= 4,
    off by one level with probability ``label_error``), the true pass (``truth``) and the
    ``split`` from ``split_of`` (salted by the seed, so every world splits differently).
    ``threshold`` is the cut on the mean score that gives the judge's verdict as it stands."""
    world = synthetic_world(n_items, trials=trials, seed=seed)
    calls = synthetic_judgments(world, [judge], samples=samples, seed=seed + 1)
    items = item_features(calls, threshold=threshold)
    labels = synthetic_labels(world, annotators=1, error=label_error, seed=seed + 2)
    level = labels.set_index("item")["label"].reindex(items["item"]).to_numpy()
    items["label"] = (level >= PASS).astype(float)
    items["truth"] = world.set_index("item")["truth"].reindex(items["item"]).to_numpy(float)
    salt = f"world{seed}"
    splits = {t: split_of(t, dev_share, salt) for t in items["task_id"].unique()}
    items["split"] = items["task_id"].map(splits)
    return items


def many_worlds(
    judge: SyntheticJudge,
    *,
    n_worlds: int,
    items_per_world: int,
    seed: int,
    trials: int = 4,
    threshold: float = PASS,
) -> list[pd.DataFrame]:
    """``n_worlds`` independent worlds of ``items_per_world`` items, drawn in one call."""
    items = labelled_items(
        judge, n_items=n_worlds * items_per_world, seed=seed, trials=trials, threshold=threshold
    )
    task_no = items["task_id"].str.removeprefix("task").astype(int).to_numpy()
    world = task_no // (items_per_world // trials)
    return [items[world == w].reset_index(drop=True) for w in range(n_worlds)]
