"""Checking a stored dataset: resolve specs, run every check, save each report."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from trajudge.rules._engine import iter_check_dataset
from trajudge.rules._models import RuleReport
from trajudge.rules._specs import SpecSet, load_specs, resolve_specs
from trajudge.rules._summary import CheckSummary, summarize_reports

if TYPE_CHECKING:  # a worker process of check_parquet imports the rules without the store
    from trajudge.store import Store

SAVE_BATCH = 500


@dataclass
class DatasetCheck:
    """What :func:`check_stored_dataset` did: the reports (empty unless asked for) and their
    summary."""

    dataset: str
    spec_source: str
    reports: list[RuleReport]
    summary: CheckSummary


def check_stored_dataset(
    store: Store,
    dataset: str,
    spec_path: str | Path | None = None,
    *,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
    keep_reports: bool = True,
) -> DatasetCheck:
    """Run the rule checks over every trajectory of a stored dataset and save the reports.

    Specs: the ones stored with the dataset, with the file at ``spec_path`` (if any) merged on
    top as :func:`resolve_specs` describes. The spec file is validated before anything runs,
    so a bad file writes nothing. Reports are saved in batches as they are computed
    (``Store.save_rule_results``; a trajectory's earlier result is replaced).

    Trajectories are read from the store and checked one at a time and the summary is
    counted as the reports come, so memory does not grow with the dataset; only
    ``keep_reports`` (the default, for callers that want every report) holds them all in
    :attr:`DatasetCheck.reports`.
    """
    store.require_dataset(dataset)
    spec_set: SpecSet | None = load_specs(spec_path) if spec_path is not None else None
    stored = store.task_specs(dataset)
    tasks, defaults = resolve_specs(stored, spec_set)
    total = store.count_trajectories(dataset)
    if on_start is not None:
        on_start(total)
    reports: list[RuleReport] = []
    pending: list[RuleReport] = []

    def flush() -> None:
        store.save_rule_results(
            dataset,
            (
                {
                    "trajectory_id": r.trajectory_id,
                    "spec_sha256": r.spec_sha256,
                    "gates_passed": r.gates_passed,
                    "score": r.score,
                    "data": r.to_dict(),
                }
                for r in pending
            ),
        )
        pending.clear()

    def checked() -> Iterator[RuleReport]:
        for rep in iter_check_dataset(store.iter_trajectories(dataset), tasks, defaults):
            if keep_reports:
                reports.append(rep)
            pending.append(rep)
            if len(pending) >= SAVE_BATCH:
                flush()
            if on_progress is not None:
                on_progress(1)
            yield rep
        if pending:
            flush()

    summary = summarize_reports(checked())
    source = "stored specs" if spec_set is None else f"stored specs + {spec_set.source}"
    if not stored and spec_set is not None:
        source = str(spec_set.source)
    return DatasetCheck(dataset, source, reports, summary)
