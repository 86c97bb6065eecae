"""The panel figures of one rubric for ``trajudge report``: agreement by slice, the
Dawid-Skene jury on holdout, and the alternative annotator test of each judge.

Slices are read from the trajectories: intent, task family (the task id without its
trailing number: ``refund-012`` is in ``refund``), length (steps, in buckets), the set of
tools called, and every metadata key with between 2 and :data:`MAX_VALUES` values (a key
with more, such as a run id, is no slice). A dimension with one value is no slice either.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
import pandas as pd

from trajudge.calibration.panel import (
    METHODS,
    alt_test,
    jury_comparison,
    slice_agreement,
)
from trajudge.core import InputError
from trajudge.evalset import DEV_SHARE, split_of

#: a metadata key with more distinct values than this is an identifier, not a slice
MAX_VALUES = 12
LENGTH_BUCKETS = ((0, 2, "1-2 steps"), (3, 5, "3-5 steps"), (6, 10, "6-10 steps"))
_TRAILING_NUMBER = re.compile(r"[-_./: ]*\d+$")


def task_family(task_id: Any) -> str | None:
    """``"refund-012"`` -> ``"refund"``; a task id that is only a number has no family.

    >>> task_family("refund-012"), task_family("T3"), task_family("17")
    ('refund', 'T', None)
    """
    if task_id is None or (isinstance(task_id, float) and np.isnan(task_id)):
        return None
    family = _TRAILING_NUMBER.sub("", str(task_id))
    return family or None


def length_bucket(steps: Any) -> str | None:
    """The bucket of a step count: 1-2, 3-5, 6-10, 11 or more.

    >>> length_bucket(4), length_bucket(30)
    ('3-5 steps', '11+ steps')
    """
    if steps is None or (isinstance(steps, float) and np.isnan(steps)):
        return None
    n = int(steps)
    for low, high, name in LENGTH_BUCKETS:
        if low <= n <= high:
            return name
    return "11+ steps"


def slice_columns(trajs: pd.DataFrame | None) -> dict[str, pd.Series]:
    """Dimension -> the slice of each trajectory (indexed by trajectory id)."""
    if trajs is None or trajs.empty:
        return {}
    info = trajs.set_index("trajectory_id")
    dims: dict[str, pd.Series] = {}
    if "intent" in info:
        dims["intent"] = info["intent"]
    if "task_id" in info:
        dims["task family"] = info["task_id"].map(task_family)
    if "steps" in info:
        dims["length"] = info["steps"].map(length_bucket)
    if "tools" in info:
        dims["tools"] = info["tools"]
    if "meta" in info:
        meta = pd.DataFrame(list(info["meta"].map(lambda m: m or {})), index=info.index)
        for key in sorted(meta.columns, key=str):
            dims[f"metadata.{key}"] = meta[key].map(
                lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
            )
    out = {}
    for name, col in dims.items():
        n = col.dropna().nunique()
        if 2 <= n <= MAX_VALUES:
            out[name] = col
    return out


def panel_figures(
    *,
    verdicts: Mapping[str, pd.Series],
    shares: Mapping[str, pd.Series],
    consensus: pd.Series,
    annotators: pd.DataFrame,
    trajs: pd.DataFrame | None,
    method: str = "holm",
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """Slices, jury and alt-test of one rubric's judges, as plain data for report.json.

    ``verdicts``: judge -> 0/1 per item; ``shares``: judge -> pass share per item (over its
    calls); ``consensus``: item -> 0/1; ``annotators``: ``item, annotator, label`` (0/1).
    """
    if method not in METHODS:
        raise InputError("--slice-method", reason=f"{method!r} is not one of {', '.join(METHODS)}")
    items = consensus.index
    known = trajs.set_index("trajectory_id")["task_id"] if trajs is not None else pd.Series()
    judged = {i for v in shares.values() for i in v.index}
    every = pd.Index(consensus.index).union(pd.Index(sorted(judged, key=str))).unique()
    # an item without a known task is a cluster of its own
    tasks = pd.Series(
        [str(known.get(i)) if pd.notna(known.get(i)) else str(i) for i in every], index=every
    )
    out: dict[str, Any] = {"slices": [], "slice_method": method, "notes": []}
    dims = slice_columns(trajs)
    if dims and len(items):
        rows = slice_agreement(
            labels=consensus.to_numpy(dtype=float),
            verdicts={j: v.reindex(items).to_numpy(dtype=float) for j, v in verdicts.items()},
            slices={d: col.reindex(items).to_numpy(dtype=object) for d, col in dims.items()},
            clusters=tasks.reindex(items).to_numpy(),
            method=method,
            n_boot=n_boot,
            seed=seed,
        )
        out["slices"] = [r.to_dict() for r in rows]
    elif not dims:
        out["notes"].append("no slice: the trajectories carry no intent, family, length or tools")
    out["jury"] = jury_figures(
        shares, annotators, consensus, tasks, n_boot=n_boot, seed=seed, notes=out["notes"]
    )
    out["alt_test"] = {}
    n_annotators = annotators["annotator"].nunique() if len(annotators) else 0
    if n_annotators < 3:
        out["notes"].append(
            f"alternative annotator test: needs 3 or more annotators, {n_annotators} labelled"
        )
    else:
        for judge, v in verdicts.items():
            out["alt_test"][judge] = alt_test(judge=v, annotators=annotators).to_dict()
    return out


def rubric_panel(
    verdicts: Mapping[str, pd.Series],
    shares: Mapping[str, pd.Series],
    consensus: pd.Series,
    labels: pd.DataFrame,
    trajs: pd.DataFrame | None,
    *,
    dev: Collection[str],
    method: str,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """:func:`panel_figures` of one rubric of the report, dev items left out; ``labels``
    are the labellers' own, already cut to pass/fail."""
    annotators = labels[["item", "annotator", "label"]].dropna(subset=["label"])
    return panel_figures(
        verdicts=verdicts,
        shares=shares,
        consensus=consensus[~consensus.index.isin(dev)],
        annotators=annotators[~annotators["item"].isin(dev)],
        trajs=trajs,
        method=method,
        n_boot=n_boot,
        seed=seed,
    )


def jury_figures(
    shares: Mapping[str, pd.Series],
    annotators: pd.DataFrame,
    consensus: pd.Series,
    tasks: pd.Series,
    *,
    n_boot: int,
    seed: int,
    notes: list[str],
    classes: list[Any] | None = None,
) -> dict[str, Any] | None:
    """The Dawid-Skene jury of a rubric's judges on the holdout tasks (``classes``: the
    categories of nominal or pairwise verdicts, ``shares`` then each judge's category per
    item), or None with the reason in ``notes``."""
    if len(shares) < 2:
        notes.append("Dawid-Skene jury: needs two or more judges of the rubric")
        return None
    table = pd.DataFrame(dict(shares))
    holdout = pd.Series([split_of(tasks[i]) == "holdout" for i in table.index], index=table.index)
    labelled = table.index.isin(consensus.index)
    if not (holdout & labelled).any() or not (~holdout & labelled).any():
        notes.append(
            "Dawid-Skene jury: needs labelled items on both sides of the dev/holdout split "
            f"(tasks split by trajudge evalset's hash, {DEV_SHARE:.0%} dev)"
        )
        return None
    found = jury_comparison(
        judges=table,
        annotators=annotators,
        reference=consensus,
        tasks=tasks.reindex(table.index),
        holdout=holdout,
        classes=classes,
        n_boot=n_boot,
        seed=seed,
    )
    return found.to_dict()
