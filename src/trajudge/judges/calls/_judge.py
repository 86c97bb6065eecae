"""Judge: a rubric, a model and its parameters; one async core with a thin sync wrapper.

Modes (DESIGN.md):

- pointwise: one trajectory, one call per sample;
- pairwise: ``trajectory`` vs ``other`` of the same task, shown as (A, B) = (trajectory, other)
  in order ``ab`` and as (other, trajectory) in order ``ba``; the ``ba`` verdict is mapped back
  (A <-> B), so every stored verdict is in the original numbering: ``A`` = ``trajectory`` is
  better, ``B`` = ``other`` is, ``tie``; no score is stored (the verdict is a category);
- pointwise on a nominal scale: the verdict is one of the scale's categories, no score;
- reference: the candidate is shown beside a reference (A = candidate in ``ab``, B in ``ba``);
  both are scored, and the candidate's score is taken from whichever slot it occupied.

With ``swap`` on, pairwise and reference judgments run in both orders and are averaged; an order
pair whose conclusions differ is flagged ``inconsistent`` (see :func:`aggregate_judgments`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from trajudge.core import InputError
from trajudge.judges.calls._cache import ResponseCache, request_key
from trajudge.judges.calls._call import PreparedCall, finish
from trajudge.judges.calls._client import LLMClient
from trajudge.judges.calls._judgment import Judgment, Order
from trajudge.judges.calls._local import (
    DEFAULT_N_CTX,
    DEFAULT_N_PARALLEL,
    LOCAL_PREFIX,
    shared_local_server,
    slot_budget,
)
from trajudge.judges.calls._logprobs import TOP_LOGPROBS
from trajudge.judges.calls._provider import choose_mode
from trajudge.judges.calls._result import CallResult
from trajudge.judges.calls._spec import JudgeSpec, reasoning_cap, vertex_params
from trajudge.judges.prompts._prompt import SYSTEM_PROMPT, Prompt, Shown, build_prompt
from trajudge.judges.runs._aggregate import Aggregate, aggregate_judgments
from trajudge.rubrics._rubric import Rubric, load_rubric
from trajudge.rubrics._schema import response_schema, verdict_model
from trajudge.rubrics._template import default_template
from trajudge.store import redact
from trajudge.trajectories import Trajectory

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from sync code (in a thread if a loop is already running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    result: T = box["value"]
    return result


class Judge:
    """An LLM judge: ``name``, litellm ``model`` string, ``rubric`` and call parameters.

    >>> judge = Judge(JudgeSpec(name="j", model="openai/gpt-4o-mini",  # doctest: +SKIP
    ...                         rubric="trajectory_reasonableness"))
    >>> result = judge.judge(trajectory)  # doctest: +SKIP
    >>> result.aggregate.score  # doctest: +SKIP
    4.0
    """

    def __init__(
        self,
        spec: JudgeSpec,
        *,
        rubric: Rubric | None = None,
        rubric_dirs: Sequence[str] = (),
        cache: ResponseCache | None = None,
    ) -> None:
        self.spec = spec
        self.rubric = rubric if rubric is not None else load_rubric(spec.rubric, *rubric_dirs)
        self.cache = cache
        self.reasoning_chars = reasoning_cap(spec, self.rubric)
        self.verdict_model = verdict_model(self.rubric, max_reasoning_chars=self.reasoning_chars)
        needed = {"api_key_env": spec.api_key_env} if spec.api_key_env is not None else {}
        needed.update({f"extra_headers.{h}": env for h, env in spec.extra_headers.items()})
        for field, env in needed.items():
            if env not in os.environ:
                raise InputError(
                    f"judge {spec.name}",
                    field=field,
                    reason=f"environment variable {env} is not set",
                )
        self._client: LLMClient | None = None
        self._client_lock = threading.Lock()
        #: whether this judge said that its provider returned no log-probabilities (once)
        self.warned_no_logprobs = False
        self._set_budget(self._budget_for(DEFAULT_N_CTX, DEFAULT_N_PARALLEL))

    def _budget_for(self, n_ctx: int, n_parallel: int) -> int:
        """The prompt budget (estimated tokens): ``prompt_budget``, else the default; for a
        local model never more than its server's slot holds (:func:`slot_budget`)."""
        if not self.is_local:
            return self.spec.prompt_budget or 12000
        most = slot_budget(n_ctx // max(1, n_parallel), self.spec.max_tokens)
        return min(self.spec.prompt_budget or most, most)

    def _set_budget(self, budget: int) -> None:
        self._budget = budget
        #: the rubric's version when the judge was configured (hashing the rubric on every
        #: call would cost as much as rendering its prompt)
        self.rubric_version = self.rubric.version
        self.config = self._make_config()
        self.config_sha256 = request_key(self.config)
        # stored and shown: URL credentials in api_base redacted (the hash above covers them)
        self.config_json = redact(json.dumps(self.config, sort_keys=True, ensure_ascii=False))

    def _make_config(self) -> dict[str, Any]:
        """Everything that changes a request besides the trajectories shown; never a key.

        Model and endpoint, the request parameters, the instructor mode, the rubric, the
        prompt templates, the prompt budget (outputs are elided to fit it) and the response
        schema (the last two as SHA-256). ``samples``, ``swap`` and ``reference`` are left
        out: they decide which calls are made, and each call's order, sample and other
        trajectory are in the judgment's key; so are limits that do not change an answer
        (timeout, concurrency, rpm, retries).
        """
        spec, rubric = self.spec, self.rubric
        wire_model, wire_base = (
            (f"openai/{spec.model[len(LOCAL_PREFIX) :]}", "embedded")
            if self.is_local
            else (spec.model, spec.api_base)
        )
        template = rubric.template or default_template(rubric)
        return {
            "model": spec.model,
            "api_base": spec.api_base,
            "headers": sorted(spec.extra_headers),
            "mode": choose_mode(wire_model, wire_base, spec.mode),
            "params": {
                "temperature": spec.temperature,
                "max_tokens": spec.max_tokens,
                "seed": spec.seed,
                # only when on: judges configured before the option keep their hashes
                **({"top_logprobs": TOP_LOGPROBS} if spec.logprobs else {}),
            },
            "rubric": {"id": rubric.id, "version": self.rubric_version},
            "prompt_sha256": _sha256(SYSTEM_PROMPT + "\n" + template),
            "prompt_budget": self._budget,
            "schema_sha256": request_key(response_schema(self.verdict_model)),
        }

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def model(self) -> str:
        return self.spec.model

    @property
    def params(self) -> dict[str, Any]:
        """The call parameters (everything in the spec but name, model and rubric)."""
        return self.spec.model_dump(exclude={"name", "model", "rubric"})

    @property
    def is_local(self) -> bool:
        return self.spec.model.startswith(LOCAL_PREFIX)

    def client(self) -> LLMClient:
        """The LLM client (starting the embedded server for ``local/...`` models)."""
        with self._client_lock:
            if self._client is None:
                spec = self.spec
                model, api_base = spec.model, spec.api_base
                endpoint = None
                if self.is_local:
                    name = spec.model[len(LOCAL_PREFIX) :]
                    server = shared_local_server(name)
                    model, api_base, endpoint = f"openai/{name}", server.api_base, spec.model
                    # a shared server started with other sizes
                    budget = self._budget_for(server.n_ctx, server.n_parallel)
                    if budget != self._budget:
                        self._set_budget(budget)
                self._client = LLMClient(
                    model=model,
                    api_base=api_base,
                    api_key_env=spec.api_key_env,
                    extra_headers=dict(spec.extra_headers),
                    endpoint=endpoint,
                    timeout=spec.timeout,
                    concurrency=spec.concurrency,
                    rpm=spec.rpm,
                    max_retries=spec.max_retries,
                    backoff_s=spec.retry_backoff_s,
                    backoff_max_s=max(spec.retry_backoff_s, 30.0),
                    mode=spec.mode,
                    cache=self.cache,
                    provider_params=vertex_params(spec),
                )
            return self._client

    def plan(self) -> list[tuple[Order, int]]:
        """The (order, sample) calls one item needs."""
        orders: list[Order] = (
            ["ab", "ba"] if self.rubric.mode != "pointwise" and self.spec.swap else ["ab"]
        )
        return [(o, s) for o in orders for s in range(self.spec.samples)]

    def prepare(
        self,
        trajectory: Trajectory,
        *,
        other: Trajectory | None = None,
        other_expected: bool = False,
        order: Order = "ab",
        samples: Sequence[int] = (0,),
        rendered: dict[tuple[str, int], Prompt] | None = None,
    ) -> list[PreparedCall]:
        """The calls for ``trajectory`` (with ``other``) in ``order``, one per sample.

        The prompt is rendered once for all samples; ``rendered`` (prompts of the same
        trajectories in the same order, by rubric version and budget) lets judges that share
        a rubric share it too. Starts the judge's client first (the embedded server, for a
        ``local/`` model) since the cache key names its endpoint.
        """
        rubric = self.rubric
        if rubric.mode == "pointwise":
            if other is not None or order != "ab":
                raise ValueError("a pointwise judgment has no other trajectory and order 'ab'")
            shown = [Shown(trajectory)]
        else:
            if other is None:
                raise ValueError(f"a {rubric.mode} judgment needs the other trajectory")
            pair = [Shown(trajectory), Shown(other, expected=other_expected)]
            shown = pair if order == "ab" else pair[::-1]
        client = self.client()
        memo = (self.rubric_version, self._budget)
        prompt = None if rendered is None else rendered.get(memo)
        if prompt is None:
            prompt = build_prompt(rubric, shown, budget_tokens=self._budget)
            if rendered is not None:
                rendered[memo] = prompt
        ids = tuple(s.trajectory.id for s in shown)
        other_id = None if other is None else other.id
        error = None
        if prompt.est_tokens > self._budget:
            error = (
                f"prompt of ~{prompt.est_tokens} tokens exceeds the budget of {self._budget} "
                "even with outputs and steps elided"
            )
        calls = []
        for sample in samples:
            params: dict[str, Any] = {
                "temperature": self.spec.temperature,
                "max_tokens": self.spec.max_tokens,
            }
            if self.spec.seed is not None:
                params["seed"] = self.spec.seed + sample
            if self.spec.logprobs:
                params["logprobs"] = True
                params["top_logprobs"] = TOP_LOGPROBS
            key = None
            if error is None:
                extra = {"judge_config": self.config_sha256, "sample": sample, "order": order}
                key = client.request_key(prompt.messages, self.verdict_model, params, extra)
            calls.append(
                PreparedCall(
                    self,
                    trajectory.id,
                    other_id,
                    order,
                    sample,
                    ids,
                    prompt.messages,
                    params,
                    key,
                    error,
                )
            )
        return calls

    async def call(self, prepared: PreparedCall) -> CallResult:
        """Ask the model for ``prepared`` (never the cache): the client's limits and retries."""
        if prepared.key is None:
            raise ValueError(f"no request can be made: {prepared.error}")
        return await self.client().call(
            prepared.key, prepared.messages, self.verdict_model, prepared.params
        )

    async def ajudge_one(
        self,
        trajectory: Trajectory,
        *,
        other: Trajectory | None = None,
        other_expected: bool = False,
        order: Order = "ab",
        sample: int = 0,
    ) -> Judgment:
        """One call: ``trajectory`` (with ``other`` in pairwise/reference mode) in ``order``.

        Never raises for an LLM failure: the judgment comes back with ``error`` set.
        """
        if self._client is None:
            await asyncio.to_thread(self.client)
        [prepared] = self.prepare(
            trajectory, other=other, other_expected=other_expected, order=order, samples=[sample]
        )
        if prepared.key is None:
            return finish(prepared, None)
        hit = self.cache.get(prepared.key) if self.cache is not None else None
        if hit is not None:
            return finish(prepared, CallResult.from_cache(prepared.key, hit))
        result = await self.call(prepared)
        entry = result.cache_entry()
        if entry is not None and self.cache is not None:
            self.cache.put(prepared.key, self.client().model, entry)
        return finish(prepared, result)

    async def ajudge(
        self,
        trajectory: Trajectory,
        *,
        other: Trajectory | None = None,
        other_expected: bool = False,
    ) -> JudgeResult:
        """Every call the judge's plan needs for one item (orders x samples), aggregated."""
        judgments = await asyncio.gather(
            *(
                self.ajudge_one(
                    trajectory, other=other, other_expected=other_expected, order=o, sample=s
                )
                for o, s in self.plan()
            )
        )
        return JudgeResult(list(judgments), aggregate_judgments(judgments, self.rubric))

    def judge(
        self,
        trajectory: Trajectory,
        *,
        other: Trajectory | None = None,
        other_expected: bool = False,
    ) -> JudgeResult:
        """Sync wrapper of :meth:`ajudge`."""
        return run_sync(self.ajudge(trajectory, other=other, other_expected=other_expected))


@dataclass(frozen=True)
class JudgeResult:
    judgments: list[Judgment]
    aggregate: Aggregate


def build_judges(
    specs: Sequence[JudgeSpec],
    *,
    rubric_dirs: Sequence[str] = (),
    cache: ResponseCache | None = None,
) -> list[Judge]:
    """Judges for ``specs`` (loading their rubrics); judge names must be unique."""
    seen: set[str] = set()
    judges = []
    for spec in specs:
        if spec.name in seen:
            raise InputError("judges", field=spec.name, reason="duplicate judge name")
        seen.add(spec.name)
        judges.append(Judge(spec, rubric_dirs=rubric_dirs, cache=cache))
    return judges


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
