"""What trajudge writes to MLflow: its judgments and human labels as assessments (feedback),
its judges' calibration as runs. Built from the store alone (no request here).

A judgment (one stored judge call without an error) becomes feedback with source type
``LLM_JUDGE`` (source id: the judge's name), its verdict (else its score) as the value and its
reasoning as the rationale; a human label becomes feedback with source type ``HUMAN`` (source
id: the annotator), its category (else its value) as the value and its note as the rationale.
A skipped label (no value) is not exported. Both go on the trace the trajectory was imported
from (the first of its ``trace_ids``; MLflow's id is ``tr-`` + the OpenTelemetry trace id).

Provenance is the assessment's metadata (strings): ``trajudge.dataset``,
``trajudge.trajectory_id``, the judge's ``trajudge.judge_config_sha256`` (None: judged before
trajudge recorded configurations), ``trajudge.rubric_id``, ``trajudge.rubric_version``,
``trajudge.model``, ``trajudge.mode``, ``trajudge.order``, ``trajudge.sample``, the score
and verdict, ``trajudge.other_id`` (pairwise / reference); for a label its rubric, ``unsure``
and ``adjudication``. ``trajudge.key`` names the judgment or label (its key in the store) and
``trajudge.sha256`` hashes what was written: an export reads the assessments a trace holds
and writes only what is missing or changed (a changed one overrides the old one, which MLflow
then marks invalid). Every text is passed through the store's secret redaction; no trajectory
text is exported.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from trajudge.core import canonical_json
from trajudge.store._redact import redact

JUDGMENT_NAME = "trajudge.judgment"
LABEL_NAME = "trajudge.label"


@dataclass
class Planned:
    """One assessment to have on a trace: its identity and its body."""

    trace_id: str
    key: str
    body: dict[str, Any]


def _present(value: Any) -> bool:
    if value is None:
        return False
    return not (isinstance(value, float) and math.isnan(value))


def _text(value: Any) -> str | None:
    return redact(str(value)) if _present(value) else None


def _number(value: Any) -> float | None:
    return float(value) if _present(value) else None


def _digest(*parts: Any) -> str:
    return hashlib.sha256(canonical_json(list(parts)).encode()).hexdigest()


def _finish(trace_id: str, key: str, body: dict[str, Any]) -> Planned:
    meta = {k: str(v) for k, v in body.pop("meta").items() if v is not None}
    body["metadata"] = {**meta, "trajudge.key": key}
    body["metadata"]["trajudge.sha256"] = _digest(body)
    body["trace_id"] = trace_id
    return Planned(trace_id, key, body)


def judgment_assessment(dataset: str, row: dict[Any, Any], trace_id: str) -> Planned:
    """The feedback of one stored judgment (a row of ``judgments_frame``)."""
    identity = [
        dataset,
        row["trajectory_id"],
        _text(row.get("other_id")),
        row["judge"],
        _text(row.get("config_sha256")),
        row["rubric_version"],
        row["order"],
        int(row["sample"]),
    ]
    score, verdict = _number(row.get("score")), _text(row.get("verdict"))
    body: dict[str, Any] = {
        "assessment_name": f"{JUDGMENT_NAME}.{row['rubric_id']}",
        "source": {"source_type": "LLM_JUDGE", "source_id": redact(str(row["judge"]))},
        "feedback": {"value": verdict if verdict is not None else score},
        "meta": {
            "trajudge.kind": "judgment",
            "trajudge.dataset": dataset,
            "trajudge.trajectory_id": row["trajectory_id"],
            "trajudge.other_id": _text(row.get("other_id")),
            "trajudge.judge": row["judge"],
            "trajudge.judge_config_sha256": _text(row.get("config_sha256")),
            "trajudge.rubric_id": row["rubric_id"],
            "trajudge.rubric_version": row["rubric_version"],
            "trajudge.model": _text(row.get("model")),
            "trajudge.mode": row.get("mode"),
            "trajudge.order": row["order"],
            "trajudge.sample": int(row["sample"]),
            "trajudge.score": None if score is None else repr(score),
            "trajudge.verdict": verdict,
            "trajudge.created_at": row.get("created_at"),
        },
    }
    reasoning = _text(row.get("reasoning"))
    if reasoning is not None:
        body["rationale"] = reasoning
    return _finish(trace_id, "judgment:" + _digest(*identity), body)


def label_assessment(dataset: str, row: dict[Any, Any], trace_id: str) -> Planned | None:
    """The feedback of one stored human label (None: a skipped label, no value)."""
    category, value = _text(row.get("category")), _number(row.get("value"))
    if category is None and value is None:
        return None
    identity = [
        dataset,
        row["trajectory_id"],
        row["rubric_id"],
        row["annotator"],
        bool(row["adjudication"]),
    ]
    body: dict[str, Any] = {
        "assessment_name": f"{LABEL_NAME}.{row['rubric_id']}",
        "source": {"source_type": "HUMAN", "source_id": redact(str(row["annotator"]))},
        "feedback": {"value": category if category is not None else value},
        "meta": {
            "trajudge.kind": "label",
            "trajudge.dataset": dataset,
            "trajudge.trajectory_id": row["trajectory_id"],
            "trajudge.rubric_id": row["rubric_id"],
            "trajudge.annotator": row["annotator"],
            "trajudge.value": None if value is None else repr(value),
            "trajudge.category": category,
            "trajudge.unsure": bool(row["unsure"]),
            "trajudge.adjudication": bool(row["adjudication"]),
            "trajudge.updated_at": row.get("updated_at"),
        },
    }
    note = _text(row.get("note"))
    if note is not None:
        body["rationale"] = note
    return _finish(trace_id, "label:" + _digest(*identity), body)


def plan(
    dataset: str,
    judgments: pd.DataFrame,
    labels: pd.DataFrame,
    trace_of: dict[str, str],
) -> tuple[list[Planned], dict[str, int]]:
    """Every assessment of ``dataset`` (judgments without error, human labels with a value) on
    its trajectory's trace, and what was left out, counted by reason."""
    out: list[Planned] = []
    left: dict[str, int] = {}

    def skip(reason: str) -> None:
        left[reason] = left.get(reason, 0) + 1

    for row in judgments.to_dict("records"):
        if _present(row.get("error")):
            skip("judgments that failed (no verdict)")
        elif row["trajectory_id"] not in trace_of:
            skip("judgments of trajectories not imported from a trace")
        else:
            out.append(judgment_assessment(dataset, row, trace_of[row["trajectory_id"]]))
    for row in labels.to_dict("records"):
        if row["trajectory_id"] not in trace_of:
            skip("labels of trajectories not imported from a trace")
            continue
        planned = label_assessment(dataset, row, trace_of[row["trajectory_id"]])
        if planned is None:
            skip("skipped labels (no value)")
        else:
            out.append(planned)
    return out, left


