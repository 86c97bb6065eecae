"""``trajudge export DATASET --to mlflow+http://HOST:5000``: judgments and human labels as MLflow
assessments, each judge's calibration as a run (see
:mod:`trajudge.backends._mlflow_assess` for what is written).

Idempotent: every trace's assessments are read before anything is written to it (MLflow adds a
new assessment on every write), and only what is missing or changed is written; an export
interrupted midway leaves whole assessments behind, and the next one writes the rest. Every
trace is checked first: a dataset whose traces the server does not have is refused whole, before
anything is written. A judge's calibration (κ, TPR and TNR with their intervals, the items and
labels behind them) is a run in the experiment of the judge's first trace, found again by its
``trajudge.key`` tag; new figures are logged as the run's next step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trajudge.backends._mlflow import MlflowClient
from trajudge.backends._mlflow_assess import (
    Planned,
    calibration_metrics,
    calibration_tags,
    metrics_digest,
    plan,
)
from trajudge.backends._mlflow_pull import mlflow_trace_id
from trajudge.backends._urls import BackendURL
from trajudge.core import InputError, counted
from trajudge.store import Store


@dataclass
class ExportSummary:
    """What one export did, per kind: written, replaced (changed since), already there."""

    written: dict[str, int] = field(default_factory=dict)
    replaced: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, what: dict[str, int], kind: str) -> None:
        what[kind] = what.get(kind, 0) + 1

    def lines(self) -> list[str]:
        """What was written, per kind, then what was left out and why."""

        def kinds(what: dict[str, int]) -> str:
            parts = [counted(n, k) for k, n in sorted(what.items())]
            return ", ".join(parts) if parts else "nothing"

        head = (
            f"MLflow: written {kinds(self.written)}; replaced {kinds(self.replaced)}; "
            f"already there {kinds(self.kept)}"
        )
        left = [f"MLflow: not exported: {n} {why}" for why, n in sorted(self.left_out.items())]
        return [head, *left, *(f"MLflow: {note}" for note in self.notes)]


def _traces(store: Store, dataset: str) -> dict[str, str]:
    """Trajectory id -> the MLflow id of the (first) trace it was imported from."""
    out: dict[str, str] = {}
    for t in store.iter_trajectories(dataset):
        ids = t.metadata.get("trace_ids")
        if isinstance(ids, list) and ids and isinstance(ids[0], str):
            out[t.id] = mlflow_trace_id(ids[0])
    return out


def export_mlflow(
    store: Store,
    url: BackendURL,
    dataset: str,
    *,
    calibration: bool = True,
    n_boot: int = 2000,
    progress: Callable[[ExportSummary], None] | None = None,
) -> ExportSummary:
    """Write ``dataset``'s judgments, human labels and calibration to the server of ``url``."""
    if not store.has_dataset(dataset):
        raise InputError(dataset, reason="no such dataset in the store")
    summary = ExportSummary()
    planned, summary.left_out = plan(
        dataset,
        store.judgments_frame(dataset),
        store.labels_frame(dataset, source="human"),
        _traces(store, dataset),
    )
    by_trace: dict[str, list[Planned]] = {}
    for p in planned:
        by_trace.setdefault(p.trace_id, []).append(p)
    with MlflowClient(url) as client:
        infos = {tid: client.trace_info_or_none(tid) for tid in by_trace}
        missing = sorted(t for t, info in infos.items() if info is None)
        if missing:
            raise InputError(
                url.shown,
                reason=f"{len(missing)} of the {len(infos)} traces of dataset {dataset!r} are "
                f"not on this server (first: {missing[0]}): nothing written",
            )
        for tid, items in by_trace.items():
            _write_trace(client, infos[tid] or {}, items, summary, progress)
        if calibration:
            _calibration(store, client, dataset, infos, summary, n_boot)
    return summary


def _write_trace(
    client: MlflowClient,
    info: dict[str, Any],
    items: list[Planned],
    summary: ExportSummary,
    progress: Callable[[ExportSummary], None] | None,
) -> None:
    have: dict[str, tuple[str, str | None]] = {}  # key -> (assessment id, its sha256)
    for a in info.get("assessments") or []:
        meta = a.get("metadata") or {}
        if a.get("valid", True) is not False and "trajudge.key" in meta:
            have[meta["trajudge.key"]] = (str(a["assessment_id"]), meta.get("trajudge.sha256"))
    for p in items:
        kind = str(p.body["metadata"]["trajudge.kind"])
        old = have.get(p.key)
        if old is not None and old[1] == p.body["metadata"]["trajudge.sha256"]:
            summary.add(summary.kept, kind)
            continue
        body = dict(p.body)
        if old is not None:
            body["overrides"] = old[0]  # MLflow marks the old one invalid
        client.create_assessment(body)
        summary.add(summary.replaced if old is not None else summary.written, kind)
        if progress is not None:
            progress(summary)


def _calibration(
    store: Store,
    client: MlflowClient,
    dataset: str,
    infos: dict[str, dict[str, Any] | None],
    summary: ExportSummary,
    n_boot: int,
) -> None:
    # imported on use: the report (pandas, the statistics) only when calibration is exported
    from trajudge.report import build_report

    labels = store.labels_frame(dataset, source="human")
    judgments = store.judgments_frame(dataset)
    if labels.empty or judgments.empty:
        summary.notes.append("calibration not exported: the dataset has no human labels")
        return
    try:
        report = build_report(store, dataset, n_boot=n_boot, seed=0)
    except InputError as exc:
        summary.notes.append(f"calibration not exported: {exc.reason}")
        return
    traces = _traces(store, dataset)
    for row in report.judges:
        mine = judgments[(judgments["judge"] == row.judge)]
        if row.rubric_id is not None:
            mine = mine[mine["rubric_id"] == row.rubric_id]
        versions = sorted({str(v) for v in mine["rubric_version"]})
        first = next((traces[t] for t in mine["trajectory_id"] if t in traces), None)
        location = (infos.get(first) or {}).get("trace_location") or {} if first else {}
        experiment = (location.get("mlflow_experiment") or {}).get("experiment_id")
        if experiment is None:
            summary.notes.append(f"calibration of {row.judge} not exported: no traced trajectory")
            continue
        rubric_labels = (
            labels if row.rubric_id is None else labels[labels["rubric_id"] == row.rubric_id]
        )
        n_labels = int((rubric_labels["value"].notna() | rubric_labels["category"].notna()).sum())
        key, tags = calibration_tags(dataset, row, versions)
        metrics = calibration_metrics(row, n_labels)
        digest = metrics_digest(tags, metrics)
        run = client.find_run(str(experiment), key)
        run_tags = {t["key"]: t["value"] for t in ((run or {}).get("data") or {}).get("tags") or []}
        if run is not None and run_tags.get("trajudge.sha256") == digest:
            summary.add(summary.kept, "calibration")
            continue
        if run is None:
            run_id = client.create_run(str(experiment), f"trajudge calibration {row.name}", tags)
        else:
            run_id = str(run["info"]["run_id"])
        step = int(run_tags.get("trajudge.revision", "-1")) + 1
        client.log_batch(
            run_id, metrics, step, {"trajudge.sha256": digest, "trajudge.revision": str(step)}
        )
        summary.add(summary.replaced if "trajudge.sha256" in run_tags else summary.written,
                    "calibration")  # fmt: skip
