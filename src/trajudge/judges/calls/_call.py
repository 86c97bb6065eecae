"""One judge call in three steps: prepare (prompt and cache key), call, finish (the judgment).

:meth:`trajudge.judges.Judge.prepare` renders the prompt of one (trajectory, other, order)
ONCE and returns a :class:`PreparedCall` per sample: the request (messages and parameters),
its cache key (``request_sha256``) and the key of the judgment it fills. The model is asked
with :meth:`trajudge.judges.Judge.call` (the judge's client: its concurrency, rate limit and
retries; never the cache), and :func:`finish` turns the outcome (a call's result or a cache
hit) into the :class:`Judgment`. ``Judge.ajudge_one`` chains the three for one call; the
batch runner prepares many, looks their keys up in the cache at once, and sends only the
misses to an engine. Both give the same judgment for the same call.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trajudge.judges.calls._judgment import Judgment, Order
from trajudge.judges.calls._logprobs import expected_score
from trajudge.judges.calls._result import CallResult
from trajudge.rubrics._kinds import SWAP

if TYPE_CHECKING:
    from trajudge.judges.calls._judge import Judge

_log = logging.getLogger("trajudge.judges")


@dataclass(frozen=True, eq=False)
class PreparedCall:
    """A judge call ready to send (samples of one prompt share ``messages``).

    ``key`` is the request's cache key (stored as ``request_sha256``); ``error`` is set, and
    ``key`` None, when no request can be made (the prompt exceeds the budget even with
    outputs and steps elided): such a call is finished at once as an error.
    """

    judge: Judge
    trajectory_id: str
    other_id: str | None
    order: Order
    sample: int
    shown: tuple[str, ...]
    messages: list[dict[str, str]]
    params: dict[str, Any]
    key: str | None
    error: str | None = None
    #: the input key (:func:`trajudge.judges.prompts._inputs.input_key`) the answer is also
    #: filed under
    input_key: str | None = None

    @property
    def judgment_key(self) -> tuple[Any, ...]:
        """The store's judgment key (see ``Store.judgment_keys``)."""
        j = self.judge
        return (
            self.trajectory_id,
            self.other_id,
            j.name,
            j.config_sha256,
            j.rubric_version,
            self.order,
            self.sample,
        )


def finish(call: PreparedCall, result: CallResult | None) -> Judgment:
    """The judgment of ``call`` given its outcome (None for a call that could not be made)."""
    judge = call.judge
    rubric = judge.rubric
    j = Judgment(
        trajectory_id=call.trajectory_id,
        other_id=call.other_id,
        judge=judge.name,
        rubric_id=rubric.id,
        rubric_version=judge.rubric_version,
        model=judge.spec.model,
        mode=rubric.mode,
        order=call.order,
        sample=call.sample,
        config_sha256=judge.config_sha256,
        judge_config=judge.config_json,
    )
    if result is None:
        j.error = call.error or "no request was made"
        return j
    j.request_sha256 = result.request_sha256
    j.prompt_tokens = result.prompt_tokens
    j.completion_tokens = result.completion_tokens
    j.cost_usd = result.cost_usd
    j.latency_s = result.latency_s
    j.cache_hit = result.cache_hit
    if result.error is not None or result.verdict is None:
        j.error = error_text(judge, result)
        return j
    invalid = schema_error(judge, result.verdict)
    if invalid is not None:  # whatever engine produced it: a worker, a batch file, a cache
        j.error = invalid
        return j
    apply_verdict(judge, j, result.verdict, call.order)
    apply_probs(judge, j, result.probs, call.order)
    j.raw = json.dumps(
        {
            "order": call.order,
            "shown": list(call.shown),
            "verdict": result.verdict,
            "other_score": j.other_score,
            "content": result.content,
        },
        ensure_ascii=False,
        sort_keys=True,
    )
    return j


def schema_error(judge: Judge, verdict: Any) -> str | None:
    """Why ``verdict`` does not fit the rubric's verdict model (a score of 999 on a 1..5
    scale, a missing field, a non-object), or None when it does: such a verdict is stored
    as an error, never as a pass or a fail."""
    from pydantic import ValidationError

    try:
        judge.verdict_model.model_validate(verdict)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(verdict)'}: {e['msg']}"
            for e in exc.errors()[:3]
        )
        got = json.dumps(verdict, default=str)[:200]
        return f"the verdict does not fit rubric {judge.rubric.id!r}: {problems} (got {got})"
    return None


def error_text(judge: Judge, result: CallResult) -> str:
    """The stored error; a timeout or a cut verdict names the setting to raise."""
    where = f"of judge {judge.name!r} in trajudge.yaml"
    if result.timed_out:
        return (
            f"timed out after {judge.spec.timeout:g} s ({result.attempts} attempt(s)): "
            f"raise `timeout:` {where} or --timeout. {result.error}"
        )
    if result.error is not None and result.truncated:
        return (
            f"the verdict did not fit in max_tokens={judge.spec.max_tokens} "
            f"({result.attempts} attempt(s)): raise `max_tokens:` {where} or --max-tokens. "
            f"{result.error}"
        )
    return result.error or "no verdict"


def apply_probs(
    judge: Judge, j: Judgment, probs: dict[str, dict[str, float]] | None, order: Order
) -> None:
    """Fill ``score_probs`` and ``expected_score`` from the verdict fields' value
    probabilities (``trajectory_id``'s slot, categories mapped back like the verdict); say
    once per judge when it asked for log-probabilities and got none."""
    if not judge.spec.logprobs:
        return
    rubric = judge.rubric
    if rubric.mode == "reference":
        field = "score_a" if order == "ab" else "score_b"
    elif rubric.mode == "pairwise" or rubric.scale.categorical:
        field = "verdict"
    else:
        field = "score"
    found = (probs or {}).get(field)
    if found is None:
        if not judge.warned_no_logprobs:
            judge.warned_no_logprobs = True
            _log.warning(
                "judge %r asked for token log-probabilities but %s returned none: its "
                "judgments have no score probabilities or expected score",
                judge.name,
                judge.spec.model,
            )
        return
    if rubric.mode == "pairwise" and order == "ba":
        found = {SWAP.get(k, k): p for k, p in found.items()}
    j.score_probs = dict(found)
    if rubric.mode != "pairwise" and not rubric.scale.categorical:
        j.expected_score = expected_score(found)


def apply_verdict(judge: Judge, j: Judgment, v: dict[str, Any], order: Order) -> None:
    """Fill score, verdict, reasoning and criteria from the validated verdict ``v``, mapped
    back to ``j.trajectory_id``'s side when it was shown second."""
    rubric = judge.rubric
    scale = rubric.scale
    j.reasoning = str(v.get("reasoning", ""))
    if rubric.mode == "pairwise":
        # the original numbering: A = ``trajectory``, whichever side it was shown on
        def back(x: Any) -> str:
            return str(x) if order == "ab" else SWAP[str(x)]

        j.verdict = back(v["verdict"])
        crit = v.get("criteria")
        j.criteria = {k: back(x) for k, x in crit.items()} if crit else None
        return
    if scale.categorical:  # pointwise on a nominal scale
        j.verdict = str(v["verdict"])
        crit = v.get("criteria")
        j.criteria = {k: str(x) for k, x in crit.items()} if crit else None
        return
    if rubric.mode == "pointwise":
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