def calibration_tags(dataset: str, row: Any, versions: list[str]) -> tuple[str, dict[str, str]]:
    """The identity and tags of a judge's calibration run (a report's judge row)."""
    config = (row.config or {}).get("sha256")
    identity = _digest(dataset, row.judge, row.rubric_id, config, versions)
    tags = {
        "trajudge.kind": "calibration",
        "trajudge.key": "calibration:" + identity,
        "trajudge.dataset": dataset,
        "trajudge.judge": row.judge,
        "trajudge.rubric_id": str(row.rubric_id),
        "trajudge.rubric_version": ",".join(versions),
        "trajudge.judge_config_sha256": str(config),
        "trajudge.models": ",".join(row.models),
    }
    return "calibration:" + identity, tags


def calibration_metrics(row: Any, n_labels: int) -> dict[str, float]:
    """κ with its interval, TPR and TNR with theirs, the items and labels behind them."""
    cal = row.calibration
    out: dict[str, float] = {"n_items": float(cal.n_items), "n_labels": float(n_labels)}
    for name in ("kappa", "tpr", "tnr"):
        est = getattr(cal, name)
        for part in ("value", "low", "high"):
            value = getattr(est, part)
            if value is not None and not math.isnan(value):
                out[name if part == "value" else f"{name}_{part}"] = float(value)
    return out


def metrics_digest(tags: dict[str, str], metrics: dict[str, float]) -> str:
    return _digest(tags, {k: json.dumps(v) for k, v in sorted(metrics.items())})
