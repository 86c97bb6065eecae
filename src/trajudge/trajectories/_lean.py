"""Trajectories as the rule checks read them, without building pydantic models.

A row of trajudge's own Parquet file (scalar columns, JSON text columns) becomes a
:class:`LeanTrajectory`: slotted objects with the attributes of :class:`Trajectory`,
:class:`Step` and :class:`Usage` that the built-in checks read. Validating and building the
pydantic models took half the time of a rule check over a big file.

The lean reader accepts a row only when every value has exactly the type the models accept
in strict mode (``validate`` is strict) and meets their constraints, so an accepted row holds
the very values :class:`Trajectory` would. Anything else (a wrong type, bad JSON, nesting past
the limit, a message linked to a missing step, a value the models would convert) makes
:func:`lean_trajectory` return None, and the caller validates that row with the model: a
hostile file gets the same one-line error as before, naming file, row and field, and an
unusual but valid row the same values. ``messages`` is validated but not kept (no check reads
it); a custom check gets full models (``check_parquet`` reads them when a spec has one).
"""

from __future__ import annotations

from typing import Any

from trajudge.core import INPUT_JSON
from trajudge.trajectories._json import json_deeper_than

_STEP_KEYS = frozenset(
    ("tool", "args", "ok", "output", "error", "approved", "tokens", "latency_ms", "call_id")
)
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "turns")
_USAGE_KEY_SET = frozenset(_USAGE_KEYS)
_MESSAGE_KEYS = frozenset(("role", "content", "name", "steps", "step"))
_ROLES = frozenset(("system", "user", "assistant", "tool"))
_EXACT_FLOAT = 2**53  # an int the models turn into a float without rounding


class _Reject(Exception):
    """A value the lean reader leaves to the models (they name the fault)."""


class LeanStep:
    """A validated tool call: the fields of :class:`~trajudge.trajectories.Step`."""

    __slots__ = tuple(sorted(_STEP_KEYS))

    tool: str
    args: dict[str, Any]
    ok: bool
    output: str | None
    error: str | None
    approved: bool | None
    tokens: int | None
    latency_ms: float | None
    call_id: str | None


class LeanUsage:
    """What a run cost: the fields of :class:`~trajudge.trajectories.Usage`."""

    __slots__ = _USAGE_KEYS

    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    latency_s: float | None
    turns: int | None

    @property
    def total_tokens(self) -> int | None:
        """Prompt plus completion tokens, or None when neither is known (as Usage's)."""
        if self.prompt_tokens is None and self.completion_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


class LeanTrajectory:
    """A validated trajectory without its conversation: the fields of
    :class:`~trajudge.trajectories.Trajectory` that the built-in rule checks read, and the
    other scalars."""

    __slots__ = (
        "files_after",
        "files_before",
        "final_answer",
        "id",
        "input",
        "intent",
        "metadata",
        "outcome",
        "steps",
        "task_id",
        "trial",
        "usage",
    )

    id: str
    task_id: str
    trial: int
    input: str
    steps: list[LeanStep]
    final_answer: str | None
    outcome: bool | None
    usage: LeanUsage
    intent: str | None
    files_before: dict[str, str] | None
    files_after: dict[str, str] | None
    metadata: dict[str, Any]


def lean_trajectory(row: dict[str, Any], limit: int) -> LeanTrajectory | None:
    """The row as a :class:`LeanTrajectory`, or None when the model must judge it (see the
    module docstring); ``limit`` is the nesting limit in force. ``row`` is left as it was."""
    try:
        return _build(row, limit)
    except _Reject:
        return None


def _build(row: dict[str, Any], limit: int) -> LeanTrajectory:
    t = LeanTrajectory()
    t.id = _name(row.get("id"))
    t.task_id = _name(row.get("task_id"))
    trial = row.get("trial", 0)
    if type(trial) is not int or trial < 0:
        raise _Reject
    t.trial = trial
    t.input = _text(row.get("input", ""))
    t.final_answer = _opt_text(row.get("final_answer"))
    t.intent = _opt_text(row.get("intent"))
    t.outcome = _opt_bool(row.get("outcome"))
    steps = _json(row.get("steps"), limit, [])
    if type(steps) is not list:
        raise _Reject
    t.steps = [_step(s) for s in steps]
    _check_messages(_json(row.get("messages"), limit, []), len(steps))
    t.usage = _usage(_json(row.get("usage"), limit, {}))
    t.files_before = _files(_json(row.get("files_before"), limit, None))
    t.files_after = _files(_json(row.get("files_after"), limit, None))
    metadata = _json(row.get("metadata"), limit, {})
    if type(metadata) is not dict:
        raise _Reject
    t.metadata = metadata
    return t


