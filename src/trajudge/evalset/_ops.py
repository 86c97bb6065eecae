"""Operations on an eval-set file: add a case, rotate, split, summarise.

Each reads the whole file (validated), computes the new list of cases, and writes it back
atomically; on any error nothing is written.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajudge.core import InputError, now_iso
from trajudge.evalset._boundary import CoverageReport, SuccessSpec, coverage
from trajudge.evalset._build import case_id, load_dataset, make_case
from trajudge.evalset._case import (
    BOUNDARY_KINDS,
    SPLITS,
    STRATA,
    VERDICTS,
    EvalCase,
    read_evalset,
    write_evalset,
)
from trajudge.evalset._defaults import DEV_SHARE, SALT
from trajudge.evalset._fingerprint import Fingerprint, fingerprint
from trajudge.evalset._sampling import Sample, largest_remainder, stratified_sample
from trajudge.evalset._split import assign_splits
from trajudge.store import Store


def _existing(path: str | os.PathLike[str]) -> list[EvalCase]:
    return read_evalset(path) if Path(path).exists() else []


def add_case(
    store: Store,
    dataset: str,
    trajectory_id: str,
    evalset: str | os.PathLike[str],
    *,
    label: str | None = None,
    reason: str | None = None,
    stratum: str | None = None,
    tags: Iterable[str] = (),
    core: bool = False,
    infer_tools: bool = False,
    dev_share: float = DEV_SHARE,
) -> EvalCase:
    """Turn one stored trajectory into a case and append it to the eval set (created if new).

    The stratum, when not given, is the trajectory's stratum in its dataset
    (:func:`assign_strata`); the split is :func:`split_of` its task id.

    Raises
    ------
    InputError
        When the dataset or trajectory is unknown, the trajectory is already a case of the
        set, a value is invalid, or no label can be derived.
    """
    file = str(evalset)
    cases = _existing(evalset)
    new_id = case_id(dataset, trajectory_id)
    for c in cases:
        if (c.source.dataset, c.source.trajectory_id) == (dataset, trajectory_id) or c.id == new_id:
            raise InputError(
                file,
                field="source",
                reason=f"trajectory {trajectory_id!r} of dataset {dataset!r} "
                f"is already case {c.id!r}; "
                "not added twice",
            )
    view = load_dataset(store, dataset)
    found = [t for t in view.trajectories if t.id == trajectory_id]
    if not found:
        raise InputError(
            store.url,
            field="trajectory_id",
            reason=f"no trajectory {trajectory_id!r} in {dataset!r}",
        )
    traj = found[0]
    case = make_case(
        traj,
        dataset=dataset,
        spec=view.specs.get(traj.task_id),
        gates_passed=view.gates.get(traj.id),
        label=label,
        reason=reason,
        stratum=stratum or view.stratum(traj.id),
        tags=tags,
        core=core,
        dev_share=dev_share,
        passing=view.passing(traj.task_id) if infer_tools else None,
        file=file,
    )
    write_evalset(evalset, [*cases, case])
    return case


@dataclass
class Rotation:
    """What :func:`rotate_cases` did.

    ``kept_short`` maps a stratum to the number of cases that stayed because the pool had no
    replacement for them in that stratum.
    """

    cases: list[EvalCase]
    removed: list[EvalCase]
    added: list[EvalCase]
    kept_short: dict[str, int] = field(default_factory=dict)
    not_eligible: int = 0

    @property
    def warnings(self) -> list[str]:
        lines = [
            f"{s}: {n} case(s) kept, no new trajectory in that stratum to replace them"
            for s, n in self.kept_short.items()
        ]
        if self.not_eligible:
            lines.append(
                f"{self.not_eligible} trajectories had no outcome or rule result and "
                "were not eligible"
            )
        return lines


def rotate_cases(
    cases: Sequence[EvalCase], candidates: Sequence[EvalCase], *, share: float, seed: int = 0
) -> Rotation:
    """Replace ``share`` of the non-core cases with new ones, stratum for stratum.

    ``n_out = round(share * non-core cases)`` (halves round up) is split over the strata in
    proportion to the non-core cases' strata (largest remainder); in each stratum that many
    cases go out and as many candidates of that stratum come in, both drawn with
    :func:`stratified_sample` and ``seed``. Where a stratum has too few candidates, fewer
    cases go out (listed in ``kept_short``), so the strata counts never change. Candidates
    whose task already has a case are ignored, and one trial per task is kept (the one with
    the smallest ``sha256(f"{seed}:{case id}")``), so a rotation brings in new tasks rather
    than another trial of a task the set already holds. New cases are appended at the end.
    """
    if not 0 <= share <= 1:
        raise ValueError(f"share must be in [0, 1], got {share}")
    in_set = {(c.source.dataset, c.task_id) for c in cases}
    pool = _one_per_task(
        [c for c in candidates if (c.source.dataset, c.task_id) not in in_set], seed
    )
    non_core = [c for c in cases if not c.core]
    n_out = math.floor(share * len(non_core) + 0.5)
    if n_out == 0:
        return Rotation(cases=list(cases), removed=[], added=[])
    strata: Counter[str] = Counter(c.stratum for c in non_core)
    targets = largest_remainder(n_out, {s: float(strata.get(s, 0)) for s in STRATA})
    have: Counter[str] = Counter(c.stratum for c in pool)
    final = {s: min(t, have.get(s, 0)) for s, t in targets.items()}
    short = {s: targets[s] - final[s] for s in STRATA if targets[s] > final[s]}
    if not sum(final.values()):
        return Rotation(cases=list(cases), removed=[], added=[], kept_short=short)
    out = stratified_sample(non_core, sum(final.values()), shares=final, seed=seed)
    came = stratified_sample(pool, sum(final.values()), shares=final, seed=seed)
    gone = set(out.ids)
    kept = [c for c in cases if c.id not in gone]
    return Rotation(
        cases=[*kept, *came.cases], removed=out.cases, added=came.cases, kept_short=short
    )


def _one_per_task(pool: Sequence[EvalCase], seed: int) -> list[EvalCase]:
    best: dict[tuple[str, str], tuple[str, EvalCase]] = {}
    for c in pool:
        key = (c.source.dataset, c.task_id)
        rank = hashlib.sha256(f"{seed}:{c.id}".encode()).hexdigest()
        if key not in best or rank < best[key][0]:
            best[key] = (rank, c)
    chosen = {id(v[1]) for v in best.values()}
    return [c for c in pool if id(c) in chosen]


def _candidates(
    store: Store,
    dataset: str,
    cases: Sequence[EvalCase],
    evalset: str | os.PathLike[str],
    dev_share: float,
) -> tuple[list[EvalCase], int]:
    """Cases for every trajectory of ``dataset`` whose task is not yet in the set and that has
    an outcome or a rule result; and how many trajectories had neither (not eligible)."""
    view = load_dataset(store, dataset)
    in_set = {(c.source.dataset, c.task_id) for c in cases}
    stamp = now_iso()
    candidates: list[EvalCase] = []
    not_eligible = 0
    for t in view.trajectories:
        if (dataset, t.task_id) in in_set:
            continue
        gates = view.gates.get(t.id)
        if t.outcome is None and gates is None:
            not_eligible += 1
            continue
        candidates.append(
            make_case(
                t,
                dataset=dataset,
                spec=view.specs.get(t.task_id),
                gates_passed=gates,
                stratum=view.stratum(t.id),
                dev_share=dev_share,
                added_at=stamp,
                file=str(evalset),
            )
        )
    return candidates, not_eligible


def sample_evalset(
    store: Store,
    dataset: str,
    evalset: str | os.PathLike[str],
    n: int,
    *,
    by: str = "stratum",
    shares: Mapping[str, float] | None = None,
    seed: int = 0,
    dev_share: float = DEV_SHARE,
) -> Sample:
    """Add ``n`` new cases drawn from ``dataset`` by stratum (60 / 30 / 10 by default) or
    intent (its proportions), and write the set (created if new).

    Candidates are as for :func:`rotate_evalset`. A group with too few candidates gives what
    it has; the shortfall is in the result's ``shortfall`` and ``warnings``, never filled from
    another group.
    """
    if n < 1:
        raise InputError(str(evalset), field="n", reason=f"must be at least 1, got {n}")
    path = Path(evalset)
    cases = read_evalset(path) if path.exists() else []
    candidates, _ = _candidates(store, dataset, cases, evalset, dev_share)
    if not candidates:
        raise InputError(
            str(evalset), field="dataset", reason=f"no new eligible runs in {dataset!r}"
        )
    try:
        sample = stratified_sample(candidates, n, by=by, shares=shares, seed=seed)
    except ValueError as exc:
        raise InputError(str(evalset), field="by", reason=str(exc)) from None
    write_evalset(path, [*cases, *sample.cases])
    return sample


def rotate_evalset(
    store: Store,
    dataset: str,
    evalset: str | os.PathLike[str],
    *,
    share: float = 0.2,
    seed: int = 0,
    dev_share: float = DEV_SHARE,
) -> Rotation:
    """Rotate an eval set with new cases from a stored dataset, and write it back.

    Every trajectory of ``dataset`` whose task is not yet in the set, with an outcome or rule
    result, is a candidate, with its stratum from :func:`assign_strata` over the dataset, its
    default label and detected tags. See :func:`rotate_cases` for the draw.
    """
    if not 0 <= share <= 1:
        raise InputError(str(evalset), field="share", reason=f"must be in [0, 1], got {share}")
    cases = read_evalset(evalset)
    candidates, not_eligible = _candidates(store, dataset, cases, evalset, dev_share)
    result = rotate_cases(cases, candidates, share=share, seed=seed)
    result.not_eligible = not_eligible
    if result.removed or result.added:
        write_evalset(evalset, result.cases)
    return result


def split_evalset(
    evalset: str | os.PathLike[str], *, dev_share: float = DEV_SHARE, salt: str = SALT
) -> list[EvalCase]:
    """Write each case's split (:func:`split_of` its task id) into the eval set."""
    if not 0 <= dev_share <= 1:
        raise InputError(
            str(evalset), field="dev_share", reason=f"must be in [0, 1], got {dev_share}"
        )
    cases = assign_splits(read_evalset(evalset), dev_share=dev_share, salt=salt)
    write_evalset(evalset, cases)
    return cases


