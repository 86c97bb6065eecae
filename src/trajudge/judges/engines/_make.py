"""The one place that turns an engine name into an engine."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from trajudge.core import InputError
from trajudge.judges.engines._base import Engine
from trajudge.judges.engines._names import check_engine

if TYPE_CHECKING:
    from trajudge.judges.calls._judge import Judge
    from trajudge.store import Store


def make_engine(
    name: str | None,
    *,
    store: Store | None = None,
    dataset: str | None = None,
    judges: Sequence[Judge] = (),
    concurrency: int | None = None,
    address: str | None = None,
    workers: int | None = None,
    notify: Callable[[str], None] | None = None,
) -> Engine | None:
    """The engine called ``name`` (one of :data:`trajudge.judges.ENGINES`; None is ``local``).
    The one place that turns an engine name into an engine.

    ``local`` gives None: the runner's default, a :class:`LocalEngine` of the batch's
    concurrency. ``processes`` runs the calls in ``workers`` processes on this machine
    (default: one per CPU) with ``concurrency`` calls in flight (default: the largest judge
    ``concurrency``). ``ray`` runs the calls on the Ray cluster at ``address`` (``auto``,
    ``ray://host:10001``; default: start or join a local one) with ``concurrency`` calls in
    flight (default: the largest judge ``concurrency``; on a PostgreSQL ``store`` its workers
    write the judgments of ``dataset`` themselves). ``batch`` submits them through the
    provider's batch API, recording its batches in ``store`` under ``dataset`` and telling
    ``notify`` what it waits for.
    """
    name = "local" if name is None else check_engine(name)
    if address is not None and name != "ray":
        raise InputError("--address", reason="a cluster address applies to --engine ray")
    if workers is not None and name != "processes":
        raise InputError("--workers", reason="worker processes apply to --engine processes")
    if name == "processes":
        # imported here: like the other engines, loaded only by the runs that use it
        from trajudge.judges.engines._procs import ProcessEngine

        width = concurrency or max((j.spec.concurrency for j in judges), default=1)
        return ProcessEngine(width, workers=workers)
    if name == "ray":
        # imported here: Ray takes seconds to import, and most runs never use it
        from trajudge.judges.engines._ray import RayEngine

        width = concurrency or max((j.spec.concurrency for j in judges), default=1)
        return RayEngine(width, address=address, store=store, dataset=dataset)
    if name == "batch":
        if store is None or dataset is None:
            raise ValueError("the batch engine needs the store and the dataset")
        # imported here: the batch engine brings litellm's batch and file clients
        from trajudge.judges.engines.batch._engine import ProviderBatchEngine

        return ProviderBatchEngine(store, dataset, notify=notify)
    return None
