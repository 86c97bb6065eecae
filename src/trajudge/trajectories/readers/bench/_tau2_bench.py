"""Import τ²-bench result files (``{"info", "tasks": [...], "simulations": [...]}``).

Each simulation becomes one trajectory (``--format tau2-bench``):

* ``id`` = the simulation's ``id`` (else ``f"{task_id}-{trial}"``), ``task_id`` and ``trial``
  as given;
* ``messages``: system, user, assistant and tool turns in order. Tool calls carry a
  ``requestor``: only the agent's (``requestor: "assistant"``) are steps. The user simulator's
  own tool calls (``requestor: "user"``, e.g. toggling airplane mode in the telecom domain) and
  their results are not the agent's actions: they are kept in ``metadata.user_tool_calls``
  (name, arguments, output, error), never as steps. A tool result with ``error: true`` makes
  its step failed. ``MultiToolMessage`` entries are read as their tool messages in order;
* ``outcome`` = τ²-bench's own success test on ``reward_info.reward``
  (``1 - 1e-6 <= reward <= 1 + 1e-6``); a simulation that ended in an
  ``infrastructure_error``, or has no ``reward_info``, gets ``outcome = None`` — τ²-bench leaves
  those out of its metrics, and so does trajudge's pass^k;
* ``usage``: the AGENT's only: prompt / completion tokens summed over the assistant messages'
  ``usage``, ``cost_usd`` = ``agent_cost`` (else the assistant messages' ``cost`` summed),
  ``latency_s`` = ``duration``. ``user_cost`` (the user simulator's) goes to metadata;
* ``metadata``: ``termination_reason``, ``reward``, ``agent_cost``, ``user_cost``, ``seed``,
  ``domain`` and ``policy`` (the agent policy from ``info.environment_info``, which judges see
  as context), ``source_file``.

Each task's ``evaluation_criteria.actions`` whose ``requestor`` is the assistant (the default)
becomes a :class:`TaskSpec` ``reference`` with ``match_mode="in_order"``; ``intent`` = their
sorted unique names joined with ``+`` (``"no_write"`` when none).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from trajudge.core import InputError
from trajudge.trajectories._io import Record, check_unique, kind, validate, validation_error
from trajudge.trajectories._models import Trajectory, Usage
from trajudge.trajectories._options import Ignored, as_count
from trajudge.trajectories._spec import ExpectedCall, TaskSpec
from trajudge.trajectories.readers._conversation import Conversation

SUCCESS_TOLERANCE = 1e-6
INFRASTRUCTURE_ERROR = "infrastructure_error"
NO_WRITE = "no_write"


def _text_id(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class _Action(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    requestor: str = "assistant"


class _Criteria(BaseModel):
    model_config = ConfigDict(extra="allow")

    actions: list[_Action] | None = None


class _Task(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1)
    evaluation_criteria: _Criteria | None = None

    _id = field_validator("id", mode="before")(_text_id)


class _RewardInfo(BaseModel):
    model_config = ConfigDict(extra="allow")

    reward: float


class _Simulation(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    task_id: str = Field(min_length=1)
    trial: int | None = Field(default=None, ge=0)
    messages: list[Any] = Field(default_factory=list)
    reward_info: _RewardInfo | None = None
    termination_reason: str | None = None
    agent_cost: float | None = None
    user_cost: float | None = None
    duration: float | None = None
    seed: int | None = None

    _task_id = field_validator("task_id", mode="before")(_text_id)


class Tau2Results(BaseModel):
    """The parts of a τ²-bench ``Results`` file that trajudge reads."""

    model_config = ConfigDict(extra="allow")

    info: dict[str, Any] = Field(default_factory=dict)
    tasks: list[_Task] = Field(default_factory=list)
    simulations: list[Any]


def is_tau2_results(obj: Any) -> bool:
    return isinstance(obj, dict) and "simulations" in obj and "tasks" in obj


def _messages(
    sim: _Simulation, file: str, label: str, where: str, ignored: Ignored
) -> tuple[Conversation, list[dict[str, Any]], list[int | None], float | None]:
    conv = Conversation()
    user_calls: list[dict[str, Any]] = []
    user_pending: dict[str, list[int]] = {}
    tokens: list[int | None] = [None, None]
    cost: float | None = None
    flat: list[tuple[str, Any]] = []
    for i, m in enumerate(sim.messages):
        if isinstance(m, dict) and isinstance(m.get("tool_messages"), list):
            flat += [
                (f"{where}[{i}].tool_messages[{j}]", t) for j, t in enumerate(m["tool_messages"])
            ]
        else:
            flat.append((f"{where}[{i}]", m))
    for at, m in flat:
        if not isinstance(m, dict):
            raise InputError(
                file, record=label, field=at, reason=f"expected an object, got {kind(m)}"
            )
        role = m.get("role")
        content = m.get("content")
        text = content if isinstance(content, str) else None
        if role == "system":
            conv.say("system", text)
        elif role in ("user", "assistant"):
            conv.say(role, text)
            if role == "assistant":
                usage = m.get("usage") or {}
                for j, key in enumerate(("prompt_tokens", "completion_tokens")):
                    value = as_count(usage.get(key))
                    if value is not None:
                        tokens[j] = (tokens[j] or 0) + value
                if isinstance(m.get("cost"), int | float):
                    cost = (cost or 0.0) + float(m["cost"])
            for j, call in enumerate(m.get("tool_calls") or []):
                if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                    raise InputError(
                        file, record=label, field=f"{at}.tool_calls[{j}].name", reason="missing"
                    )
                args = call.get("arguments") or {}
                if not isinstance(args, dict):
                    raise InputError(
                        file,
                        record=label,
                        field=f"{at}.tool_calls[{j}].arguments",
                        reason=f"expected an object, got {kind(args)}",
                    )
                requestor = call.get("requestor") or role
                call_id = str(call.get("id") or "") or None
                if requestor == "user":
                    user_calls.append({"name": call["name"], "arguments": args, "id": call_id})
                    user_pending.setdefault(call_id or call["name"], []).append(len(user_calls) - 1)
                else:
                    conv.call(call["name"], args, call_id)
        elif role == "tool":
            call_id = str(m.get("id") or "") or None
            failed = bool(m.get("error"))
            if m.get("requestor") == "user":
                queue = user_pending.get(call_id or "", [])
                if queue:
                    entry = user_calls[queue.pop(0)]
                    entry["output" if not failed else "error"] = text
                    continue
                ignored.add(
                    "user tool result answering no call",
                    "user tool results answering no call",
                    f"{label}: {at}",
                )
                continue
            n = conv.pending(call_id=call_id) if call_id else None
            if n is None:
                ignored.add(
                    "tool result answering no call",
                    "tool results answering no call",
                    f"{label}: {at}",
                )
                conv.result(None, text)
                continue
            conv.result(n, text or "", ok=not failed)
        else:
            ignored.add(
                "message of an unknown role", "messages of unknown roles", f"{label}: {at} ({role})"
            )
    conv.finish()
    return conv, user_calls, tokens, cost


def tau2_from_records(
    path: Path, records: list[Record], ignored: Ignored
) -> tuple[list[tuple[str, Trajectory]], dict[str, TaskSpec]]:
    file = str(path)
    if len(records) != 1:
        raise InputError(
            file, record=records[1][0], reason="a τ²-bench results file is one JSON object"
        )
    label, obj = records[0]
    results = validate(Tau2Results, obj, file, label)
    specs: dict[str, TaskSpec] = {}
    intents: dict[str, str] = {}
    for i, task in enumerate(results.tasks):
        actions = (
            [a for a in (task.evaluation_criteria.actions or []) if a.requestor != "user"]
            if task.evaluation_criteria
            else []
        )
        if task.id in specs:
            raise InputError(
                file, record=f"tasks[{i}]", field="id", reason=f"duplicate task id {task.id!r}"
            )
        specs[task.id] = TaskSpec(
            task_id=task.id,
            reference=[ExpectedCall(tool=a.name, args=a.arguments) for a in actions],
            match_mode="in_order",
        )
        names = sorted({a.name for a in actions})
        intents[task.id] = "+".join(names) if names else NO_WRITE
    env = results.info.get("environment_info") if isinstance(results.info, dict) else None
    env = env if isinstance(env, dict) else {}
    items: list[tuple[str, Trajectory]] = []
    trials: dict[str, int] = {}
    for i, raw in enumerate(results.simulations):
        where = f"simulations[{i}]"
        sim = validate(_Simulation, raw, file, label, where)
        trial = sim.trial if sim.trial is not None else trials.get(sim.task_id, 0)
        trials[sim.task_id] = trial + 1
        conv, user_calls, tokens, msg_cost = _messages(
            sim, file, label, f"{where}.messages", ignored
        )
        infra = sim.termination_reason == INFRASTRUCTURE_ERROR
        reward = None if sim.reward_info is None else sim.reward_info.reward
        outcome = (
            None
            if infra or reward is None
            else (1 - SUCCESS_TOLERANCE) <= reward <= (1 + SUCCESS_TOLERANCE)
        )
        metadata: dict[str, Any] = {
            "termination_reason": sim.termination_reason,
            "reward": reward,
            "agent_cost": sim.agent_cost,
            "user_cost": sim.user_cost,
            "seed": sim.seed,
            "domain": env.get("domain_name"),
            "policy": env.get("policy"),
            "source_file": path.name,
        }
        if user_calls:
            metadata["user_tool_calls"] = user_calls
        cost = sim.agent_cost if sim.agent_cost is not None else msg_cost
        try:
            t = Trajectory(
                id=sim.id or f"{sim.task_id}-{trial}",
                task_id=sim.task_id,
                trial=trial,
                input=conv.first_user,
                messages=conv.messages,
                steps=conv.steps,
                final_answer=conv.final_answer,
                outcome=outcome,
                usage=Usage(
                    prompt_tokens=tokens[0],
                    completion_tokens=tokens[1],
                    cost_usd=cost,
                    latency_s=sim.duration,
                    turns=conv.user_turns,
                ),
                intent=intents.get(sim.task_id),
                metadata={k: v for k, v in metadata.items() if v is not None},
            )
        except ValidationError as exc:
            raise validation_error(file, label, exc, where) from None
        items.append((f"{label}: {where}", t))
    if not items:
        raise InputError(file, record=label, field="simulations", reason="no simulations found")
    check_unique(file, items)
    return items, {tid: s for tid, s in specs.items() if tid in trials}
