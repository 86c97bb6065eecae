"""The table of batch providers and the protocol each provider module implements.

A provider module (``_openai``, ``_anthropic``, ``_vertex``, ``_bedrock``) is the whole of what
differs between providers: what a judge must have to use it (``check``), how a request line
and an input file look (``chunk``, ``body``), how a batch is sent and collected (``submit``,
``collect``) and what a batch recorded by an earlier run needs again (``resume``). The engine
(:mod:`trajudge.judges.engines.batch._engine`) knows providers only through this table, so a
provider is added by writing its module and one line of :data:`PROVIDERS`.
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING, Any, Protocol, cast

from trajudge.judges.calls._call import PreparedCall
from trajudge.judges.engines._base import Emit
from trajudge.judges.engines.batch._jobs import Chunk, Job, Target

if TYPE_CHECKING:
    from trajudge.judges.engines.batch._engine import ProviderBatchEngine

#: litellm provider name -> the module that sends its batches: OpenAI's files and batches
#: format (OpenAI, Azure OpenAI's global batches, a litellm proxy, any OpenAI-compatible
#: ``api_base``), Anthropic's Message Batches, Vertex AI batch prediction jobs and Bedrock's
#: model invocation jobs.
PROVIDERS = {
    "openai": "_openai",
    "azure": "_openai",
    "litellm_proxy": "_openai",
    "anthropic": "_anthropic",
    "vertex_ai": "_vertex",
    "bedrock": "_bedrock",
}
SUPPORTED_PROVIDERS = tuple(PROVIDERS)


class BatchProvider(Protocol):
    """What a provider module defines (module-level functions)."""

    def check(self, where: str, call: PreparedCall) -> tuple[str | None, ...]:
        """Refuse (InputError naming ``where``) a judge this provider cannot batch; else the
        place its batches go beyond model and endpoint (Vertex AI: project, location,
        bucket), ``()`` for none."""
        ...

    def chunk(self, engine: ProviderBatchEngine, target: Target, call: PreparedCall) -> Chunk:
        """A new, empty input file for ``target``, shaped by ``call``'s first request."""
        ...

    def body(self, engine: ProviderBatchEngine, call: PreparedCall) -> dict[str, Any]:
        """The request body of ``call`` in this provider's batch format."""
        ...

    def resume(self, engine: ProviderBatchEngine, job: Job, call: PreparedCall) -> None:
        """Fill in what collecting ``job``, recorded by an earlier run, needs from ``call``."""
        ...

    async def submit(
        self, engine: ProviderBatchEngine, litellm: Any, target: Target, chunk: Chunk, emit: Emit
    ) -> Job | None:
        """Send ``chunk`` as a batch and record it; None (its calls emitted as errors) when
        the provider refused it."""
        ...

    async def collect(
        self, engine: ProviderBatchEngine, litellm: Any, job: Job, emit: Emit
    ) -> None:
        """Wait for ``job`` to end and emit a result for each of its calls."""
        ...


@functools.cache  # looked up for every call the engine batches
def provider_of(name: str) -> BatchProvider:
    """The module that sends ``name``'s batches (imported on first use: the Vertex AI and
    Bedrock modules bring HTTP and AWS clients a run on OpenAI never needs)."""
    module = importlib.import_module(f"{__package__}.{PROVIDERS[name]}")
    return cast(BatchProvider, module)


if TYPE_CHECKING:
    # the type checker holds every provider module to the protocol
    from trajudge.judges.engines.batch import _anthropic, _bedrock, _openai, _vertex

    _CHECKED: tuple[BatchProvider, ...] = (_openai, _anthropic, _vertex, _bedrock)
