"""Import OpenAI Responses API items, as openai-agents' ``RunResult.to_input_list()`` writes them.

Items (``--format responses``; file shapes as in
:mod:`trajudge.trajectories.readers.chat._chatlog`, the record key being ``items``):

* messages: ``{"role": "user" | "system" | "developer" | "assistant", "content": ...}`` with or
  without ``"type": "message"``; content is a string or a list of ``input_text`` /
  ``output_text`` / ``refusal`` parts (other parts, e.g. images, are counted as ignored);
* ``function_call`` (``name``, ``arguments`` as JSON text, ``call_id``) and
  ``custom_tool_call`` (``name``, ``input``) become steps of the current assistant turn;
  ``function_call_output`` / ``custom_tool_call_output`` answer the earliest unanswered call with
  the same ``call_id``. An output that starts with openai-agents' failure text ("An error
  occurred while running the tool") or with ``Error`` is the step's error;
* hosted tools are steps too: ``web_search_call`` (``action`` as args), ``file_search_call``
  (``queries``; ``results`` as output), ``code_interpreter_call`` (``code``; ``outputs``),
  ``image_generation_call``, ``computer_call`` / ``local_shell_call`` / ``shell_call`` /
  ``apply_patch_call`` (answered by their ``*_output`` items), ``mcp_call`` (``name``,
  ``arguments``, ``output`` / ``error``);
* ``reasoning`` items keep their summary text as an assistant turn named ``reasoning``;
* a whole Responses API response object (``{"object": "response", "output": [...],
  "usage": {...}}``) in the list is read as its output items, and its usage is summed;
* anything else (``mcp_list_tools``, ``item_reference``, ``compaction``, unknown types) is counted
  as ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._io import Record, kind
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._options import Ignored, as_json_text
from trajudge.trajectories.readers._conversation import REASONING, Conversation
from trajudge.trajectories.readers.chat._chatlog import ChatRecord, iter_chat_records
from trajudge.trajectories.readers.chat._openai import content_text, parse_args

AGENTS_TOOL_FAILURE = "An error occurred while running the tool"
_ROLES = {"user": "user", "system": "system", "developer": "system", "assistant": "assistant"}
# hosted tool calls: type -> (tool name, keys that are its arguments, keys that are its output)
_HOSTED: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "web_search_call": ("web_search", ("action",), ()),
    "file_search_call": ("file_search", ("queries",), ("results",)),
    "code_interpreter_call": ("code_interpreter", ("code", "container_id"), ("outputs",)),
    "image_generation_call": ("image_generation", (), ("result",)),
    "computer_call": ("computer", ("action",), ()),
    "local_shell_call": ("local_shell", ("action",), ()),
    "shell_call": ("shell", ("action",), ()),
    "apply_patch_call": ("apply_patch", ("operation",), ()),
}
_OUTPUTS = {
    "function_call_output",
    "custom_tool_call_output",
    "computer_call_output",
    "local_shell_call_output",
    "shell_call_output",
    "apply_patch_call_output",
}
_SKIPPED_KNOWN = {"mcp_list_tools", "item_reference", "compaction", "mcp_approval_request"}


def is_responses_item(obj: Any) -> bool:
    """An item of a Responses API input/output list (or a whole response object)."""
    if not isinstance(obj, dict):
        return False
    if obj.get("object") == "response":
        return True
    t = obj.get("type")
    if isinstance(t, str):
        return t == "message" or t.endswith(("_call", "_call_output")) or t == "reasoning"
    return isinstance(obj.get("role"), str) and "tool_calls" not in obj and "data" not in obj


def _is_entry(obj: Any) -> bool:
    # an item of a kind the reader does not use still belongs to the list (and is counted)
    return is_responses_item(obj) or (isinstance(obj, dict) and isinstance(obj.get("type"), str))


def _is_failure(text: str | None) -> bool:
    return bool(text) and (text or "").startswith((AGENTS_TOOL_FAILURE, "Error"))


def _status_failed(item: dict[str, Any]) -> bool:
    return item.get("status") in ("failed", "incomplete")


def _hosted_args(item: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: item[k] for k in keys if item.get(k) is not None}


def _read_items(
    conv: Conversation,
    items: list[Any],
    totals: list[int | None],
    file: str,
    record: str | None,
    field: str,
    ignored: Ignored,
) -> None:
    for i, item in enumerate(items):
        where = f"{field}[{i}]"
        if not isinstance(item, dict):
            raise InputError(
                file, record=record, field=where, reason=f"expected an object, got {kind(item)}"
            )
        t = item.get("type")
        if item.get("object") == "response":
            usage = item.get("usage") or {}
            for j, key in enumerate(("input_tokens", "output_tokens")):
                if isinstance(usage.get(key), int):
                    totals[j] = (totals[j] or 0) + usage[key]
            output = item.get("output")
            if not isinstance(output, list):
                raise InputError(
                    file,
                    record=record,
                    field=f"{where}.output",
                    reason=f"expected a list, got {kind(output)}",
                )
            _read_items(conv, output, totals, file, record, f"{where}.output", ignored)
        elif t in (None, "message") and isinstance(item.get("role"), str):
            role = _ROLES.get(item["role"])
            if role is None:
                ignored.add(
                    "item of an unknown role", "items of unknown roles", f"{record}: {where}"
                )
                continue
            text = content_text(item.get("content"), ignored, f"{record}: {where}.content")
            conv.say(role, text)  # type: ignore[arg-type]
        elif t in ("function_call", "custom_tool_call"):
            name = item.get("name")
            if not isinstance(name, str) or not name:
                raise InputError(
                    file, record=record, field=f"{where}.name", reason="missing or empty"
                )
            if t == "function_call":
                args = parse_args(item.get("arguments"), file, record, f"{where}.arguments")
            else:
                args = {"input": item.get("input")}
            call_id = item.get("call_id")
            conv.call(name, args, None if call_id is None else str(call_id))
        elif t in _HOSTED:
            name, arg_keys, out_keys = _HOSTED[t]
            fields: dict[str, Any] = {}
            outs = {k: item[k] for k in out_keys if item.get(k) is not None}
            if outs:
                fields["output"] = as_json_text(
                    outs if len(outs) > 1 else next(iter(outs.values()))
                )
            if _status_failed(item):
                fields.update(ok=False, error=f"status {item.get('status')}")
            elif t in (
                "web_search_call",
                "image_generation_call",
                "code_interpreter_call",
                "file_search_call",
            ):
                fields.setdefault("output", None)  # the call is its own result
            call_id = item.get("call_id") or item.get("id")
            conv.call(
                name,
                _hosted_args(item, arg_keys),
                None if call_id is None else str(call_id),
                **fields,
            )
        elif t == "mcp_call":
            args = parse_args(item.get("arguments"), file, record, f"{where}.arguments")
            error = item.get("error")
            fields = {"output": item.get("output")}
            if error:
                fields.update(ok=False, error=as_json_text(error))
            conv.call(str(item.get("name") or "mcp"), args, item.get("id"), **fields)
        elif t in _OUTPUTS:
            call_id = item.get("call_id")
            if call_id is None:
                raise InputError(
                    file, record=record, field=f"{where}.call_id", reason="missing on a tool output"
                )
            n = conv.pending(call_id=str(call_id))
            output = item.get("output")
            text = output if isinstance(output, str) or output is None else as_json_text(output)
            if n is None:
                ignored.add(
                    "tool output answering no call",
                    "tool outputs answering no call",
                    f"{record}: {where}",
                )
                conv.result(None, text)
                continue
            failed = _is_failure(text) or _status_failed(item)
            conv.result(n, text, ok=not failed)
        elif t == "reasoning":
            summary = item.get("summary") or []
            texts = [
                str(p["text"])
                for p in summary
                if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
            if texts:
                conv.say("assistant", "\n".join(texts), name=REASONING)
            else:
                ignored.add(
                    "reasoning item without a summary",
                    "reasoning items without a summary",
                    f"{record}: {where}",
                )
        else:
            what = t if t in _SKIPPED_KNOWN else f"unknown type {t!r}"
            ignored.add(
                "item of a kind not read", "items of kinds not read", f"{record}: {where} ({what})"
            )


def from_responses_items(rec: ChatRecord, file: str, ignored: Ignored) -> Trajectory:
    conv = Conversation()
    totals: list[int | None] = [None, None]
    _read_items(conv, rec.items, totals, file, rec.label, rec.where, ignored)
    return rec.trajectory(conv, totals, file)


def iter_responses(
    path: Path, records: Iterable[Record], ignored: Ignored
) -> Iterator[tuple[str, Trajectory]]:
    """One trajectory per conversation, one at a time (ids not checked for repeats here)."""
    file = str(path)
    for rec in iter_chat_records(path, records, _is_entry, "items"):
        yield rec.label, from_responses_items(rec, file, ignored)
