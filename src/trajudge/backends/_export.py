"""``trajudge export DATASET --to TARGET``: a dataset's judgments, human labels and judges'
calibration written back where its traces live.

Targets: ``otlp-file:PATH`` (an OTLP JSON file of ``gen_ai.evaluation.result`` events),
``otlp+http://HOST:PORT`` (a collector's OTLP/HTTP endpoint), ``phoenix+http://HOST:PORT``
(span annotations; a project after it is allowed and not needed), ``mlflow+http://HOST:PORT``
(assessments, and each judge's calibration as a run). Each is idempotent (see
:mod:`trajudge.backends._otlp_out`, :mod:`trajudge.backends._phoenix_out` and
:mod:`trajudge.backends._mlflow_export`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from trajudge.backends._evaluations import Collected, collect
from trajudge.backends._mlflow_export import export_mlflow
from trajudge.backends._otlp_out import otlp_headers, require_proto, write_file
from trajudge.backends._otlp_send import send_http
from trajudge.backends._phoenix import PhoenixClient
from trajudge.backends._phoenix_out import write_phoenix
from trajudge.backends._urls import is_backend_url, parse_backend_url
from trajudge.core import InputError
from trajudge.store import Store

TARGETS = (
    "otlp-file:PATH | otlp+http://HOST:PORT | phoenix+http://HOST:PORT | mlflow+http://HOST:PORT"
)


@dataclass
class ExportSummary:
    target: str  # as shown (no credentials)
    written: int = 0
    unchanged: int = 0
    judgments: int = 0
    labels: int = 0
    notes: list[str] = field(default_factory=list)


def export(
    store: Store, dataset: str, targets: list[str], *, n_boot: int = 2000
) -> list[ExportSummary]:
    """Write the evaluations of ``dataset`` to each target, in order (every target is checked
    before anything is written)."""
    parsed = [_target(t) for t in targets]
    found: Collected = collect(store, dataset, n_boot=n_boot)
    if not found.evaluations and found.not_otel:
        raise InputError(dataset, reason=found.notes()[0].replace(": not exported", ""))
    out = []
    for kind, where, shown in parsed:
        s = ExportSummary(shown, notes=found.notes())
        s.judgments = sum(e.kind == "judge" for e in found.evaluations)
        s.labels = len(found.evaluations) - s.judgments
        if kind == "file":
            s.written, s.unchanged = write_file(Path(where), found.evaluations)
        elif kind == "otlp":
            s.written, s.unchanged = send_http(store, where, shown, dataset, found.evaluations)
        elif kind == "mlflow":
            # MLflow's own model (assessments, runs) is written from the store by its module
            url = parse_backend_url(where, kinds=("mlflow",), need_name=False)
            done = export_mlflow(store, url, dataset, n_boot=n_boot)
            s.written = sum(done.written.values()) + sum(done.replaced.values())
            s.unchanged = sum(done.kept.values())
            s.notes = [*s.notes, *done.lines()]
        else:
            url = parse_backend_url(where, kinds=("phoenix",), need_name=False)
            if urlsplit(url.base).path:  # a project after the server: not needed
                url = parse_backend_url(where, kinds=("phoenix",), need_name=True)
            with PhoenixClient(url) as client:
                s.written = write_phoenix(client, found.evaluations)
        out.append(s)
    return out


def check_target(text: str) -> str:
    """``text`` as shown (no credentials) when it is a valid target; :class:`InputError`
    otherwise (nothing is contacted: ``trajudge run`` refuses a bad ``export:`` before it
    starts)."""
    return _target(text)[2]


def _target(text: str) -> tuple[str, str, str]:
    """(kind, where, shown) of one ``--to``."""
    if text.startswith("otlp-file:"):
        path = text.removeprefix("otlp-file:")
        if not path:
            raise InputError("--to", reason="otlp-file: needs a path (otlp-file:PATH)")
        return "file", path, text
    if is_backend_url(text):
        url = parse_backend_url(text, kinds=("otlp", "phoenix", "mlflow"), need_name=False)
        if url.kind == "otlp":
            require_proto(url.shown)
            otlp_headers()  # a malformed header variable is refused before anything is sent
            return "otlp", url.base, url.shown
        return url.kind, text, url.shown
    raise InputError("--to", reason=f"unknown target {text!r} (choose from {TARGETS})")
