"""An MLflow tracking server over its REST API (httpx; trajudge needs no MLflow package).

* Experiments: ``GET /api/2.0/mlflow/experiments/get-by-name`` and ``.../get`` (an experiment is
  named by name or id; a name that looks like an id is tried as both, and the choice is said),
  ``POST .../experiments/search`` to name the ones that exist;
* traces: ``POST /api/3.0/mlflow/traces/search`` (trace infos, oldest first, a page at a time)
  and their spans as the server stores them, ``GET
  /ajax-api/3.0/mlflow/get-trace-artifact?request_id=...``: MLflow's span JSON with every
  attribute as the JSON text the tracer wrote. (``/api/3.0/mlflow/traces/get`` turns that text
  into typed values and a tool's JSON-text result into an object: a result would no longer be
  what the tool returned);
* assessments: ``POST /api/3.0/mlflow/traces/{id}/assessments``; the ones a trace holds come
  with its info, ``GET /api/3.0/mlflow/traces/{id}``.

``MLFLOW_TRACKING_TOKEN`` (a bearer token) or ``MLFLOW_TRACKING_USERNAME`` / ``_PASSWORD``
(basic auth), or credentials in the URL, are sent and never shown. Every failure is one
:class:`InputError` naming the URL as shown (no credentials).
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from trajudge.backends._urls import BackendClient, BackendURL
from trajudge.core import InputError

if TYPE_CHECKING:
    import httpx

PAGE = 100  # traces per search page (the server's cap is 500; a page's spans are read whole)


class MlflowClient(BackendClient):
    """One MLflow tracking server; use as a context manager."""

    SERVER = "MLflow"
    REFUSED_HINT = "set MLFLOW_TRACKING_TOKEN or MLFLOW_TRACKING_USERNAME/PASSWORD"

    def __init__(self, url: BackendURL) -> None:
        headers = {}
        token = os.environ.get("MLFLOW_TRACKING_TOKEN")
        if token:
            headers["Authorization"] = f"Bearer {token}"
        user = url.username or os.environ.get("MLFLOW_TRACKING_USERNAME")
        password = url.password or os.environ.get("MLFLOW_TRACKING_PASSWORD") or ""
        auth = (user, password) if user and not token else None
        super().__init__(url, headers, auth)

    def _json(self, response: httpx.Response, what: str) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise InputError(
                self.url.shown,
                reason=f"not an MLflow tracking server ({what}: HTTP {response.status_code}, "
                "the answer is not MLflow's JSON)",
            )
        if response.status_code != 200:
            message = " ".join(str(body.get("message") or "").split())[:200]
            raise InputError(
                self.url.shown,
                reason=f"{what}: HTTP {response.status_code} {body.get('error_code', '')} "
                f"{message}".rstrip(),
            )
        return body

    def _missing(self, response: httpx.Response) -> bool:
        """The server answered "no such resource" in MLflow's own words."""
        if response.status_code != 404:
            return False
        try:
            body = response.json()
        except ValueError:
            return False
        return isinstance(body, dict) and body.get("error_code") == "RESOURCE_DOES_NOT_EXIST"

    # -- experiments ---------------------------------------------------------------------
    def experiment_names(self) -> list[str]:
        names: list[str] = []
        token = None
        while True:
            body = self._json(
                self._request(
                    "POST",
                    "/api/2.0/mlflow/experiments/search",
                    idempotent=True,
                    json={"max_results": 1000, **({"page_token": token} if token else {})},
                ),
                "listing the experiments",
            )
            names += [str(e.get("name")) for e in body.get("experiments") or []]
            token = body.get("next_page_token")
            if not token:
                return names

    def experiment(self) -> tuple[str, str, str | None]:
        """(id, name, note) of the URL's experiment. A name that is all digits is looked up as
        a name and as an id; ``note`` says which was taken when it could be either. Unknown:
        an :class:`InputError` naming the experiments that exist."""
        wanted = self.url.name
        by_name = self._request(
            "GET", "/api/2.0/mlflow/experiments/get-by-name", params={"experiment_name": wanted}
        )
        named = None if self._missing(by_name) else self._json(by_name, "finding the experiment")
        by_id = None
        if wanted.isdigit():
            r = self._request(
                "GET", "/api/2.0/mlflow/experiments/get", params={"experiment_id": wanted}
            )
            by_id = None if self._missing(r) else self._json(r, "finding the experiment")
        if named is not None:
            exp = named["experiment"]
            note = None
            if by_id is not None and str(by_id["experiment"]["experiment_id"]) != str(
                exp["experiment_id"]
            ):
                other = by_id["experiment"]["name"]
                note = (
                    f"{wanted!r} is both an experiment's name (id {exp['experiment_id']}) and "
                    f"another's id ({other!r}): took the one named {wanted!r}"
                )
            return str(exp["experiment_id"]), str(exp["name"]), note
        if by_id is not None:
            exp = by_id["experiment"]
            note = (
                f"no experiment is named {wanted!r}: took experiment id {wanted} ({exp['name']!r})"
            )
            return str(exp["experiment_id"]), str(exp["name"]), note
        have = ", ".join(sorted(self.experiment_names())) or "none"
        raise InputError(self.url.shown, reason=f"no experiment {wanted!r} (experiments: {have})")

    # -- traces --------------------------------------------------------------------------
    def search(
        self, experiment_id: str, filter_string: str, page_token: str | None, limit: int = PAGE
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of trace infos matching ``filter_string``, oldest first."""
        body: dict[str, Any] = {
            "locations": [
                {"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {"experiment_id": experiment_id}}
            ],
            "filter": filter_string,
            "max_results": limit,
            "order_by": ["timestamp_ms ASC"],
        }
        if page_token:
            body["page_token"] = page_token
        answer = self._json(
            self._request("POST", "/api/3.0/mlflow/traces/search", json=body, idempotent=True),
            "searching traces",
        )
        traces = answer.get("traces") or []
        if not isinstance(traces, list) or not all(isinstance(t, dict) for t in traces):
            raise InputError(self.url.shown, reason="unexpected answer: 'traces' is not a list")
        return traces, answer.get("next_page_token") or None

    def spans(self, trace_id: str) -> list[dict[str, Any]]:
        """The spans of ``trace_id`` as the server stores them (MLflow's span JSON)."""
        body = self._json(
            self._request(
                "GET", "/ajax-api/3.0/mlflow/get-trace-artifact", params={"request_id": trace_id}
            ),
            f"reading the spans of trace {trace_id}",
        )
        spans = body.get("spans")
        if not isinstance(spans, list) or not all(isinstance(s, dict) for s in spans):
            raise InputError(self.url.shown, record=f"trace {trace_id}", reason="no span list")
        return spans

    def trace_info(self, trace_id: str) -> dict[str, Any]:
        body = self._json(
            self._request("GET", f"/api/3.0/mlflow/traces/{trace_id}"), f"reading trace {trace_id}"
        )
        info = (body.get("trace") or {}).get("trace_info")
        if not isinstance(info, dict):
            raise InputError(self.url.shown, record=f"trace {trace_id}", reason="no trace info")
        return info

    def trace_info_or_none(self, trace_id: str) -> dict[str, Any] | None:
        """The trace's info with its assessments (None: the server has no such trace)."""
        response = self._request("GET", f"/api/3.0/mlflow/traces/{trace_id}")
        if self._missing(response):
            return None
        info = (self._json(response, f"reading trace {trace_id}").get("trace") or {}).get(
            "trace_info"
        )
        if not isinstance(info, dict):
            raise InputError(self.url.shown, record=f"trace {trace_id}", reason="no trace info")
        return info

    def create_assessment(self, assessment: dict[str, Any]) -> dict[str, Any]:
        trace_id = assessment["trace_id"]
        body = self._json(
            self._request(
                "POST",
                f"/api/3.0/mlflow/traces/{trace_id}/assessments",
                json={"assessment": assessment},
            ),
            f"writing an assessment on trace {trace_id}",
        )
        return dict(body.get("assessment") or {})

    # -- runs (a judge's calibration) ----------------------------------------------------
    def find_run(self, experiment_id: str, key: str) -> dict[str, Any] | None:
        """The run tagged ``trajudge.key`` = ``key`` in the experiment (None: none yet)."""
        body = self._json(
            self._request(
                "POST",
                "/api/2.0/mlflow/runs/search",
                idempotent=True,
                json={
                    "experiment_ids": [experiment_id],
                    "filter": f"tags.`trajudge.key` = '{key}'",
                    "max_results": 1,
                },
            ),
            "searching runs",
        )
        runs = body.get("runs") or []
        return dict(runs[0]) if runs else None

    def create_run(self, experiment_id: str, name: str, tags: dict[str, str]) -> str:
        body = self._json(
            self._request(
                "POST",
                "/api/2.0/mlflow/runs/create",
                json={
                    "experiment_id": experiment_id,
                    "run_name": name,
                    "start_time": int(time.time() * 1000),
                    "tags": [{"key": k, "value": v} for k, v in tags.items()],
                },
            ),
            "creating a run",
        )
        return str(body["run"]["info"]["run_id"])

    def log_batch(
        self, run_id: str, metrics: dict[str, float], step: int, tags: dict[str, str]
    ) -> None:
        """Metrics at ``step`` and tags in one request (the server applies them together)."""
        now = int(time.time() * 1000)
        self._json(
            self._request(
                "POST",
                "/api/2.0/mlflow/runs/log-batch",
                json={
                    "run_id": run_id,
                    "metrics": [
                        {"key": k, "value": v, "timestamp": now, "step": step}
                        for k, v in metrics.items()
                    ],
                    "tags": [{"key": k, "value": v} for k, v in tags.items()],
                },
            ),
            "logging a run's metrics",
        )
        self._json(
            self._request(
                "POST",
                "/api/2.0/mlflow/runs/update",
                json={"run_id": run_id, "status": "FINISHED", "end_time": now},
            ),
            "finishing a run",
        )
