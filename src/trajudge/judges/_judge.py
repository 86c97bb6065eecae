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

from trajudge.judges._aggregate import Aggregate, aggregate_judgments
from trajudge.judges._cache import ResponseCache, request_key
from trajudge.judges._client import CallResult, LLMClient, choose_mode
from trajudge.judges._judgment import Judgment, Order
from trajudge.judges._local import (
    DEFAULT_N_CTX,
    DEFAULT_N_PARALLEL,
    LOCAL_PREFIX,
    shared_local_server,
)
from trajudge.judges._prompt import SYSTEM_PROMPT, Shown, build_prompt, default_template
from trajudge.judges._rubric import Rubric, load_rubric
from trajudge.judges._spec import JudgeSpec, reasoning_cap
from trajudge.judges._verdict import response_schema, verdict_model
from trajudge.trajectories import InputError, Trajectory

T = TypeVar("T")

_SWAP = {"A": "B", "B": "A", "tie": "tie"}


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
                    f"judge {spec.name}", None, field, f"environment variable {env} is not set"
                )
        self._client: LLMClient | None = None
        self._client_lock = threading.Lock()
        self._set_budget(spec.prompt_budget or self._default_budget(DEFAULT_N_CTX))

    def _default_budget(self, n_ctx: int, n_parallel: int = DEFAULT_N_PARALLEL) -> int:
        if self.is_local:  # the server's slot, less the verdict and the chat template
            return max(256, n_ctx // max(1, n_parallel) - self.spec.max_tokens - 128)
        return 12000

    def _set_budget(self, budget: int) -> None:
        self._budget = budget
        self.config = self._make_config()
        self.config_sha256 = request_key(self.config)
        self.config_json = json.dumps(self.config, sort_keys=True, ensure_ascii=False)

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
            },
            "rubric": {"id": rubric.id, "version": rubric.version},
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
                    if spec.prompt_budget is None:  # a shared server started with other sizes
                        budget = self._default_budget(server.n_ctx, server.n_parallel)
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
                )
            return self._client

    def plan(self) -> list[tuple[Order, int]]:
        """The (order, sample) calls one item needs."""
        orders: list[Order] = (
            ["ab", "ba"] if self.rubric.mode != "pointwise" and self.spec.swap else ["ab"]
        )
        return [(o, s) for o in orders for s in range(self.spec.samples)]

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
        client = await asyncio.to_thread(self.client) if self._client is None else self._client
        prompt = build_prompt(rubric, shown, budget_tokens=self._budget)
        base = Judgment(
            trajectory_id=trajectory.id,
            other_id=None if other is None else other.id,
            judge=self.name,
            rubric_id=rubric.id,
            rubric_version=rubric.version,
            model=self.spec.model,
            mode=rubric.mode,
            order=order,
            sample=sample,
            config_sha256=self.config_sha256,
            judge_config=self.config_json,
        )
        if prompt.est_tokens > self._budget:
            base.error = (
                f"prompt of ~{prompt.est_tokens} tokens exceeds the budget of {self._budget} "
                "even with outputs and steps elided"
            )
            return base
        params: dict[str, Any] = {
            "temperature": self.spec.temperature,
            "max_tokens": self.spec.max_tokens,
        }
        if self.spec.seed is not None:
            params["seed"] = self.spec.seed + sample
        extra = {"judge_config": self.config_sha256, "sample": sample, "order": order}
        result = await client.complete(prompt.messages, self.verdict_model, params, extra)
        base.request_sha256 = result.request_sha256
        base.prompt_tokens = result.prompt_tokens
        base.completion_tokens = result.completion_tokens
        base.cost_usd = result.cost_usd
        base.latency_s = result.latency_s
        base.cache_hit = result.cache_hit
        if result.error is not None or result.verdict is None:
            base.error = self._error_text(result)
            return base
        self._apply(base, result.verdict, order)
        base.raw = json.dumps(
            {
                "order": order,
                "shown": [s.trajectory.id for s in shown],
                "verdict": result.verdict,
                "other_score": base.other_score,
                "content": result.content,
            },
            ensure_ascii=False,
            sort_keys=True,
        )
        return base

    def _error_text(self, result: CallResult) -> str:
        """The stored error; a timeout or a cut verdict names the setting to raise."""
        where = f"of judge {self.name!r} in trajudge.yaml"
        if result.timed_out:
            return (
                f"timed out after {self.spec.timeout:g} s ({result.attempts} attempt(s)): "
                f"raise `timeout:` {where} or --timeout. {result.error}"
            )
        if result.error is not None and result.truncated:
            return (
                f"the verdict did not fit in max_tokens={self.spec.max_tokens} "
                f"({result.attempts} attempt(s)): raise `max_tokens:` {where} or --max-tokens. "
                f"{result.error}"
            )
        return result.error or "no verdict"

    def _apply(self, j: Judgment, v: dict[str, Any], order: Order) -> None:
        scale = self.rubric.scale
        j.reasoning = str(v.get("reasoning", ""))
        if self.rubric.mode == "pairwise":
            # the original numbering: A = ``trajectory``, whichever side it was shown on
            def back(x: Any) -> str:
                return str(x) if order == "ab" else _SWAP[str(x)]

            j.verdict = back(v["verdict"])
            crit = v.get("criteria")
            j.criteria = {k: back(x) for k, x in crit.items()} if crit else None
            return
        if scale.categorical:  # pointwise on a nominal scale
            j.verdict = str(v["verdict"])
            crit = v.get("criteria")
            j.criteria = {k: str(x) for k, x in crit.items()} if crit else None
            return
        if self.rubric.mode == "pointwise":
            j.score = float(v["score"])
            crit = v.get("criteria")
            j.criteria = {k: float(x) for k, x in crit.items()} if crit else None
        else:
            mine, theirs = ("a", "b") if order == "ab" else ("b", "a")
            j.score = float(v[f"score_{mine}"])
            j.other_score = float(v[f"score_{theirs}"])
            crit = v.get(f"criteria_{mine}")
            j.criteria = {k: float(x) for k, x in crit.items()} if crit else None
        j.verdict = "pass" if scale.passed(j.score) else "fail"

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
            raise InputError("judges", None, spec.name, "duplicate judge name")
        seen.add(spec.name)
        judges.append(Judge(spec, rubric_dirs=rubric_dirs, cache=cache))
    return judges


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
