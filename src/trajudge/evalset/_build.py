"""Turning a stored trajectory into an eval case: label, expectations, tags, stratum, split."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from trajudge.core import InputError, now_iso
from trajudge.evalset._boundary import detect_boundary_tags
from trajudge.evalset._case import (
    BOUNDARY_KINDS,
    STRATA,
    VERDICTS,
    CaseLabel,
    CaseSource,
    EvalCase,
)
from trajudge.evalset._defaults import DEV_SHARE
from trajudge.evalset._sampling import assign_strata
from trajudge.evalset._split import split_of
from trajudge.store import Store
from trajudge.trajectories import TaskSpec, Trajectory


def case_id(dataset: str, trajectory_id: str) -> str:
    """The id of the case made from a trajectory: ``"<dataset>/<trajectory id>"``."""
    return f"{dataset}/{trajectory_id}"


def default_label(trajectory: Trajectory, gates_passed: bool | None) -> CaseLabel | None:
    """The verdict the evidence gives, or None when there is none.

    ``fail`` when the environment outcome is False or the stored rule gates failed; ``pass``
    when neither failed and at least one of them passed; None when both are unknown.

    >>> default_label(Trajectory(id="1", task_id="t", outcome=False), None).verdict
    'fail'
    """
    fails = []
    if trajectory.outcome is False:
        fails.append("environment outcome: failed")
    if gates_passed is False:
        fails.append("rule gates failed")
    if fails:
        return CaseLabel(verdict="fail", reason="; ".join(fails))
    passes = []
    if trajectory.outcome is True:
        passes.append("environment outcome: passed")
    if gates_passed is True:
        passes.append("rule gates passed")
    if passes:
        return CaseLabel(verdict="pass", reason="; ".join(passes))
    return None


def infer_tools(trajectory: Trajectory, spec: TaskSpec, passing: Sequence[Trajectory]) -> TaskSpec:
    """``spec`` with required and forbidden tools inferred (only ever on request).

    * required: the tools named in ``spec.reference``, plus the tools every passing trial of
      the same task called successfully (``ok``: the required-tools check counts only those).
    * forbidden: tools this trajectory called that no passing trial called (only when there
      is a passing trial), never one that is required.

    Both are added to what the spec already lists.
    """
    required = set(spec.required_tools)
    required.update(c.tool for c in spec.reference or [])
    forbidden = set(spec.forbidden_tools)
    if passing:
        required.update(set.intersection(*({s.tool for s in t.steps if s.ok} for t in passing)))
        forbidden.update(set(trajectory.tools).difference(*(set(t.tools) for t in passing)))
    forbidden -= required
    return spec.model_copy(
        update={"required_tools": sorted(required), "forbidden_tools": sorted(forbidden)}
    )


def make_case(
    trajectory: Trajectory,
    *,
    dataset: str,
    spec: TaskSpec | None = None,
    gates_passed: bool | None = None,
    label: str | None = None,
    reason: str | None = None,
    stratum: str = "common",
    tags: Iterable[str] = (),
    core: bool = False,
    dev_share: float = DEV_SHARE,
    passing: Sequence[Trajectory] | None = None,
    added_at: str | None = None,
    file: str = "evalset",
) -> EvalCase:
    """Build the eval case for one trajectory.

    Parameters
    ----------
    spec:
        The task's stored spec; the case's ``expectations`` (an empty spec when None).
    gates_passed:
        The stored rule result, used for the default label.
    label, reason:
        The expected verdict and why; by default from :func:`default_label`.
    tags:
        Boundary kinds to add to those :func:`detect_boundary_tags` finds (e.g.
        ``ambiguous_request``, which is only ever tagged by hand).
    passing:
        Passing trials of the same task: when given (even empty), required and forbidden
        tools are inferred with :func:`infer_tools`.

    Raises
    ------
    InputError
        On an unknown label, stratum or tag, or when no label is given and the trajectory has
        neither an outcome nor a rule result.
    """
    _check_choice(file, "label", label, VERDICTS)
    _check_choice(file, "stratum", stratum, STRATA)
    extra = list(tags)
    for tag in extra:
        _check_choice(file, "tags", tag, BOUNDARY_KINDS)
    auto = default_label(trajectory, gates_passed)
    if label is None:
        if auto is None:
            raise InputError(
                file,
                field="label",
                reason=f"trajectory {trajectory.id!r} has no outcome and no rule result: "
                "give the expected verdict with --label pass|fail",
            )
        case_label = CaseLabel(verdict=auto.verdict, reason=reason or auto.reason)
    else:
        case_label = CaseLabel.model_validate(
            {"verdict": label, "reason": reason or "labelled by hand"}
        )
    expectations = spec if spec is not None else TaskSpec(task_id=trajectory.task_id)
    if passing is not None:
        expectations = infer_tools(trajectory, expectations, passing)
    found = set(detect_boundary_tags(trajectory)) | set(extra)
    return EvalCase.model_validate(
        {
            "id": case_id(dataset, trajectory.id),
            "task_id": trajectory.task_id,
            "input": trajectory.input,
            "trajectory": trajectory,
            "expectations": expectations,
            "label": case_label,
            "intent": trajectory.intent,
            "stratum": stratum,
            "tags": [k for k in BOUNDARY_KINDS if k in found],
            "split": split_of(trajectory.task_id, dev_share),
            "core": core,
            "source": CaseSource(dataset=dataset, trajectory_id=trajectory.id),
            "added_at": added_at or now_iso(),
        }
    )


def _check_choice(file: str, field: str, value: str | None, choices: Sequence[str]) -> None:
    if value is not None and value not in choices:
        raise InputError(
            file,
            field=field,
            reason=f"unknown value {value!r} (expected one of: {', '.join(choices)})",
        )


@dataclass
class DatasetView:
    """What case building needs from a stored dataset, read once."""

    dataset: str
    trajectories: list[Trajectory]
    specs: dict[str, TaskSpec]
    gates: dict[str, bool]
    frame: pd.DataFrame  # trajectory_id, task_id, intent, success, stratum

    def passing(self, task_id: str) -> list[Trajectory]:
        """Trajectories of the task whose default label is ``pass``."""
        out = []
        for t in self.trajectories:
            if t.task_id == task_id:
                lab = default_label(t, self.gates.get(t.id))
                if lab is not None and lab.verdict == "pass":
                    out.append(t)
        return out

    def stratum(self, trajectory_id: str) -> str:
        row = self.frame.loc[self.frame["trajectory_id"] == trajectory_id, "stratum"]
        return str(row.iloc[0])


def load_dataset(store: Store, dataset: str, **strata_options: Any) -> DatasetView:
    """Read a dataset's trajectories, specs and rule results, and assign strata.

    A trajectory's success for the strata is its default label (outcome or rule gates).
    """
    store.require_dataset(dataset)
    trajectories = store.trajectories(dataset)
    results: Mapping[str, Mapping[str, Any]] = store.rule_results(dataset)
    gates = {tid: bool(r["gates_passed"]) for tid, r in results.items()}
    rows = []
    for t in trajectories:
        lab = default_label(t, gates.get(t.id))
        rows.append(
            {
                "trajectory_id": t.id,
                "task_id": t.task_id,
                "intent": t.intent,
                "success": None if lab is None else lab.verdict == "pass",
            }
        )
    frame = pd.DataFrame(rows, columns=["trajectory_id", "task_id", "intent", "success"])
    return DatasetView(
        dataset=dataset,
        trajectories=trajectories,
        specs=store.task_specs(dataset),
        gates=gates,
        frame=assign_strata(frame, **strata_options),
    )
