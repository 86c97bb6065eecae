"""``dataset.source:`` of ``trajudge run``: the same incremental pull as ``trajudge import
KIND+http://...``, for either backend."""

from __future__ import annotations

from collections.abc import Iterable

from trajudge.backends._mlflow_pull import pull_mlflow
from trajudge.backends._pull import PullSummary, pull_phoenix
from trajudge.backends._urls import parse_backend_url
from trajudge.store import Store


def pull_source(
    store: Store, source: str, dataset: str, *, accept_loss: Iterable[str] = ()
) -> tuple[PullSummary, str]:
    """Pull what is new at ``source`` into ``dataset``: (the summary, the URL as shown)."""
    url = parse_backend_url(source, kinds=("phoenix", "mlflow"), need_name=True)
    if url.kind == "mlflow":
        return pull_mlflow(store, url, dataset, accept_loss=accept_loss), url.shown
    return pull_phoenix(store, url, dataset, accept_loss=accept_loss), url.shown
