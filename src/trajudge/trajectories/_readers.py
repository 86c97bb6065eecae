"""The one table of input readers: each format's name, what it is, how a file in it is told
and how it is read. Adding a reader is adding its module and one :data:`READERS` entry.

``trajudge --help`` lists the names, so this module stays light: the tests that tell a format
are named ``"module:function"`` (imported once, when detection first runs) and each read
function imports its reader inside.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from trajudge.trajectories._read_functions import (
    Source,
    from_autogen,
    from_claude_code,
    from_codex,
    from_crewai,
    from_gemini_cli,
    from_inspect,
    from_jsonl,
    from_langchain,
    from_openai,
    from_openhands,
    from_otel,
    from_parquet,
    from_responses,
    from_smolagents,
    from_swe_agent,
    from_tau2_bench,
    from_tau_bench,
)

if TYPE_CHECKING:
    from trajudge.trajectories._models import Trajectory

ReaderName = Literal[
    "jsonl",
    "parquet",
    "openai",
    "responses",
    "langchain",
    "otel",
    "tau-bench",
    "tau2-bench",
    "inspect",
    "swe-agent",
    "openhands",
    "codex",
    "claude-code",
    "gemini-cli",
    "smolagents",
    "autogen",
    "crewai",
]


@dataclass(frozen=True)
class Rule:
    """A test of one parsed JSON value: ``test`` names a function, value -> bool.

    The shapes overlap (a bare chat message is a Responses item too; a record of only
    trajudge's field names is a conversation when it holds a list of messages), so the tests
    of all readers are tried in ``rank`` order, lowest first, and the first that passes tells
    the format. A test of every record may also answer None for a record that fits but tells
    nothing alone: the format needs one record that passes.
    """

    rank: int
    test: str


@dataclass(frozen=True)
class Reader:
    """One input format: its ``--format`` name and everything else that names it."""

    name: ReaderName
    # in hints on errors: "the file looks like {description}: use --format {name}"
    description: str
    # (record label, trajectory) pairs from a source (see the read functions below)
    read: Callable[[Source], Iterator[tuple[str, Trajectory]]]
    # gives one trajectory at a time: ids are checked for repeats as they come (a reader that
    # takes the whole file first checks its own)
    streams: bool
    # names a test of a file's first bytes and path; a format so told (or named by
    # ``suffixes``) is read from the file itself, without parsing its JSON first
    magic: str | None = None
    # under ``auto``, a file so named is read with this reader whatever its bytes
    suffixes: tuple[str, ...] = ()
    # whether ``detect_format`` names a file by its suffix alone too: for Inspect only, so it
    # names a ``.parquet`` file whose bytes are not Parquet by their JSON (``auto`` reads it
    # as Parquet and fails)
    detect_by_suffix: bool = False
    # a test of the first record, which alone tells the format
    first: Rule | None = None
    # a test of each record, for a file that all its records together tell (one
    # conversation, a record each message)
    every: Rule | None = None
    # a folder holding files so named (glob) is one input, a JSON record each, in name order
    folder: str | None = None
    # names the census of the source (see :mod:`trajudge.trajectories._census`), a function
    # ``(label, value, held) -> None`` given each JSON record as the reader takes it, written
    # apart from the reader so that the two can disagree
    census: str | None = None
    # the census of a reader that reads the file itself: ``(path, held) -> None``
    census_file: str | None = None
    # the top-level keys its records carry, to name the closest format of a file in none
    keys: tuple[str, ...] = ()


_D = "trajudge.trajectories.reading._detect"
_C = "trajudge.trajectories.readers.chat._census_chat"
_F = "trajudge.trajectories.readers.bench._census_files"
_O = "trajudge.trajectories.readers.otel._census_otel"
_A = "trajudge.trajectories.readers.agents"

#: In the order ``--format`` lists them.
READERS: tuple[Reader, ...] = (
    Reader(
        "jsonl",
        "trajudge's native JSON Lines",
        from_jsonl,
        streams=True,
        first=Rule(60, f"{_D}:is_native_record"),
        census=f"{_F}:census_jsonl",
        keys=("id", "task_id", "trial", "steps", "messages", "final_answer", "outcome", "usage"),
    ),
    Reader(
        "parquet",
        "trajudge's native Parquet",
        from_parquet,
        streams=True,
        magic=f"{_D}:is_parquet",
        suffixes=(".parquet", ".pq"),
        census_file=f"{_F}:census_parquet",
    ),
    Reader(
        "openai",
        "OpenAI chat messages",
        from_openai,
        streams=True,
        first=Rule(100, f"{_D}:is_chat_conversation"),
        every=Rule(30, "trajudge.trajectories.readers.chat._openai_file:is_chat_message"),
        census=f"{_C}:census_openai",
        keys=("messages", "tools", "role", "content", "tool_calls", "tool_call_id"),
    ),
    Reader(
        "responses",
        "OpenAI Responses API items",
        from_responses,
        streams=True,
        first=Rule(90, f"{_D}:is_responses_conversation"),
        every=Rule(40, f"{_D}:responses_item_sign"),
        census=f"{_C}:census_responses",
        keys=("items", "type", "role", "content", "call_id", "arguments", "output"),
    ),
    Reader(
        "langchain",
        "LangChain messages_to_dict dumps",
        from_langchain,
        streams=True,
        first=Rule(70, f"{_D}:is_langchain_conversation"),
        every=Rule(20, "trajudge.trajectories.readers.chat._langchain:is_langchain_message"),
        census=f"{_C}:census_langchain",
        keys=("type", "data", "messages"),
    ),
    Reader(
        "otel",
        "an OpenTelemetry trace export",
        from_otel,
        streams=False,
        first=Rule(10, f"{_D}:is_trace_export"),
        census=f"{_O}:census_otel",
        keys=(
            "resourceSpans",
            "resourceLogs",
            "batches",
            "data",
            "traceId",
            "spanId",
            "context",
            "attributes",
        ),
    ),
    Reader(
        "tau-bench",
        "a τ-bench result file",
        from_tau_bench,
        streams=True,
        first=Rule(50, f"{_D}:is_tau_bench_result"),
        census=f"{_F}:census_tau_bench",
        keys=("task_id", "trial", "reward", "info", "traj"),
    ),
    Reader(
        "tau2-bench",
        "a τ²-bench result file",
        from_tau2_bench,
        streams=False,
        first=Rule(20, "trajudge.trajectories.readers.bench._tau2_bench:is_tau2_results"),
        census=f"{_F}:census_tau2_bench",
        keys=("tasks", "simulations", "info", "timestamp"),
    ),
    Reader(
        "inspect",
        "an Inspect AI eval log",
        from_inspect,
        streams=False,
        magic=f"{_D}:is_inspect_zip",
        suffixes=(".eval",),
        detect_by_suffix=True,
        first=Rule(30, f"{_D}:is_inspect_log"),
        census_file=f"{_F}:census_inspect",
        keys=("version", "status", "eval", "plan", "results", "stats", "samples"),
    ),
    Reader(
        "swe-agent",
        "a SWE-agent .traj file",
        from_swe_agent,
        streams=False,
        first=Rule(40, f"{_D}:is_swe_agent"),
        census=f"{_F}:census_swe_agent",
        keys=("trajectory", "history", "info", "environment"),
    ),
    Reader(
        "openhands",
        "an OpenHands trajectory",
        from_openhands,
        streams=False,
        first=Rule(80, f"{_D}:is_openhands_conversation"),
        every=Rule(10, f"{_D}:is_openhands_event"),
        folder="event-*.json",  # an OpenHands SDK ``events`` folder
        census=f"{_F}:census_openhands",
        keys=(
            "id",
            "timestamp",
            "source",
            "message",
            "action",
            "observation",
            "args",
            "cause",
            "kind",
        ),
    ),
    Reader(
        "codex",
        "an OpenAI Codex CLI rollout",
        from_codex,
        streams=False,
        first=Rule(35, f"{_A}._codex:is_codex_rollout"),
        census=f"{_A}._codex_census:census",
        # and the meta line of a rollout before Codex 0.3x: id, timestamp, instructions, git
        keys=("timestamp", "type", "payload", "id", "instructions", "git"),
    ),
    Reader(
        "claude-code",
        "a Claude Code session transcript",
        from_claude_code,
        streams=False,
        first=Rule(45, f"{_A}._claude_code:is_claude_code_record"),
        census=f"{_A}._claude_code:census",
        keys=("type", "message", "sessionId", "uuid", "parentUuid", "cwd", "isSidechain"),
    ),
    Reader(
        "gemini-cli",
        "a Gemini CLI chat session",
        from_gemini_cli,
        streams=False,
        # before trajudge's JSON Lines and chat messages: a session's first record has
        # ``sessionId`` and ``projectHash`` (and, in the older one-document files, ``messages``)
        first=Rule(15, f"{_A}._gemini_cli:is_gemini_session"),
        census=f"{_A}._gemini_cli_census:census",
        keys=("sessionId", "projectHash", "startTime", "lastUpdated", "messages", "kind"),
    ),
    Reader(
        "smolagents",
        "smolagents agent memory steps",
        from_smolagents,
        streams=True,
        # before jsonl (60): a RunResult's ``steps`` is one of trajudge's own field names
        first=Rule(46, f"{_A}._smolagents_memory:is_smolagents_record"),
        census=f"{_A}._smolagents_memory:census",
        keys=(
            "step_number",
            "task",
            "model_input_messages",
            "model_output_message",
            "tool_calls",
            "observations",
            "token_usage",
            "error",
        ),
    ),
    Reader(
        "autogen",
        "AutoGen AgentChat messages or state",
        from_autogen,
        streams=True,
        # before openai (100): a TaskResult is an object with a list of messages
        first=Rule(47, f"{_A}._autogen:is_autogen_record"),
        census=f"{_A}._autogen:census",
        keys=("type", "source", "content", "models_usage", "metadata", "messages", "llm_context"),
    ),
    Reader(
        "crewai",
        "a CrewAI crew result (CrewOutput)",
        from_crewai,
        streams=True,
        # before openai (100): a TaskOutput is an object with a list of chat messages
        first=Rule(48, f"{_A}._crewai:is_crewai_record"),
        census=f"{_A}._crewai:census",
        keys=("raw", "tasks_output", "token_usage", "json_dict", "pydantic"),
    ),
)
BY_NAME: dict[str, Reader] = {r.name: r for r in READERS}


@cache
def resolve(ref: str) -> Any:
    """The function a ``"module:function"`` reference names."""
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)