@dataclass
class EvalSetSummary:
    """Counts by stratum, split, label and tag, the core size, and boundary coverage."""

    n_cases: int
    n_core: int
    n_tasks: int
    by_stratum: dict[str, int]
    by_split: dict[str, int]
    by_label: dict[str, int]
    by_tag: dict[str, int]
    coverage: CoverageReport


def summarize(
    cases: Sequence[EvalCase], *, success: SuccessSpec = "outcome", ks: Sequence[int] = (1, 2)
) -> EvalSetSummary:
    """Count an eval set's cases every way :command:`trajudge evalset show` prints them."""

    def count(values: Iterable[str], keys: Sequence[str]) -> dict[str, int]:
        c = Counter(values)
        return {k: c.get(k, 0) for k in keys}

    return EvalSetSummary(
        n_cases=len(cases),
        n_core=sum(c.core for c in cases),
        n_tasks=len({c.task_id for c in cases}),
        by_stratum=count((c.stratum for c in cases), STRATA),
        by_split=count((c.split for c in cases), SPLITS),
        by_label=count((c.label.verdict for c in cases), VERDICTS),
        by_tag=count((t for c in cases for t in c.tags), BOUNDARY_KINDS),
        coverage=coverage(cases, success=success, ks=ks),
    )


def fingerprint_dataset(
    store: Store, dataset: str, *, config: Mapping[str, Any] | None = None
) -> Fingerprint:
    """:func:`fingerprint` of every trajectory of a stored dataset."""
    store.require_dataset(dataset)
    return fingerprint(store.iter_trajectories(dataset), config=config)
