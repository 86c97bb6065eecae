"""What ``trajudge export`` writes back: each judgment and each human label of a dataset as one
evaluation of the span it judged, with its provenance and its judge's calibration.

An :class:`Evaluation` carries the OpenTelemetry GenAI names (``gen_ai.evaluation.name`` = the
rubric, ``gen_ai.evaluation.score.value`` / ``.score.label`` / ``.explanation``) and
``trajudge.*`` provenance: the judge, its model and configuration hash, the rubric id and
version, the call's order and sample, the annotator of a label, and the judge's calibration
against the human labels (κ with its interval, TPR, TNR, the number of labelled items), from
the report trajudge would print. No trajectory text is in it (no input, message or step), and
every explanation passes through the store's redaction (registered secrets, key-like tokens).

The span is the root span of the trajectory's first trace (``root_span_ids`` of a trajectory
the OTel reader built, from a file or a backend); a trajectory that has none is reported, not
exported. Errored judgments, skipped labels and pairwise judgments (two trajectories, one span)
are counted, not exported.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

from trajudge.backends._phoenix_otlp import nanos
from trajudge.core import InputError
from trajudge.store import Store, redact

EVENT_NAME = "gen_ai.evaluation.result"
Value = str | int | float | bool


@dataclass(frozen=True)
class Evaluation:
    """One judgment or label as an evaluation of one span."""

    item: str  # "judgment:<id>" / "label:<id>": what a target already holds is keyed by it
    kind: str  # "judge" | "human"
    trajectory_id: str
    trace_id: str
    span_id: str
    name: str  # the rubric id
    score: float | None
    label: str | None
    explanation: str | None
    time_ns: int
    provenance: dict[str, Value]

    def attributes(self) -> dict[str, Value]:
        """The event's attributes: the GenAI semantic conventions' names, then provenance."""
        out: dict[str, Value] = {"gen_ai.evaluation.name": self.name}
        if self.score is not None:
            out["gen_ai.evaluation.score.value"] = self.score
        if self.label is not None:
            out["gen_ai.evaluation.score.label"] = self.label
        if self.explanation:
            out["gen_ai.evaluation.explanation"] = self.explanation
        return {**out, **self.provenance, "trajudge.export.item": self.item}

    def sha256(self) -> str:
        """The hash of what is written (a changed label is written again)."""
        body = json.dumps(
            [self.trace_id, self.span_id, self.attributes()], sort_keys=True, default=str
        )
        return hashlib.sha256(body.encode()).hexdigest()


@dataclass
class Collected:
    """The evaluations of a dataset, and what was left out (counts, first example)."""

    evaluations: list[Evaluation] = field(default_factory=list)
    not_otel: list[str] = field(default_factory=list)  # trajectory ids without span ids
    errored: int = 0
    pairwise: int = 0
    skipped_labels: int = 0

    def notes(self) -> list[str]:
        """One line per kind of thing not exported."""
        out = []
        if self.not_otel:
            out.append(
                f"{len(self.not_otel)} judged or labelled trajectories were not imported from "
                f"OTel traces (no span to attach to; first: {self.not_otel[0]}): not exported"
            )
        for n, what in (
            (self.errored, "errored judgments"),
            (self.pairwise, "pairwise judgments (two trajectories, no one span)"),
            (self.skipped_labels, "skipped labels"),
        ):
            if n:
                out.append(f"{n} {what} not exported")
        return out


def _ns(iso: Any) -> int:
    """An ISO time in nanoseconds since the epoch, exactly (0 when it is not one)."""
    try:
        return nanos(str(iso))
    except ValueError:
        return 0


def _num(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


def _text(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return str(v)


def spans_of(store: Store, dataset: str) -> dict[str, tuple[str, str]]:
    """Trajectory id -> (trace id, root span id) for the trajectories read from OTel."""
    out: dict[str, tuple[str, str]] = {}
    for t in store.iter_trajectories(dataset):
        traces, roots = t.metadata.get("trace_ids"), t.metadata.get("root_span_ids")
        if isinstance(traces, list) and isinstance(roots, list) and traces and roots:
            out[t.id] = (str(traces[0]), str(roots[0]))
    return out


def calibrations(
    store: Store, dataset: str, n_boot: int = 2000
) -> dict[tuple[str, str], dict[str, Value]]:
    """(judge, rubric id) -> its calibration against the human labels, as the report has it
    (nothing for a dataset without labels to calibrate against)."""
    # imported on use: the report's statistics load pandas and scipy
    from trajudge.report import build_report

    try:
        report = build_report(store, dataset, n_boot=n_boot)
    except InputError:
        return {}
    out: dict[tuple[str, str], dict[str, Value]] = {}
    for row in report.judges:
        d = row.to_dict()
        cal: dict[str, Value] = {"trajudge.calibration.labels": int(row.calibration.n_items)}
        for key in ("kappa", "tpr", "tnr"):
            est = d.get(key) or {}
            for part, suffix in (("value", ""), ("low", ".low"), ("high", ".high")):
                v = est.get(part)
                if v is not None:
                    cal[f"trajudge.calibration.{key}{suffix}"] = float(v)
            if key == "kappa" and est.get("level") is not None:
                cal["trajudge.calibration.kappa.level"] = float(est["level"])
        out[(row.judge, str(row.rubric_id))] = cal
    return out


def collect(store: Store, dataset: str, *, n_boot: int = 2000) -> Collected:
    """Every exportable judgment and human label of ``dataset``."""
    store.require_dataset(dataset)
    spans = spans_of(store, dataset)
    cal = calibrations(store, dataset, n_boot)
    out = Collected()
    missing: dict[str, None] = {}
    for r in store.judgments_frame(dataset).to_dict("records"):
        if _text(r.get("other_id")) is not None:
            out.pairwise += 1
            continue
        if _text(r.get("error")) is not None:
            out.errored += 1
            continue
        tid = str(r["trajectory_id"])
        if tid not in spans:
            missing.setdefault(tid)
            continue
        prov: dict[str, Value] = {
            "trajudge.source": "judge",
            "trajudge.dataset": dataset,
            "trajudge.trajectory.id": tid,
            "trajudge.judge.name": str(r["judge"]),
            "trajudge.judge.model": str(r["model"]),
            "trajudge.judge.mode": str(r["mode"]),
            "trajudge.rubric.id": str(r["rubric_id"]),
            "trajudge.rubric.version": str(r["rubric_version"]),
            "trajudge.judgment.order": str(r["order"]),
            "trajudge.judgment.sample": int(r["sample"]),
        }
        if _text(r.get("config_sha256")):
            prov["trajudge.judge.config_sha256"] = str(r["config_sha256"])
        prov.update(cal.get((str(r["judge"]), str(r["rubric_id"])), {}))
        reasoning = _text(r.get("reasoning"))
        out.evaluations.append(
            Evaluation(
                item=f"judgment:{int(r['id'])}",
                kind="judge",
                trajectory_id=tid,
                trace_id=spans[tid][0],
                span_id=spans[tid][1],
                name=str(r["rubric_id"]),
                score=_num(r.get("score")),
                label=_text(r.get("verdict")),
                explanation=None if reasoning is None else redact(reasoning),
                time_ns=_ns(r["created_at"]),
                provenance=prov,
            )
        )
    for r in store.labels_frame(dataset, source="human").to_dict("records"):
        if bool(r.get("skipped")):
            out.skipped_labels += 1
            continue
        tid = str(r["trajectory_id"])
        if tid not in spans:
            missing.setdefault(tid)
            continue
        note = _text(r.get("note"))
        out.evaluations.append(
            Evaluation(
                item=f"label:{int(r['id'])}",
                kind="human",
                trajectory_id=tid,
                trace_id=spans[tid][0],
                span_id=spans[tid][1],
                name=str(r["rubric_id"]),
                score=_num(r.get("value")),
                label=_text(r.get("category")),
                explanation=None if note is None else redact(note),
                time_ns=_ns(r["updated_at"]),
                provenance={
                    "trajudge.source": "human",
                    "trajudge.dataset": dataset,
                    "trajudge.trajectory.id": tid,
                    "trajudge.rubric.id": str(r["rubric_id"]),
                    "trajudge.label.annotator": str(r["annotator"]),
                    "trajudge.label.unsure": bool(r.get("unsure")),
                    "trajudge.label.adjudication": bool(r.get("adjudication")),
                },
            )
        )
    out.not_otel = list(missing)
    return out
