"""Which format a file is in, and a one-line description of a file in none.

:func:`detect` looks at the magic bytes and the parsed JSON records; :func:`describe` names
what an unrecognised file looks like so the error can say what to do ("a JSON array of chat
messages: use --format openai").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajudge.trajectories._io import Record
from trajudge.trajectories._langchain import is_langchain_message
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._openai import is_chat_message
from trajudge.trajectories._otel_spans import container_of
from trajudge.trajectories._responses import is_responses_item
from trajudge.trajectories._tau2_bench import is_tau2_results

PARQUET_MAGIC = b"PAR1"
ZIP_MAGIC = b"PK\x03\x04"

_NATIVE_KEYS = {"steps", "final_answer", "files_before", "files_after"}
#: The top-level fields of trajudge's own trajectory records.
_TRAJECTORY_FIELDS = frozenset(Trajectory.model_fields)


def is_inspect_log(obj: Any) -> bool:
    return isinstance(obj, dict) and "eval" in obj and ("samples" in obj or "status" in obj)


def is_swe_agent(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("trajectory"), list)
        and ("history" in obj or "info" in obj)
    )


def is_openhands_event(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    if isinstance(obj.get("kind"), str) and obj["kind"].endswith("Event") and "source" in obj:
        return True
    return "source" in obj and ("action" in obj or "observation" in obj)


def first_record_format(first: Any) -> str | None:
    """The format told by a file's first record alone, or None when the other records must
    be looked at too (see :func:`records_format`)."""
    if container_of(first) is not None:
        return "otel"
    if is_tau2_results(first):
        return "tau2-bench"
    if is_inspect_log(first):
        return "inspect"
    if is_swe_agent(first):
        return "swe-agent"
    if isinstance(first, dict):
        if "traj" in first and "info" in first and "reward" in first:
            return "tau-bench"
        if _NATIVE_KEYS & set(first) or (
            "id" in first and "task_id" in first and "messages" not in first
        ):
            return "jsonl"
        for key, fmt in (("messages", None), ("items", "responses")):
            inner = first.get(key)
            if isinstance(inner, list):
                if fmt is not None:
                    return fmt
                if inner and is_langchain_message(inner[0]):
                    return "langchain"
                if inner and is_responses_item(inner[0]) and not is_chat_message(inner[0]):
                    return "responses"
                return "openai"
        if first and set(first) <= _TRAJECTORY_FIELDS:
            # only trajudge's own field names: meant as its JSON Lines, so the reader names
            # the field that is missing or wrong rather than "unrecognised format"
            return "jsonl"
    if isinstance(first, list) and first:
        # JSON Lines of conversations: one list of items per line
        inner = first[0]
        if is_langchain_message(inner):
            return "langchain"
        if is_openhands_event(inner):
            return "openhands"
        if is_chat_message(inner):
            return "openai"
        if is_responses_item(inner):
            return "responses"
    return None


class EveryRecord:
    """The formats told by all of a file's records together (a file that is one conversation:
    chat messages, Responses items, LangChain messages, OpenHands events), given one record at
    a time so that none is kept."""

    def __init__(self) -> None:
        self.openhands = self.langchain = self.chat = self.typed = True
        self.responses = False  # one Responses item with a type, at least

    def add(self, obj: Any) -> None:
        self.openhands = self.openhands and is_openhands_event(obj)
        self.langchain = self.langchain and is_langchain_message(obj)
        self.chat = self.chat and is_chat_message(obj)
        item = is_responses_item(obj)
        self.typed = self.typed and (item or (isinstance(obj, dict) and "type" in obj))
        self.responses = self.responses or (item and isinstance(obj.get("type"), str))

    def possible(self) -> bool:
        """Whether records still to come could make the records so far a format."""
        return self.openhands or self.langchain or self.chat or self.typed

    def format(self) -> str | None:
        """The format of the records given so far (at least one), or None."""
        if self.openhands:
            return "openhands"
        if self.langchain:
            return "langchain"
        if self.chat:
            return "openai"
        if self.responses and self.typed:
            return "responses"  # items of kinds trajudge does not read are counted by the reader
        return None


def records_format(records: list[Record]) -> str | None:
    """The format of a file's parsed records, or None when it is none of the known ones."""
    if not records:
        return None
    found = first_record_format(records[0][1])
    if found is not None:
        return found
    every = EveryRecord()
    for _, obj in records:
        every.add(obj)
    return every.format()


def detect(data: bytes, path: Path | None = None) -> str | None:
    """The format told by a file's magic bytes (``data`` holds its first bytes, or the whole
    file when ``path`` is not given), or None: Parquet, or a zip that is an Inspect log."""
    if data[:4] == PARQUET_MAGIC:
        return "parquet"
    if data[:4] == ZIP_MAGIC:
        return "inspect" if _zip_is_inspect(data if path is None else path) else None
    return None


def _zip_is_inspect(source: bytes | Path) -> bool:
    import io
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source) as z:
            names = set(z.namelist())
    except zipfile.BadZipFile:
        return False
    return "header.json" in names or any(n.startswith("_journal/") for n in names)


_DESCRIPTIONS = {
    "jsonl": "trajudge's native JSON Lines",
    "parquet": "trajudge's native Parquet",
    "openai": "OpenAI chat messages",
    "responses": "OpenAI Responses API items",
    "langchain": "LangChain messages_to_dict dumps",
    "otel": "an OpenTelemetry trace export",
    "tau-bench": "a τ-bench result file",
    "tau2-bench": "a τ²-bench result file",
    "inspect": "an Inspect AI eval log",
    "swe-agent": "a SWE-agent .traj file",
    "openhands": "an OpenHands trajectory",
}


def format_name(fmt: str) -> str:
    return _DESCRIPTIONS.get(fmt, fmt)


def describe(data: bytes, first: Record | None, count: int = 1, *, more: bool = False) -> str:
    """What a file looks like, in a few words, for the error on an unrecognised file: from its
    first bytes ``data``, its first record (None when it is not JSON) and how many records it
    holds (``more``: at least that many, the file was not read to its end)."""
    if data[:4] == ZIP_MAGIC:
        import importlib.util

        if importlib.util.find_spec("inspect_ai") is None:
            return "a zip archive (an Inspect .eval log? install trajudge[inspect])"
        return "a zip archive that is not an Inspect .eval log (no header.json)"
    if data[:4] == PARQUET_MAGIC:
        return "a Parquet file"
    if first is None:  # with more: no record ends within the bytes read, nor starts { or [
        return "not JSON objects or lists" if more else "not JSON"
    value = first[1]
    if isinstance(value, dict):
        keys = ", ".join(sorted(value)[:6]) + (", ..." if len(value) > 6 else "")
        if more:
            return f"at least {count:,} JSON objects with keys {keys}"
        return f"{'a JSON object' if count == 1 else f'{count} JSON objects'} with keys {keys}"
    if isinstance(value, list):
        return "JSON lines of lists"
    return f"JSON values of type {type(value).__name__}"
