"""The censuses of trajudge's own formats and of the benchmark and agent files: what a native,
τ-bench, τ²-bench, SWE-agent, OpenHands or Inspect file holds.

Each walks the raw JSON on its own, apart from the reader that builds trajectories from it (see
:mod:`trajudge.trajectories._census`), and never raises on a bad shape: the reader names what
is wrong. A call counts as failed when the format marks its result as an error, or when no
result answers it.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from trajudge.core import INPUT_JSON, loads_input
from trajudge.trajectories._census import Held
from trajudge.trajectories._io import read_whole
from trajudge.trajectories._options import as_count, as_dict
from trajudge.trajectories.readers.chat._census_chat import census_openai


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _native(t: dict[str, Any], held: Held) -> None:
    steps = _list(t.get("steps"))
    held.tool_calls += len(steps)
    held.failed_calls += sum(1 for s in steps if isinstance(s, dict) and s.get("ok") is False)
    held.user_messages += sum(
        1 for m in _list(t.get("messages")) if isinstance(m, dict) and m.get("role") == "user"
    )
    usage = as_dict(t.get("usage"))
    held.add_tokens(as_count(usage.get("prompt_tokens")), as_count(usage.get("completion_tokens")))


def census_jsonl(label: str, value: Any, held: Held) -> None:
    """Census of trajudge's JSON Lines: each record is a trajectory as written."""
    if isinstance(value, dict):
        _native(value, held)


def census_parquet(path: Path, held: Held) -> None:
    """Census of trajudge's Parquet: the JSON columns of each row, read apart from the
    reader's row validation."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as f:
        for batch in f.iter_batches(columns=["steps", "messages", "usage"], batch_size=1024):
            cols = batch.to_pydict()
            for steps, messages, usage in zip(
                cols["steps"], cols["messages"], cols["usage"], strict=True
            ):
                _native(
                    {
                        "steps": INPUT_JSON.decode(steps) if steps else [],
                        "messages": INPUT_JSON.decode(messages) if messages else [],
                        "usage": INPUT_JSON.decode(usage) if usage else {},
                    },
                    held,
                )


def census_tau_bench(label: str, value: Any, held: Held) -> None:
    """Census of a τ-bench result: each record's ``traj`` is one chat conversation."""
    traj = as_dict(value).get("traj")
    if isinstance(traj, list):
        census_openai(label, traj, held)


def census_tau2_bench(label: str, value: Any, held: Held) -> None:
    """Census of a τ²-bench results file: the agent's calls only (the user simulator's are
    kept apart, in metadata), the agent's tokens only, every user message."""
    for sim in _list(as_dict(value).get("simulations")):
        flat: list[Any] = []
        for m in _list(as_dict(sim).get("messages")):
            flat += (
                _list(m.get("tool_messages"))
                if isinstance(m, dict) and "tool_messages" in m
                else [m]
            )
        open_ids: dict[str, int] = {}
        for m in flat:
            if not isinstance(m, dict):
                continue
            role = m.get("role")
            if role == "user":
                held.user_messages += 1
            if role == "assistant":
                usage = as_dict(m.get("usage"))
                held.add_tokens(
                    as_count(usage.get("prompt_tokens")), as_count(usage.get("completion_tokens"))
                )
            if role in ("user", "assistant"):
                for call in _list(m.get("tool_calls")):
                    if isinstance(call, dict) and (call.get("requestor") or role) != "user":
                        held.tool_calls += 1
                        key = str(call.get("id") or "")
                        open_ids[key] = open_ids.get(key, 0) + 1
            elif role == "tool" and m.get("requestor") != "user":
                key = str(m.get("id") or "")
                if key and open_ids.get(key):
                    open_ids[key] -= 1
                    held.failed_calls += 1 if m.get("error") else 0
        held.failed_calls += sum(open_ids.values())


def census_swe_agent(label: str, value: Any, held: Held) -> None:
    """Census of a SWE-agent ``.traj``: ``trajectory`` entries are the calls (each with its
    observation); without it, the assistant messages of ``history`` make them."""
    doc = as_dict(value)
    held.user_messages += 1  # the task (SWE-agent's observations come back as user turns)
    stats = as_dict(as_dict(doc.get("info")).get("model_stats"))
    held.add_tokens(as_count(stats.get("tokens_sent")), as_count(stats.get("tokens_received")))
    if isinstance(doc.get("trajectory"), list):
        held.tool_calls += len(doc["trajectory"])
        return
    pending: list[str | None] = []  # the calls of the last assistant message not yet answered
    ids: dict[str, int] = {}
    task_seen = False
    for h in _list(doc.get("history")):
        if not isinstance(h, dict) or h.get("is_demo") or h.get("role") == "system":
            continue
        if h.get("role") == "user" and not task_seen:
            task_seen = True
            continue
        if h.get("role") == "assistant":
            pending = []
            for c in _list(h.get("tool_calls")):
                call_id = c.get("id") if isinstance(c, dict) else None
                pending.append(call_id if isinstance(call_id, str) else None)
                if isinstance(call_id, str):
                    ids[call_id] = ids.get(call_id, 0) + 1
            action = h.get("action")
            if not pending and isinstance(action, str) and action.strip():
                pending.append(None)
            held.tool_calls += len(pending)
            held.failed_calls += len(pending)  # until an observation answers
            continue
        named = [str(c) for c in _list(h.get("tool_call_ids")) if ids.get(str(c))]
        if named:
            for c in named:
                ids[c] -= 1
                if c in pending:
                    pending.remove(c)
                held.failed_calls -= 1
        elif pending:
            c = pending.pop(0)
            if c is not None:
                ids[c] -= 1
            held.failed_calls -= 1


