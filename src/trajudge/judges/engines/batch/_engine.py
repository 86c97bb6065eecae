"""``--engine batch``: the planned calls through a provider's batch API (litellm files/batches).

:class:`ProviderBatchEngine` is an :class:`~trajudge.judges.Engine`: it gets the calls the
runner could not answer from the cache and

1. **builds** each request body with litellm's own request transformation
   (``litellm.utils.return_raw_request`` over the very ``litellm.acompletion`` arguments the
   local engine sends, :meth:`~trajudge.judges.LLMClient.json_schema_request`): same model
   name, messages, parameters (as litellm maps them for the model) and ``response_format``;
2. **submits** them as OpenAI batch JSONL (``{"custom_id", "method", "url", "body"}``; Azure
   OpenAI takes the same format with ``url`` ``/chat/completions`` and the deployment as
   ``model``), one
   batch per endpoint, model and credentials (at most :data:`MAX_REQUESTS` requests each):
   ``litellm.acreate_file(purpose="batch")`` then ``litellm.acreate_batch``; the batch is
   recorded in the store (``provider_batches`` and its requests) as soon as the provider has
   accepted it;
3. **polls** ``litellm.aretrieve_batch`` every ``poll_interval_s`` until the batch is
   ``completed``, ``expired``, ``failed`` or ``cancelled``, downloads the output and error
   files (``litellm.afile_content``) and hands each request's result to ``emit``: a 200 answer
   is parsed exactly as the local engine parses one (:func:`~trajudge.judges.calls._result.
   parse_json_schema`, the rubric's verdict model); an error line, or a request left without
   an answer by a batch that failed, expired or was cancelled, becomes an error result.

Resume: a second run plans the same calls (nothing is stored yet), finds them among the
requests of recorded batches (by judgment key AND request hash, so a changed prompt or
configuration is submitted anew) and collects those batches instead of submitting again.

Each line of a result file is its own result, for every provider
(:mod:`trajudge.judges.engines.batch._lines`): a line that is not JSON, not an object or not in the
provider's format, and a request answered twice with different answers, is an error for its
request alone; the other answers are stored.

Retries: a request the provider answered with an error (an error-file line, an unparseable or
cut verdict, an unreadable line, a request a failed or expired batch never ran) is stored as
an error with the provider's message, never as a pass or a fail, and marked failed on its
batch; the engine does not resubmit within the run (a batch round may take the whole
completion window), and the next run plans it again, as every stored error, and submits it in
a new batch. Transient failures of the file and batch calls themselves (429, 5xx, connection)
are retried with the judge's ``max_retries``.

Cost is at the batch price: ``litellm.cost_calculator.batch_cost_calculator``, which uses the
cost map's ``*_batches`` prices when it has them (e.g. ``gpt-4o-mini``: half the synchronous
price) and otherwise half the synchronous price (litellm's rule, after OpenAI's published 50%
batch discount); a model the cost map does not know costs None, a loopback endpoint 0.
Latency is not measured per request in a batch (None).

Providers: litellm's OpenAI-format batches (``openai``, ``azure`` (Azure OpenAI's global
batches), ``litellm_proxy``, and any OpenAI-compatible server through ``api_base``),
Anthropic's Message Batches (``anthropic``, through the anthropic SDK:
:mod:`trajudge.judges.engines.batch._anthropic`), Vertex AI batch prediction jobs
(``vertex_ai`` Gemini models: :mod:`trajudge.judges.engines.batch._vertex`) and Amazon
Bedrock's batch inference jobs (``bedrock``, Claude models, through litellm's Bedrock files
and batches over S3: :mod:`trajudge.judges.engines.batch._bedrock`), with judges whose
requests are ``json_schema_mode`` (an ``api_base``, or ``mode: json_schema_mode``; OpenAI,
Azure OpenAI, Anthropic and Claude on Bedrock (through litellm's forced tool or
``output_format``), Gemini and vLLM honour it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from trajudge.core import InputError, canonical_json
from trajudge.judges.calls._call import PreparedCall
from trajudge.judges.calls._provider import import_litellm
from trajudge.judges.calls._result import CallResult
from trajudge.judges.engines._base import Emit, run_all
from trajudge.judges.engines.batch._jobs import (
    MAX_BYTES,
    MAX_REQUESTS,
    Chunk,
    Job,
    Target,
    without_prompt,
)
from trajudge.judges.engines.batch._provider import SUPPORTED_PROVIDERS, provider_of
from trajudge.judges.engines.batch._template import BodyTemplates
from trajudge.store.judging._batches import ITEM_KEY

if TYPE_CHECKING:
    from trajudge.store import Store


class ProviderBatchEngine:
    """Run planned calls through the provider's batch API (see the module docstring).

    ``store`` and ``dataset`` are where submitted batches are recorded (the batch's own);
    ``notify`` hears one line per submitted, resumed and finished batch.
    """

    def __init__(
        self,
        store: Store,
        dataset: str,
        *,
        poll_interval_s: float = 30.0,
        max_requests: int = MAX_REQUESTS,
        completion_window: str = "24h",
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.dataset = dataset
        self.poll_interval_s = poll_interval_s
        self.max_requests = max(1, max_requests)
        self.completion_window = completion_window
        self.notify = notify
        self._templates: dict[tuple[int, str], tuple[dict[str, Any], str | None]] = {}
        self._shaped = BodyTemplates(lambda call: self.request(call)[0])

    def say(self, line: str) -> None:
        """Tell ``notify`` one line about a batch."""
        if self.notify is not None:
            self.notify(line)

    async def run(self, calls: AsyncIterator[PreparedCall], emit: Emit) -> None:
        """Submit the calls as they come (a batch is sent once it holds ``max_requests``
        requests or 190 MB), then poll and collect every batch; the calls kept meanwhile
        carry no prompt, so memory stays bounded by one input file per target."""
        litellm: Any = None
        recorded: dict[tuple[Any, ...], tuple[int, str]] = {}
        rows: dict[int, dict[str, Any]] = {}
        jobs: dict[int, Job] = {}
        filling: dict[Target, Chunk] = {}
        async for call in calls:
            if litellm is None:
                litellm = import_litellm()
                recorded = {
                    (tuple(it[k] for k in ITEM_KEY), it["request_sha256"]): (
                        it["batch"],
                        it["custom_id"],
                    )
                    for it in self.store.provider_batch_items(self.dataset)
                }
                rows = {b["id"]: b for b in self.store.provider_batches(self.dataset)}
            hit = recorded.get((call.judgment_key, call.key))
            if hit is not None:
                job = jobs.get(hit[0])
                if job is None:
                    row = rows[hit[0]]
                    job = Job(hit[0], row["batch_id"], row["provider"], call.judge.client(), {})
                    provider_of(job.provider).resume(self, job, call)
                    jobs[hit[0]] = job
                job.calls[hit[1]] = without_prompt(call)
                continue
            target = self._target(litellm, call)
            chunk = filling.get(target)
            if chunk is None:
                chunk = filling[target] = provider_of(target.provider).chunk(self, target, call)
            chunk.add(call, provider_of(target.provider).body(self, call))
            if len(chunk.calls) >= self.max_requests or chunk.size >= MAX_BYTES:
                await self._submit_into(jobs, litellm, target, filling.pop(target), emit)
        for target, chunk in filling.items():
            await self._submit_into(jobs, litellm, target, chunk, emit)
        if jobs:
            for job in jobs.values():
                self.say(f"waiting for batch {job.batch_id} ({len(job.calls)} requests)")
            await run_all([self._collect(litellm, job, emit) for job in jobs.values()])

    async def _submit_into(
        self, jobs: dict[int, Job], litellm: Any, target: Target, chunk: Chunk, emit: Emit
    ) -> None:
        job = await self._submit(litellm, target, chunk, emit)
        if job is not None:
            jobs[job.pk] = job

    # -- requests ----------------------------------------------------------------------------
    def _target(self, litellm: Any, call: PreparedCall) -> Target:
        client = call.judge.client()
        where = f"judge {call.judge.name}"
        try:
            provider = str(litellm.get_llm_provider(client.model, api_base=client.api_base)[1])
        except Exception as exc:
            raise InputError(
                where, field="model", reason=f"litellm does not know it: {exc}"
            ) from None
        if provider not in SUPPORTED_PROVIDERS:
            why = f"{provider!r} has no batch API trajudge can send"
            raise InputError(
                where,
                field="model",
                reason=f"--engine batch sends batches to {', '.join(SUPPORTED_PROVIDERS)} "
                f"(or any OpenAI-compatible api_base); {why}: use the local engine",
            )
        place = provider_of(provider).check(where, call)
        if client.instructor_mode != "json_schema_mode":
            raise InputError(
                where,
                field="mode",
                reason=f"--engine batch sends json_schema requests, and this judge uses "
                f"{client.instructor_mode}: set `mode: json_schema_mode` (OpenAI and Azure "
                "honour it) or use the local engine",
            )
        return Target(
            provider,
            client.model,
            client.api_base,
            client.api_key_env,
            tuple(sorted(client.extra_headers.items())),
            place,
        )

    def body(self, call: PreparedCall) -> dict[str, Any]:
        """The request body of ``call``: what the local engine would send, as litellm builds
        it (``return_raw_request`` runs litellm's transformation and stops before the network;
        its result for a judge and parameters is reused with each call's messages when litellm
        passed the messages through unchanged; where litellm moves them, as for Anthropic and
        Vertex AI, from a template checked against litellm's own body,
        :mod:`trajudge.judges.engines.batch._template`)."""
        if call.messages and (id(call.judge), canonical_json(call.params)) not in self._templates:
            return self._shaped.body(call)
        return self.request(call)[0]

    def request(self, call: PreparedCall) -> tuple[dict[str, Any], str | None]:
        """:meth:`body`, and the ``anthropic-beta`` header litellm sends with it (None)."""
        sig = (id(call.judge), canonical_json(call.params))
        template = self._templates.get(sig)
        if template is not None:
            return {**template[0], "messages": call.messages}, template[1]
        from litellm.types.utils import CallTypes
        from litellm.utils import return_raw_request

        client = call.judge.client()
        kwargs = client.json_schema_request(
            call.messages, call.judge.verdict_model, client._request_kwargs(call.params)
        )
        for name in ("api_key", "extra_headers", "timeout", "num_retries"):
            kwargs.pop(name, None)
        raw = return_raw_request(CallTypes.completion, kwargs)
        built = raw.get("raw_request_body")
        if not built:
            raise RuntimeError(f"litellm could not build the request: {raw.get('error')}")
        body = dict(built)
        body.update(body.pop("extra_body", None) or {})  # the OpenAI SDK merges it the same way
        beta = (raw.get("raw_request_headers") or {}).get("anthropic-beta")
        if body.get("messages") == call.messages:
            self._templates[sig] = (body, beta)
        return body, beta

    # -- submit -----------------------------------------------------------------------------
    async def _submit(
        self,
        litellm: Any,
        target: Target,
        chunk: Chunk,
        emit: Emit,
    ) -> Job | None:
        job: Job | None = await provider_of(target.provider).submit(
            self, litellm, target, chunk, emit
        )
        return job

    def record(
        self, target: Target, chunk: Chunk, batch_id: str, input_file_id: str, status: str
    ) -> Job:
        """Store the batch the provider accepted, and the job that collects it."""
        items = [
            {
                "custom_id": cid,
                "request_sha256": call.key,
                **dict(zip(ITEM_KEY, call.judgment_key, strict=True)),
            }
            for cid, call in chunk.calls
        ]
        pk = self.store.add_provider_batch(
            self.dataset,
            {
                "batch_id": batch_id,
                "provider": target.provider,
                "api_base": target.api_base,
                "model": target.model,
                "input_file_id": input_file_id,
                "status": status,
            },
            items,
        )
        self.say(f"submitted batch {batch_id} ({len(chunk.calls)} requests to {target.model})")
        client = chunk.calls[0][1].judge.client()
        return Job(pk, batch_id, target.provider, client, dict(chunk.calls))

    # -- collect ----------------------------------------------------------------------------
    async def _collect(self, litellm: Any, job: Job, emit: Emit) -> None:
        await provider_of(job.provider).collect(self, litellm, job, emit)

    def finish(
        self, job: Job, status: str | None, results: dict[str, CallResult], emit: Emit
    ) -> None:
        """Mark the failed requests of a finished batch, and emit every result."""
        self.store.mark_batch_items_failed(
            job.pk, [cid for cid, r in results.items() if r.error is not None]
        )
        for cid, result in results.items():
            emit(job.calls[cid], result)
        failed = sum(r.error is not None for r in results.values())
        self.say(
            f"batch {job.batch_id} {status}: {len(results) - failed} answered, {failed} errors"
        )
