"""Tracing backends: pull trajectories from a running server (Phoenix, MLflow), write
judgments, labels and calibration back (OTel evaluation events, Phoenix span annotations,
MLflow assessments)."""

from typing import TYPE_CHECKING

from trajudge.core import lazy_exports

if TYPE_CHECKING:
    from trajudge.backends._mlflow_pull import pull_mlflow
    from trajudge.backends._pull import PullSummary, pull_phoenix
    from trajudge.backends._urls import BackendURL, is_backend_url, parse_backend_url

__all__ = ["BackendURL", "PullSummary", "is_backend_url", "parse_backend_url", "pull_mlflow",
           "pull_phoenix"]  # fmt: skip

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BackendURL": "trajudge.backends._urls",
        "PullSummary": "trajudge.backends._pull",
        "is_backend_url": "trajudge.backends._urls",
        "parse_backend_url": "trajudge.backends._urls",
        "pull_mlflow": "trajudge.backends._mlflow_pull",
        "pull_phoenix": "trajudge.backends._pull",
    },
)
