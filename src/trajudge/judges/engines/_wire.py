"""What an engine that runs calls in other processes sends its workers, and how a worker
builds its clients from it: shared by the Ray engine (:mod:`trajudge.judges.engines._ray`)
and the process engine (:mod:`trajudge.judges.engines._procs`), so both make the same
requests with the same retries.

A judge travels as a :class:`_Wire`: its client's settings (never the cache, and never a
secret: the API key and header values are read from the worker's environment by the names
the settings carry), its rubric (the worker builds the verdict model again from it: same
schema, same validation) and the facts a judgment records. A call travels as (judge index,
cache key, messages, parameters); its :class:`~trajudge.judges.CallResult` comes back.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trajudge.judges.calls._client import LLMClient
from trajudge.judges.calls._limits import Limiter
from trajudge.rubrics._rubric import Rubric
from trajudge.rubrics._schema import verdict_model

if TYPE_CHECKING:
    from trajudge.judges.calls._judge import Judge
    from trajudge.judges.calls._spec import JudgeSpec

#: LLMClient fields not copied to a worker (the cache stays with the driver; the rate limit
#: is the engine's, shared by all workers: see ``_Wire.rate``).
_NOT_SENT = {"cache", "limiter", "_states", "rpm"}


@dataclass(frozen=True)
class _Facts:
    """What :func:`~trajudge.judges.calls._call.finish` reads of a judge, for a worker to make the
    judgment itself (the :class:`~trajudge.judges.Judge` holds its client and cache)."""

    name: str
    spec: JudgeSpec
    rubric: Rubric
    rubric_version: str
    config_sha256: str
    config_json: str
    #: the verdict model finish() checks verdicts with: built again in the worker
    verdict_model: Any = None


@dataclass(frozen=True)
class _Wire:
    """What a worker needs to call a judge's model: the client's settings and the rubric,
    and the judge's facts for the judgments it writes."""

    client: dict[str, Any]
    rubric: Rubric
    reasoning_chars: int
    #: how the worker keeps the judge's rpm, or None (no limit): the Ray engine's rate actor
    #: handle, or the process engine's marker that permits come from the driver
    rate: Any
    facts: _Facts


def _wire(judge: Judge, rate: Any) -> _Wire:
    client = judge.client()
    settings = {
        f.name: getattr(client, f.name)
        for f in dataclasses.fields(client)
        if f.name not in _NOT_SENT
    }
    facts = _Facts(
        judge.name,
        judge.spec,
        judge.rubric,
        judge.rubric_version,
        judge.config_sha256,
        judge.config_json,
    )
    return _Wire(settings, judge.rubric, judge.reasoning_chars, rate, facts)


@dataclass(frozen=True)
class _Where:
    """Which judgment a call fills: the fields of its :class:`PreparedCall` but the judge,
    the messages and the parameters."""

    trajectory_id: str
    other_id: str | None
    order: Any
    sample: int
    shown: tuple[str, ...]


def open_wire(wire: _Wire, limiter: Limiter | None) -> tuple[LLMClient, Any, _Facts]:
    """A worker's client for the judge of ``wire`` (its requests spaced by ``limiter``), the
    verdict model its answers are validated with, and the facts its judgments record."""
    client = LLMClient(**wire.client, limiter=limiter)
    model = verdict_model(wire.rubric, max_reasoning_chars=wire.reasoning_chars)
    return client, model, dataclasses.replace(wire.facts, verdict_model=model)


class RateActor:
    """One judge's requests-per-minute limit for all the workers of an engine: request starts
    are spaced ``60 / rpm`` seconds apart. The Ray engine runs it as an actor that every
    worker asks; the process engine's driver keeps one and answers its workers' asks."""

    def __init__(self, rpm: float) -> None:
        self.interval = 60.0 / rpm
        self._next = 0.0

    def reserve(self) -> float:
        """Seconds the caller waits before it starts its request."""
        now = time.time()
        start = max(now, self._next)
        self._next = start + self.interval
        return start - now
