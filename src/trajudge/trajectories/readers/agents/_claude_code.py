"""Import Claude Code session transcripts (``--format claude-code``).

Claude Code writes each session to ``~/.claude/projects/<escaped cwd>/<session id>.jsonl``, one
JSON record a line. One file is one trajectory; ``id`` = ``task_id`` = the session id (the file
name when a record names it as its ``sessionId``, else the first ``sessionId``).

* ``user`` records: text (``message.content`` a string or text blocks) is a user turn, except
  ``isMeta`` records, interruption markers (``[Request interrupted by user...]``, counted in
  ``metadata.interruptions``) and local command output (``<local-command-stdout>`` ...), which
  are counted as ignored; an ``isCompactSummary`` record, and a notification the CLI writes as
  a user record (``promptSource: system``, ``<task-notification>``: a background sub-agent's
  report), are system turns. A user record holding ``tool_result`` blocks answers the calls
  whose ids they name (``is_error`` fails the step).
* ``assistant`` records: one API response is written as several records, one content block
  each, sharing ``message.id``. Text blocks are assistant turns, ``thinking`` blocks turns named
  ``reasoning``, ``tool_use`` (and ``server_tool_use``) blocks steps (``tool`` = ``name``,
  ``args`` = ``input``, ``call_id`` = ``id``) made by the response's last turn.
* Usage: ``message.usage`` is repeated on every record of a response, so it is counted once
  per ``message.id`` (the largest value of each count). ``prompt_tokens`` = ``input_tokens`` +
  ``cache_creation_input_tokens`` + ``cache_read_input_tokens`` (everything the model read),
  ``completion_tokens`` = ``output_tokens``; the four sums are in ``metadata.tokens``.
  ``cost_usd`` is Claude Code's own estimate from its last ``cost-state`` record (2.1 and
  later; it includes the sub-agents' cost).
* Sub-agents (the ``Task`` / ``Agent`` tool): Claude Code 1.x writes the sub-agent's records
  into the session file, marked ``isSidechain``. Their calls are steps of this trajectory (the
  session made them; their indexes are in ``metadata.sidechain_steps``), their assistant turns
  are named ``sidechain``, their tokens are in the usage; the sub-agent's prompt (the call's
  ``prompt`` argument) is not a user turn and is counted as ignored. Claude Code 2.x writes
  them to ``<session id>/subagents/agent-<id>.jsonl`` instead, named in
  ``metadata.subagents``: such a file read alone is the sub-agent's trajectory (its prompt is
  its user turn), ``id`` = ``<session id>:agent-<agent id>``.
* ``summary`` records (titles) go to ``metadata.summaries``; records of every other type
  (``attachment``, ``system``, ``queue-operation``, ``file-history-snapshot``, ...) are counted
  as ignored, each named with its type.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._io import Record, kind
from trajudge.trajectories._models import Message, Trajectory, Usage
from trajudge.trajectories._options import Ignored, as_dict, as_json_text
from trajudge.trajectories.readers._conversation import REASONING, Conversation
from trajudge.trajectories.readers.agents._claude_code_census import census as census  # the census

SIDECHAIN = "sidechain"  # the name of a sub-agent's assistant turn in the session
INTERRUPTED = "[Request interrupted by user"
NOTIFICATION = "<task-notification>"  # a background task's report, written as a user record
LOCAL_OUTPUT = ("<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>")
_TOKENS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


def is_claude_code_record(obj: Any) -> bool:
    """A record of a Claude Code transcript: a typed record naming its session and its place
    in the message tree (``parentUuid``), or one of the bookkeeping records (``summary``,
    ``queue-operation``, ``file-history-snapshot`` ...) that may open a file."""
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        return False
    if obj["type"] == "summary":
        return "leafUuid" in obj
    if obj["type"] == "file-history-snapshot":
        return "messageId" in obj and "snapshot" in obj
    return isinstance(obj.get("sessionId"), str) and ("parentUuid" in obj or "-" in obj["type"])


class _Session:
    """The trajectory built record by record (see the module docstring)."""

    def __init__(self, file: str, ignored: Ignored) -> None:
        self.file = file
        self.ignored = ignored
        self.conv = Conversation()
        self.subagent_file: bool | None = None  # set by the first user or assistant record
        self.sessions: list[str] = []
        self.agent_id: str | None = None
        self.usage: dict[str, list[int | None]] = {}  # response id -> the four counts
        self.cost: float | None = None
        self.meta: dict[str, Any] = {}
        self.models: list[str] = []
        self.sidechain_steps: list[int] = []
        self.subagents: list[dict[str, Any]] = []
        self.summaries: list[str] = []
        self.interruptions = 0
        self.open: tuple[str | None, str | None, int] | None = None  # response, name, message

    def fail(self, label: str, field: str | None, reason: str) -> InputError:
        return InputError(self.file, record=label, field=field, reason=reason)

    def add(self, label: str, rec: Any) -> None:
        if not isinstance(rec, dict):
            raise self.fail(label, None, f"expected a record object, got {kind(rec)}")
        t = rec.get("type")
        if not isinstance(t, str):
            raise self.fail(label, "type", f"expected a string, got {kind(t)}")
        sid = rec.get("sessionId")
        if isinstance(sid, str) and sid not in self.sessions:
            self.sessions.append(sid)
        if t in ("user", "assistant"):
            self.message(label, rec, t)
        elif t == "summary" and isinstance(rec.get("summary"), str):
            self.summaries.append(rec["summary"])
        elif t == "cost-state" and isinstance(rec.get("totalCostUSD"), int | float):
            self.cost = float(rec["totalCostUSD"])
        else:
            # bookkeeping (attachments, queue operations, request logs ...), named by type
            sub = rec.get("subtype") or as_dict(rec.get("attachment")).get("type")
            where = f"{label} ({t}: {sub})" if isinstance(sub, str) else f"{label} ({t})"
            self.ignored.add("record that is no message", "records that are no messages", where)

    def message(self, label: str, rec: dict[str, Any], t: str) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            raise self.fail(label, "message", f"expected an object, got {kind(msg)}")
        side = rec.get("isSidechain") is True
        if self.subagent_file is None:
            self.subagent_file = side
            agent = rec.get("agentId")
            self.agent_id = agent if side and isinstance(agent, str) else None
        for key, field in (("cwd", "cwd"), ("version", "version"), ("git_branch", "gitBranch")):
            if isinstance(rec.get(field), str):
                self.meta.setdefault(key, rec[field])
                if key == "version":
                    self.meta[key] = rec[field]  # the last: a resumed session may be newer
        content = msg.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = content
        elif content is None:
            blocks = []
        else:
            raise self.fail(
                label, "message.content", f"expected text or a list, got {kind(content)}"
            )
        for i, b in enumerate(blocks):
            if not isinstance(b, dict):
                raise self.fail(
                    label, f"message.content[{i}]", f"expected a block object, got {kind(b)}"
                )
        in_side = side and not self.subagent_file  # a sub-agent inside the session file
        if t == "assistant":
            self.assistant(label, msg, blocks, in_side)
        else:
            self.user(label, rec, blocks, in_side)

    def assistant(
        self, label: str, msg: dict[str, Any], blocks: list[dict[str, Any]], in_side: bool
    ) -> None:
        rid = msg.get("id") if isinstance(msg.get("id"), str) else None
        model = msg.get("model")
        if isinstance(model, str) and model != "<synthetic>" and model not in self.models:
            self.models.append(model)
        self.count_usage(label, rid, msg.get("usage"))
        name = SIDECHAIN if in_side else None
        for i, b in enumerate(blocks):
            bt, where = b.get("type"), f"message.content[{i}]"
            if bt == "text":
                self.conv.say(
                    "assistant", _text(b.get("text"), self, label, f"{where}.text"), name=name
                )
                self.open = (rid, name, len(self.conv.messages) - 1)
            elif bt == "thinking":
                self.conv.say(
                    "assistant",
                    _text(b.get("thinking"), self, label, f"{where}.thinking"),
                    name=REASONING,
                )
                self.open = None
            elif bt in ("tool_use", "server_tool_use"):
                self.call(label, where, b, rid, name)
            elif isinstance(bt, str) and bt.endswith("_tool_result"):  # a server tool's result
                n = self.conv.pending(call_id=str(b.get("tool_use_id")))
                res = b.get("content")
                failed = isinstance(res, dict) and str(res.get("type", "")).endswith("_error")
                if n is None:
                    self.ignored.add("result of no call", "results of no call", f"{label}: {where}")
                else:
                    self.conv.result(n, as_json_text(res), ok=not failed)
            else:
                self.ignored.add(
                    "assistant block of a type not read",
                    "assistant blocks of types not read",
                    f"{label}: {where} ({bt})",
                )

    def call(
        self, label: str, where: str, b: dict[str, Any], rid: str | None, name: str | None
    ) -> None:
        call_id, tool, args = b.get("id"), b.get("name"), b.get("input")
        if not isinstance(call_id, str):
            raise self.fail(label, f"{where}.id", f"expected a string, got {kind(call_id)}")
        if not isinstance(tool, str) or not tool:
            raise self.fail(label, f"{where}.name", f"expected a tool name, got {kind(tool)}")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise self.fail(label, f"{where}.input", f"expected an object, got {kind(args)}")
        last = len(self.conv.messages) - 1
        if self.open != (rid, name, last) or rid is None:
            # a response's calls follow its text; another response opens a turn of its own
            self.conv.messages.append(Message(role="assistant", name=name))
            self.open = (rid, name, last + 1)
        n = self.conv.call(tool, args, call_id)
        if name == SIDECHAIN:
            self.sidechain_steps.append(n)

    def user(
        self, label: str, rec: dict[str, Any], blocks: list[dict[str, Any]], in_side: bool
    ) -> None:
        self.open = None
        results = [(i, b) for i, b in enumerate(blocks) if b.get("type") == "tool_result"]
        for i, b in enumerate(blocks):
            if b.get("type") not in ("text", "tool_result"):
                self.ignored.add(
                    "user block that is not text",
                    "user blocks that are not text",
                    f"{label}: message.content[{i}]",
                )
        if results:
            for i, b in results:
                self.result(label, f"message.content[{i}]", b, rec.get("toolUseResult"))
            if len(results) < len(blocks):
                self.ignored.add("text beside a tool result", "texts beside tool results", label)
            return
        text = "\n".join(
            _text(b.get("text"), self, label, f"message.content[{i}].text")
            for i, b in enumerate(blocks)
            if b.get("type") == "text"
        )
        if rec.get("isMeta") is True:
            self.ignored.add("meta message", "meta messages", label)
        elif rec.get("isCompactSummary") is True:
            self.conv.say("system", text, name="compact summary")
        elif rec.get("promptSource") == "system" or text.startswith(NOTIFICATION):
            self.conv.say("system", text, name="notification")  # e.g. a sub-agent's report
        elif text.startswith(INTERRUPTED):
            self.interruptions += 1
            self.ignored.add("interruption marker", "interruption markers", label)
        elif text.lstrip().startswith(LOCAL_OUTPUT):
            self.ignored.add("local command output", "local command outputs", label)
        elif in_side:
            self.ignored.add("sub-agent prompt (the call's prompt)", "sub-agent prompts", label)
        else:
            self.conv.say("user", text)

    def result(self, label: str, where: str, b: dict[str, Any], structured: Any) -> None:
        call_id = b.get("tool_use_id")
        if not isinstance(call_id, str):
            raise self.fail(
                label, f"{where}.tool_use_id", f"expected a string, got {kind(call_id)}"
            )
        content = b.get("content")
        if isinstance(content, list):
            parts = []
            for j, part in enumerate(content):
                if isinstance(part, dict) and part.get("type") == "text":
                    parts.append(_text(part.get("text"), self, label, f"{where}.content[{j}].text"))
                else:
                    self.ignored.add(
                        "tool result part that is not text",
                        "tool result parts that are not text",
                        f"{label}: {where}.content[{j}]",
                    )
            text = "\n".join(parts)
        elif isinstance(content, str) or content is None:
            text = content or ""
        else:
            raise self.fail(
                label, f"{where}.content", f"expected text or a list, got {kind(content)}"
            )
        n = self.conv.pending(call_id=call_id)
        if n is None:
            self.conv.result(None, text)  # kept as a tool turn of its own
            return
        self.conv.result(n, text, ok=b.get("is_error") is not True)
        if isinstance(structured, dict) and isinstance(structured.get("agentId"), str):
            self.subagents.append(
                {
                    "call_id": call_id,
                    "agent_id": structured["agentId"],
                    # a background agent's result leaves the type out: the call names it
                    "agent_type": structured.get("agentType")
                    or self.conv.steps[n].args.get("subagent_type"),
                }
            )

    def count_usage(self, label: str, rid: str | None, usage: Any) -> None:
        if usage is None:
            return
        if not isinstance(usage, dict):
            raise self.fail(label, "message.usage", f"expected an object, got {kind(usage)}")
        counts = self.usage.setdefault(rid or f"record {label}", [None] * len(_TOKENS))
        for k, key in enumerate(_TOKENS):
            value = usage.get(key)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise self.fail(label, f"message.usage.{key}", f"expected a count, got {value!r}")
            counts[k] = max(value, counts[k] or 0)

    def trajectory(self, path: Path, label: str) -> Trajectory:
        if self.subagent_file is None:
            why = (
                "no conversation (summaries): Claude Code keeps sessions' titles in such "
                "files; import the session file itself"
                if self.summaries
                else "no conversation: no user or assistant record"
            )
            raise InputError(self.file, reason=why)
        sums = [
            sum(c[k] or 0 for c in self.usage.values())
            if any(c[k] is not None for c in self.usage.values())
            else None
            for k in range(len(_TOKENS))
        ]
        reads = [s for s in sums[:3] if s is not None]
        session = path.stem if path.stem in self.sessions else next(iter(self.sessions), path.stem)
        meta: dict[str, Any] = {"session_id": session, **self.meta}
        tid = session
        if self.subagent_file:
            meta["agent_id"] = self.agent_id
            tid = f"{session}:agent-{self.agent_id or 'sidechain'}"
        if len(self.sessions) > 1:
            meta["session_ids"] = self.sessions
        if self.models:
            meta["model"] = self.models[0]
        if len(self.models) > 1:
            meta["models"] = self.models
        if self.usage:
            meta["tokens"] = {k: s for k, s in zip(_TOKENS, sums, strict=True) if s is not None}
            meta["responses"] = len(self.usage)
        for key, value in (
            ("sidechain_steps", self.sidechain_steps),
            ("subagents", self.subagents),
            ("summaries", self.summaries),
            ("interruptions", self.interruptions),
        ):
            if value:
                meta[key] = value
        final = next(
            (
                m.content
                for m in reversed(self.conv.messages)
                if m.role == "assistant" and m.name not in (REASONING, SIDECHAIN)
            ),
            None,
        )
        t = self.conv.trajectory(
            [sum(reads) if reads else None, sums[3]],
            file=self.file,
            record=label,
            id=tid,
            task_id=tid,
            metadata=meta,
            usage=Usage(cost_usd=self.cost),
        )
        return t.model_copy(update={"final_answer": final})


def _text(value: Any, session: _Session, label: str, where: str) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    raise session.fail(label, where, f"expected text, got {kind(value)}")


def claude_code_from_records(
    path: Path, records: list[Record], ignored: Ignored
) -> list[tuple[str, Trajectory]]:
    session = _Session(str(path), ignored)
    for label, rec in records:
        session.add(label, rec)
    label = records[0][0] if records else "line 1"
    return [(label, session.trajectory(path, label))]
