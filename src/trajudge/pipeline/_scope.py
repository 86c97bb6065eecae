"""What a run covers: the configured subset (``limits``), and the check that the stored
dataset is that subset."""

from __future__ import annotations

from trajudge.config import TrajudgeConfig
from trajudge.core import InputError
from trajudge.store import Store
from trajudge.trajectories import Trajectory


def select_subset(trajectories: list[Trajectory], cfg: TrajudgeConfig) -> list[Trajectory]:
    """The configured subset: listed tasks, the first ``max_tasks`` tasks (file order), and
    trials below ``max_trials``."""
    lim = cfg.limits
    out = trajectories
    if lim.tasks is not None:
        wanted = set(lim.tasks)
        out = [t for t in out if t.task_id in wanted]
    if lim.max_tasks is not None:
        first = list(dict.fromkeys(t.task_id for t in out))[: lim.max_tasks]
        keep = set(first)
        out = [t for t in out if t.task_id in keep]
    if lim.max_trials is not None:
        out = [t for t in out if t.trial < lim.max_trials]
    return out


def _check_limits(store: Store, name: str, cfg: TrajudgeConfig, source: str, stored: int) -> None:
    """``limits`` must describe the stored dataset: every figure of the report is about it.

    A dataset imported earlier without (or with other) limits holds trajectories the limits
    leave out; judging a subset and reporting on the whole would mix the two, so the run is
    refused with the way out.
    """
    lim = cfg.limits
    if lim.tasks is None and lim.max_tasks is None and lim.max_trials is None:
        return
    chosen = len(select_subset(list(store.iter_trajectories(name)), cfg))
    if chosen != stored:
        raise InputError(
            source,
            field="limits",
            reason=f"the limits select {chosen} of the {stored} trajectories stored in dataset "
            f"{name!r}, and the report covers a whole dataset: give the subset a dataset.name "
            "of its own, or remove limits",
        )
