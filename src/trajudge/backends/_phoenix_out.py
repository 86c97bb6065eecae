"""Evaluations as Phoenix span annotations (``POST /v1/span_annotations``).

A judgment is an annotation of kind ``LLM`` named ``<rubric> (judge <judge>)``, identified by
its configuration hash, rubric version, order and sample; a human label one of kind ``HUMAN``
named ``<rubric> (human)``, identified by its annotator. Phoenix keeps one annotation per
(name, span, identifier) and updates it in place, so writing again adds nothing, an
interrupted export completes on the next one, and a judge's annotation and a label never
overwrite each other (their names differ). The provenance and calibration go in the
annotation's ``metadata``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trajudge.backends._evaluations import Evaluation
from trajudge.backends._phoenix import PhoenixClient
from trajudge.core import InputError

BATCH = 100


def annotation_name(e: Evaluation) -> str:
    if e.kind == "judge":
        return f"{e.name} (judge {e.provenance['trajudge.judge.name']})"
    return f"{e.name} (human)"


def identifier(e: Evaluation) -> str:
    p = e.provenance
    if e.kind == "judge":
        config = str(p.get("trajudge.judge.config_sha256", "unrecorded"))[:16]
        return (
            f"trajudge:{config}:{p['trajudge.rubric.version']}:"
            f"{p['trajudge.judgment.order']}:{p['trajudge.judgment.sample']}"
        )
    adj = ":adjudication" if p.get("trajudge.label.adjudication") else ""
    return f"trajudge:{p['trajudge.label.annotator']}{adj}"


def annotation(e: Evaluation) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if e.score is not None:
        result["score"] = e.score
    if e.label is not None:
        result["label"] = e.label
    if e.explanation:
        result["explanation"] = e.explanation
    return {
        "span_id": e.span_id,
        "name": annotation_name(e),
        "annotator_kind": "LLM" if e.kind == "judge" else "HUMAN",
        "result": result,
        "metadata": {**e.provenance, "trajudge.export.item": e.item},
        "identifier": identifier(e),
    }


def write_phoenix(client: PhoenixClient, evaluations: Sequence[Evaluation]) -> int:
    """Upsert every evaluation; returns how many were written."""
    done = 0
    for start in range(0, len(evaluations), BATCH):
        batch = evaluations[start : start + BATCH]
        try:
            client.annotate([annotation(e) for e in batch])
        except InputError as exc:
            more = f" ({done} written before; exporting again completes it)" if done else ""
            raise InputError(exc.file, reason=exc.reason + more) from None
        done += len(batch)
    return done