def _json(text: Any, limit: int, default: Any) -> Any:
    if text is None:
        return default
    if type(text) is not str or json_deeper_than(text, limit):
        raise _Reject
    if text == "{}":  # the usual empty metadata: no parser call
        return {}
    try:
        return INPUT_JSON.decode(text)
    except (ValueError, RecursionError):
        raise _Reject from None


def _name(value: Any) -> str:
    # min_length makes pydantic-core read the text as UTF-8: a lone surrogate is refused there
    if type(value) is not str or not value or not (value.isascii() or _utf8(value)):
        raise _Reject
    return value


def _utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _text(value: Any) -> str:
    if type(value) is not str:
        raise _Reject
    return value


def _opt_text(value: Any) -> str | None:
    if value is not None and type(value) is not str:
        raise _Reject
    return value


def _opt_bool(value: Any) -> bool | None:
    if value is not None and type(value) is not bool:
        raise _Reject
    return value


def _opt_count(value: Any) -> int | None:
    if value is not None and (type(value) is not int or value < 0):
        raise _Reject
    return value


def _opt_amount(value: Any) -> float | None:
    """A float field with ``ge=0``: an int becomes the float the model makes of it."""
    if value is None:
        return None
    if type(value) is int and -_EXACT_FLOAT <= value <= _EXACT_FLOAT:
        value = float(value)
    if type(value) is not float or not value >= 0:  # NaN fails ge=0 in the model too
        raise _Reject
    return value


def _step(data: Any) -> LeanStep:
    # one test of the common types first: this runs for every step of a million trajectories
    if type(data) is not dict or not _STEP_KEYS.issuperset(data):
        raise _Reject
    get = data.get
    tool, args, ok = get("tool"), get("args"), get("ok", True)
    output, error, approved, call_id = get("output"), get("error"), get("approved"), get("call_id")
    if not (
        type(tool) is str
        and tool
        and (tool.isascii() or _utf8(tool))
        and (type(args) is dict or (args is None and "args" not in data))
        and type(ok) is bool
        and (output is None or type(output) is str)
        and (error is None or type(error) is str)
        and (approved is None or type(approved) is bool)
        and (call_id is None or type(call_id) is str)
    ):
        raise _Reject
    s = LeanStep()
    s.tool, s.args, s.ok, s.output, s.error = tool, {} if args is None else args, ok, output, error
    s.approved, s.call_id = approved, call_id
    s.tokens = _opt_count(get("tokens"))
    s.latency_ms = _opt_amount(get("latency_ms"))
    return s


def _usage(data: Any) -> LeanUsage:
    if type(data) is not dict or not _USAGE_KEY_SET.issuperset(data):
        raise _Reject
    u = LeanUsage()
    u.prompt_tokens = _opt_count(data.get("prompt_tokens"))
    u.completion_tokens = _opt_count(data.get("completion_tokens"))
    u.cost_usd = _opt_amount(data.get("cost_usd"))
    u.latency_s = _opt_amount(data.get("latency_s"))
    u.turns = _opt_count(data.get("turns"))
    return u


def _files(data: Any) -> dict[str, str] | None:
    if data is not None and (
        type(data) is not dict or any(type(v) is not str for v in data.values())
    ):
        raise _Reject
    return data


def _check_messages(messages: Any, n_steps: int) -> None:
    """The fields of each :class:`Message` and the links that ``Trajectory`` checks."""
    if type(messages) is not list:
        raise _Reject
    linked: set[int] = set()
    for m in messages:
        if type(m) is not dict or not _MESSAGE_KEYS.issuperset(m):
            raise _Reject
        role = m.get("role")
        if type(role) is not str or role not in _ROLES:
            raise _Reject
        _opt_text(m.get("content"))
        _opt_text(m.get("name"))
        made = m.get("steps", [])
        step = _opt_count(m.get("step"))
        if type(made) is not list or any(type(s) is not int for s in made):
            raise _Reject
        if made and role != "assistant":
            raise _Reject  # only an assistant turn makes calls
        if step is not None and (role != "tool" or step >= n_steps):
            raise _Reject  # only a tool turn answers one, and it must exist
        for s in made:
            if not 0 <= s < n_steps or s in linked:
                raise _Reject
            linked.add(s)
