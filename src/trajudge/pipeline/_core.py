"""The core layer: the core set of a run and whether each core trajectory passed."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pandas as pd

from trajudge.config import TrajudgeConfig
from trajudge.core import InputError
from trajudge.evalset import core_tasks, read_evalset
from trajudge.judges import (
    Judge,
)
from trajudge.store import Store


def core_task_ids(
    cfg: TrajudgeConfig, config_path: str | Path, *, dataset: str, present: set[str]
) -> list[str]:
    """The core set of a run: ``layers.core_tasks`` and the tasks of the core cases of the eval
    set at ``layers.evalset``, in that order, each once.

    Raises :class:`InputError` naming the config key (and the case) when a core task has no
    trajectory among ``present`` (the task ids of ``dataset``): a core set must not shrink
    silently.
    """
    if cfg.layers is None:
        return []
    named = {str(t): "layers.core_tasks" for t in cfg.layers.core_tasks}
    if cfg.layers.evalset is not None:
        for task, case in core_tasks(read_evalset(cfg.layers.evalset)).items():
            named.setdefault(task, f"layers.evalset ({cfg.layers.evalset}: case {case!r})")
    for task, where in named.items():
        if task not in present:
            raise InputError(
                str(config_path),
                field=where,
                reason=f"core task {task!r} has no trajectory in dataset {dataset!r}",
            )
    return list(named)


def core_results(
    store: Store,
    dataset: str,
    judges: list[Judge],
    tasks: list[str],
    gates: Collection[str] = ("gate",),
) -> pd.DataFrame:
    """One row per core trajectory: passed when its gates passed (``gates``: the severities
    that skipped the judges) and every judge's mean score (over orders and samples, of the
    judge's current configuration only) meets the rubric's pass threshold; None when a judge
    only errored on it."""
    rules = store.gate_results(dataset, gates)
    frame = store.judgments_frame(dataset)
    frame = frame[frame["config_sha256"].isin([j.config_sha256 for j in judges])]
    rows = []
    for t in store.trajectories(dataset):
        if t.task_id not in tasks:
            continue
        passed: bool | None = rules.get(t.id, True)
        for judge in judges if passed else []:
            mine = frame[(frame["judge"] == judge.name) & (frame["trajectory_id"] == t.id)]
            scores = mine[mine["error"].isna()]["score"].dropna()
            if scores.empty:
                passed = None
                break
            if not judge.rubric.scale.passed(float(scores.mean())):
                passed = False
                break
        rows.append({"case_id": t.id, "passed": passed})
    return pd.DataFrame(rows, columns=["case_id", "passed"])
