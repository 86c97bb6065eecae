"""Verdict sources: one table of per-trajectory success for each way of saying "pass".

The report computes pass@k and pass^k side by side for the environment outcome, the rule
gates, each judge and the human labels. This module turns what the store holds into the
plain frame that :func:`trajudge.calibration.reliability` takes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from trajudge.core import InputError
from trajudge.evalset import Fingerprint, detect_boundary_tags, fingerprint
from trajudge.judges import render_trajectory
from trajudge.report.inputs._store_rows import (
    _applicable,
    _judgments,
    _labels,
    _none,
    _pair_labels,
    system_of,
)
from trajudge.store import Store
from trajudge.trajectories import Trajectory

USAGE_COLUMNS = ["steps", "tokens", "cost_usd", "latency_s"]


_COLUMNS = ["trajectory_id", "task_id", "trial", "intent", "outcome", *USAGE_COLUMNS, "turns"]


def _row(t: Trajectory) -> dict[str, Any]:
    return {
        "trajectory_id": t.id,
        "task_id": t.task_id,
        "trial": t.trial,
        "intent": t.intent,
        "outcome": t.outcome,
        "steps": len(t.steps),
        "tokens": t.usage.total_tokens,
        "cost_usd": t.usage.cost_usd,
        "latency_s": t.usage.latency_s,
        "turns": t.usage.turns,
    }


def trajectory_frame(trajectories: Iterable[Trajectory]) -> pd.DataFrame:
    """One row per trajectory: ids, outcome, intent and usage figures.

    ``trajectories`` is read once, one at a time (e.g. ``Store.iter_trajectories``): only the
    rows are kept, never the trajectories.
    """
    return pd.DataFrame([_row(t) for t in trajectories], columns=_COLUMNS)


def verdict_frame(store: Store, dataset: str, source: str = "outcome") -> pd.DataFrame:
    """Per-trajectory success for a verdict source.

    ``source`` is ``outcome`` (the environment's ground truth) or ``rules`` (every gate
    check passed; needs ``trajudge check`` first). The returned frame has the columns of
    :func:`trajectory_frame` plus ``success`` (True / False / None when unknown).
    """
    store.require_dataset(dataset)
    frame = trajectory_frame(store.iter_trajectories(dataset))
    if source == "outcome":
        frame["success"] = frame["outcome"].astype(object)
    elif source == "rules":
        gates = store.gate_results(dataset)
        if not gates:
            raise InputError(
                store.url,
                field="source",
                reason=f"no rule results for {dataset!r}: run trajudge check",
            )
        frame["success"] = [gates.get(i) for i in frame["trajectory_id"]]
    else:
        raise InputError(
            store.url, field="source", reason=f"unknown source {source!r} (outcome or rules)"
        )
    return frame


def render_length(trajectory: Trajectory) -> int:
    """Characters of the trajectory as rendered for a judge (:func:`render_trajectory`).

    This is the ``length`` the verbosity probe uses: what the judge actually saw, outputs
    capped as in the judge prompt, not the raw step count.
    """
    return len(render_trajectory(trajectory, label="A"))


@dataclass(frozen=True)
class StoreInputs:
    """What :func:`store_inputs` read from the store, in the shape ``analyze`` takes.

    ``judgments`` has one row per pointwise or reference judge call (``item`` is the
    trajectory id; errored rows kept, with their error); ``labels`` the chosen label source
    with adjudicated items resolved to the adjudication; ``raw_labels`` the labels before
    adjudication (for the human ceiling); ``trajectories`` one row per trajectory
    (:func:`trajectory_frame`) with ``gates_passed`` (None where no rule result is stored);
    ``notes`` says what was set aside and why (nothing is dropped without a note).
    ``pair_judgments`` / ``pair_labels`` hold the pairwise judges' calls and the pair labels
    (``item`` a pair of trajectories, ``_store_rows.pair_item``; verdicts A/B/tie in the original
    numbering), ``category_judgments`` / ``category_labels`` those of nominal rubrics;
    ``aligned`` the aligned judges whose calls are among ``judgments`` (see
    :mod:`trajudge.report.inputs._aligned_rows`).
    """

    judgments: pd.DataFrame
    labels: pd.DataFrame
    raw_labels: pd.DataFrame
    trajectories: pd.DataFrame
    has_rules: bool
    fingerprint: Fingerprint
    notes: list[str] = field(default_factory=list)
    pair_judgments: pd.DataFrame = field(default_factory=pd.DataFrame)
    pair_labels: pd.DataFrame = field(default_factory=pd.DataFrame)
    category_judgments: pd.DataFrame = field(default_factory=pd.DataFrame)
    category_labels: pd.DataFrame = field(default_factory=pd.DataFrame)
    aligned: list[dict[str, Any]] = field(default_factory=list)  # aligned judges applied


def store_inputs(
    store: Store,
    dataset: str,
    *,
    label_source: str = "human",
    aligned: Sequence[dict[str, Any]] | None = (),
    gates: Collection[str] = ("gate",),
) -> StoreInputs:
    """Read judgments, labels, trajectories and gate results of a dataset for the report.

    ``gates``: the rule severities that gate (:meth:`Store.gate_results`).

    ``aligned``: aligned-judge records to apply (None: every aligned judge in the store); the
    ones judged under their name here, or fitted here on a judge that is here, are.
    """
    store.require_dataset(dataset)
    rows: list[dict[str, Any]] = []

    def each() -> Iterator[Trajectory]:
        # one pass over the store: each trajectory becomes a row, then feeds the fingerprint,
        # so memory holds the rows and one trajectory, never the dataset
        for t in store.iter_trajectories(dataset):
            row = _row(t)
            row["system"] = system_of(t)
            row["length"] = render_length(t)
            row["agent_model"] = _none(t.metadata.get("model"))
            row["tags"] = detect_boundary_tags(t)
            # what the per-slice agreement reads: the tool set and the scalar metadata
            row["tools"] = "+".join(sorted({s.tool for s in t.steps})) or "no tool"
            row["meta"] = {
                k: v for k, v in t.metadata.items() if isinstance(v, str | int | float | bool)
            }
            rows.append(row)
            yield t

    fp = fingerprint(each())
    extra = ["system", "length", "agent_model", "tags", "tools", "meta"]
    trajs = pd.DataFrame(rows, columns=[*_COLUMNS, *extra])
    results = store.gate_results(dataset, gates)
    trajs["gates_passed"] = [results.get(i) for i in trajs["trajectory_id"]]
    notes: list[str] = []
    records = store.aligned_judges() if aligned is None else list(aligned)
    raw = store.judgments_frame(dataset)
    applied = _applicable(raw, records, dataset) if records else []
    judgments, categorical = _judgments(store, dataset, trajs, notes, raw, applied)
    known = set(trajs["trajectory_id"])
    labels, raw_labels, cat_labels = _labels(store, dataset, label_source, known, notes)
    pair_labels = _pair_labels(store, dataset, label_source, categorical, notes)
    if results:
        missing = int(trajs["gates_passed"].isna().sum())
        if missing:
            notes.append(
                f"{missing} trajectories have no rule result (run trajudge check): no gate "
                "is applied to them"
            )
    pairwise = categorical["mode"] == "pairwise"
    return StoreInputs(
        judgments,
        labels,
        raw_labels,
        trajs,
        bool(results),
        fp,
        notes,
        pair_judgments=categorical[pairwise].reset_index(drop=True),
        pair_labels=pair_labels,
        category_judgments=categorical[~pairwise].reset_index(drop=True),
        category_labels=cat_labels,
        aligned=applied,
    )
