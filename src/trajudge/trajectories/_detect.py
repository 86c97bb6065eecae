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
from trajudge.trajectories._openai import is_chat_message
from trajudge.trajectories._otel_spans import container_of
from trajudge.trajectories._responses import is_responses_item
from trajudge.trajectories._tau2_bench import is_tau2_results

PARQUET_MAGIC = b"PAR1"
ZIP_MAGIC = b"PK\x03\x04"

_NATIVE_KEYS = {"steps", "final_answer", "files_before", "files_after"}


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


def records_format(records: list[Record]) -> str | None:
    """The format of a file's parsed records, or None when it is none of the known ones."""
    if not records:
        return None
    found = first_record_format(records[0][1])
    if found is not None:
        return found
    objs = [obj for _, obj in records]
    if all(is_openhands_event(o) for o in objs):
        return "openhands"
    if all(is_langchain_message(o) for o in objs):
        return "langchain"
    if all(is_chat_message(o) for o in objs):
        return "openai"
    if any(is_responses_item(o) and isinstance(o.get("type"), str) for o in objs) and all(
        is_responses_item(o) or (isinstance(o, dict) and "type" in o) for o in objs
    ):
        return "responses"  # items of kinds trajudge does not read are counted by the reader
    return None


def detect(data: bytes, records: list[Record] | None, path: Path | None = None) -> str | None:
    """The format of a file from its first bytes (the whole file when ``path`` is not given)
    and, when it is JSON, its records; None when it is in no known format."""
    if data[:4] == PARQUET_MAGIC:
        return "parquet"
    if data[:4] == ZIP_MAGIC:
        return "inspect" if _zip_is_inspect(data if path is None else path) else None
    return records_format(records) if records else None


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


def describe(data: bytes, records: list[Record] | None) -> str:
    """What a file looks like, in a few words, for the error on an unrecognised file."""
    if data[:4] == ZIP_MAGIC:
        import importlib.util

        if importlib.util.find_spec("inspect_ai") is None:
            return "a zip archive (an Inspect .eval log? install trajudge[inspect])"
        return "a zip archive that is not an Inspect .eval log (no header.json)"
    if data[:4] == PARQUET_MAGIC:
        return "a Parquet file"
    if records is None:
        return "not JSON"
    first = records[0][1]
    if isinstance(first, dict):
        keys = ", ".join(sorted(first)[:6]) + (", ..." if len(first) > 6 else "")
        n = len(records)
        return f"{'a JSON object' if n == 1 else f'{n} JSON objects'} with keys {keys}"
    if isinstance(first, list):
        return "JSON lines of lists"
    return f"JSON values of type {type(first).__name__}"