def census_openhands(label: str, value: Any, held: Held) -> None:
    """Census of an OpenHands trajectory, either generation: each agent action that is not a
    message, a thought, the finish or bookkeeping is a call; an ``error`` observation (SDK:
    ``is_error``, an agent error, a rejection) fails it, as does no observation at all."""
    events = value if isinstance(value, list) else [value]
    for e in events:
        if not isinstance(e, dict):
            continue
        if isinstance(e.get("kind"), str):
            _openhands_sdk(e, held)
        else:
            _openhands_v0(e, held)


_V0_NOT_CALLS = {
    "system",
    "message",
    "think",
    "finish",
    "agent_state_changed",
    "null",
    "change_agent_state",
    "recall",
}


def _openhands_v0(e: dict[str, Any], held: Held) -> None:
    s = held.scratch
    open_events: set[Any] = s.setdefault("open", set())
    if not s.get("hooked"):
        s["hooked"] = True
        held.finish.append(_openhands_v0_finish)
    metrics = e.get("llm_metrics")
    if isinstance(metrics, dict):
        usage = as_dict(metrics.get("accumulated_token_usage"))
        s["metrics"] = (
            as_count(usage.get("prompt_tokens")),
            as_count(usage.get("completion_tokens")),
        )
    response = as_dict(as_dict(e.get("tool_call_metadata")).get("model_response"))
    if "action" in e and as_dict(response.get("usage")):
        rid = str(response.get("id") or f"event {e.get('id')}")
        usage = as_dict(response["usage"])
        s.setdefault("responses", {}).setdefault(
            rid, (as_count(usage.get("prompt_tokens")), as_count(usage.get("completion_tokens")))
        )
    if "action" in e:
        action = str(e["action"])
        if action == "message" and e.get("source") == "user":
            held.user_messages += 1
        if action not in _V0_NOT_CALLS:
            held.tool_calls += 1
            open_events.add(e.get("id"))
            s.setdefault("call_ids", {})[e.get("id")] = as_dict(e.get("tool_call_metadata")).get(
                "tool_call_id"
            )
    elif "observation" in e:
        cause = e.get("cause")
        if cause not in open_events:
            call_id = as_dict(e.get("tool_call_metadata")).get("tool_call_id")
            cause = (
                next(
                    (
                        k
                        for k, v in s.get("call_ids", {}).items()
                        if k in open_events and v == call_id
                    ),
                    None,
                )
                if call_id
                else None
            )
        if cause in open_events:
            open_events.discard(cause)
            held.failed_calls += 1 if str(e["observation"]) == "error" else 0


def _openhands_v0_finish(held: Held) -> None:
    s = held.scratch
    held.failed_calls += len(s.get("open", ()))
    if "metrics" in s:
        held.add_tokens(*s["metrics"])
    elif s.get("responses"):
        for prompt, completion in s["responses"].values():
            held.add_tokens(prompt, completion)


def _openhands_sdk(e: dict[str, Any], held: Held) -> None:
    s = held.scratch
    if not s.get("hooked"):
        s["hooked"] = True
        held.finish.append(lambda h: setattr(h, "failed_calls", h.failed_calls + len(s["sdk"])))
    calls: list[tuple[Any, Any]] = s.setdefault("sdk", [])  # open (call id, tool name)
    k = e["kind"]
    if k == "MessageEvent":
        msg = as_dict(e.get("llm_message"))
        role = msg.get("role") or ("user" if e.get("source") == "user" else "assistant")
        held.user_messages += 1 if role == "user" else 0
    elif k == "ActionEvent":
        held.tool_calls += 1
        calls.append((e.get("tool_call_id"), e.get("tool_name")))
    elif k in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
        key = e.get("tool_call_id")
        at = next(
            (
                i
                for i, c in enumerate(calls)
                if (c[0] == key if key else c[1] == e.get("tool_name"))
            ),
            None,
        )
        if at is None:
            return
        calls.pop(at)
        if k != "ObservationEvent" or as_dict(e.get("observation")).get("is_error"):
            held.failed_calls += 1


def census_inspect(path: Path, held: Held) -> None:
    """Census of an Inspect log, from its raw JSON (a ``.json`` log, or the sample members of
    an ``.eval`` zip), apart from ``inspect_ai``'s reader: run after the reader has read the
    file (and checked the zip's sizes)."""
    samples: list[Any] = []
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if name.startswith("samples/") and name.endswith(".json"):
                    samples.append(loads_input(z.read(name)))
    else:
        samples = _list(as_dict(loads_input(read_whole(path))).get("samples"))
    for sample in samples:
        open_ids: dict[str, int] = {}
        for m in _list(as_dict(sample).get("messages")):
            if not isinstance(m, dict):
                continue
            role = m.get("role")
            if role == "user":
                held.user_messages += 1
            elif role == "assistant":
                for c in _list(m.get("tool_calls")):
                    held.tool_calls += 1
                    if isinstance(c, dict) and c.get("parse_error"):
                        held.failed_calls += 1
                    elif isinstance(c, dict):
                        key = str(c.get("id"))
                        open_ids[key] = open_ids.get(key, 0) + 1
            elif role == "tool":
                key = str(m.get("tool_call_id"))
                if open_ids.get(key):
                    open_ids[key] -= 1
                    held.failed_calls += 1 if m.get("error") else 0
        held.failed_calls += sum(open_ids.values())
        for usage in as_dict(as_dict(sample).get("model_usage")).values():
            u = as_dict(usage)
            held.add_tokens(as_count(u.get("input_tokens")), as_count(u.get("output_tokens")))
