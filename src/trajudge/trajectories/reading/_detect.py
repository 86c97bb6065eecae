"""Which format a file is in, and a one-line description of a file in none.

:func:`detect` looks at the magic bytes and the parsed JSON records; :func:`describe` names
what an unrecognised file looks like so the error can say what to do ("a JSON array of chat
messages: use --format openai").
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, cast

from trajudge.trajectories._io import Record
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._readers import BY_NAME, READERS, Rule, resolve
from trajudge.trajectories.readers.chat._langchain import is_langchain_message
from trajudge.trajectories.readers.chat._openai_file import OpenAIRecord, is_chat_message
from trajudge.trajectories.readers.chat._responses import is_responses_item
from trajudge.trajectories.readers.otel._otel_spans import container_of

PARQUET_MAGIC = b"PAR1"
ZIP_MAGIC = b"PK\x03\x04"

_NATIVE_KEYS = {"steps", "final_answer", "files_before", "files_after"}
#: The top-level fields of trajudge's own trajectory records.
_TRAJECTORY_FIELDS = frozenset(Trajectory.model_fields)


# The tests that tell a format, named in the table of readers (``_readers.py``). The tests of
# records are tried in the table's rank order, so each may take for granted that those ranked
# before it failed.


def is_parquet(data: bytes, path: Path | None) -> bool:
    return data[:4] == PARQUET_MAGIC


def is_inspect_zip(data: bytes, path: Path | None) -> bool:
    return data[:4] == ZIP_MAGIC and _zip_is_inspect(data if path is None else path)


def is_trace_export(obj: Any) -> bool:
    return container_of(obj) is not None


def is_inspect_log(obj: Any) -> bool:
    return isinstance(obj, dict) and "eval" in obj and ("samples" in obj or "status" in obj)


def is_swe_agent(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    if isinstance(obj.get("trajectory"), list):
        return "history" in obj or "info" in obj
    # a demonstration: only ``history``, whose messages carry SWE-agent's ``message_type``
    history = obj.get("history")
    return (
        "trajectory" not in obj
        and isinstance(history, list)
        and any(isinstance(h, dict) and "message_type" in h for h in history[:3])
    )


def is_tau_bench_result(obj: Any) -> bool:
    return isinstance(obj, dict) and "traj" in obj and "info" in obj and "reward" in obj


def is_native_record(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    if _NATIVE_KEYS & set(obj) or ("id" in obj and "task_id" in obj and "messages" not in obj):
        return True
    # only trajudge's own field names: meant as its JSON Lines, so the reader names the field
    # that is missing or wrong rather than "unrecognised format"; with a list of messages or
    # items it is a conversation, told by the tests ranked after this one
    return (
        bool(obj)
        and set(obj) <= _TRAJECTORY_FIELDS
        and not isinstance(obj.get("messages"), list)
        and not isinstance(obj.get("items"), list)
    )


def _first_message(obj: Any) -> Any:
    """The first message of a conversation record: of an object's ``messages`` list, or of a
    line that is a list (JSON Lines of conversations); None when there is none."""
    inner = obj.get("messages") if isinstance(obj, dict) else obj
    return inner[0] if isinstance(inner, list) and inner else None


def is_langchain_conversation(obj: Any) -> bool:
    if isinstance(obj, dict) and not _record_keys_only(obj, "messages"):
        return False
    return is_langchain_message(_first_message(obj))


def is_openhands_event(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    if isinstance(obj.get("kind"), str) and obj["kind"].endswith("Event") and "source" in obj:
        return True
    return "source" in obj and ("action" in obj or "observation" in obj)


def is_openhands_conversation(obj: Any) -> bool:
    return isinstance(obj, list) and bool(obj) and is_openhands_event(obj[0])


def is_responses_conversation(obj: Any) -> bool:
    first = _first_message(obj)
    if is_responses_item(first) and not is_chat_message(first):
        return True
    return (
        isinstance(obj, dict)
        and not isinstance(obj.get("messages"), list)
        and isinstance(obj.get("items"), list)
        and _record_keys_only(obj, "items")
    )


# the keys a conversation record may have beside its list (``OpenAIRecord``'s fields; the chat
# logs' records take the same ones): an object with others is another tool's file that happens
# to hold ``messages`` (a Gemini CLI session), told by its closest format rather than refused
# with a field error of this one
_RECORD_KEYS = frozenset(OpenAIRecord.model_fields) - {"messages"}


def _record_keys_only(obj: dict[str, Any], key: str) -> bool:
    return set(obj) - {key} <= _RECORD_KEYS


def is_chat_conversation(obj: Any) -> bool:
    if isinstance(obj, dict):
        return isinstance(obj.get("messages"), list) and _record_keys_only(obj, "messages")
    return isinstance(obj, list) and bool(obj) and is_chat_message(obj[0])


def responses_item_sign(obj: Any) -> bool | None:
    """What a record says of a file that is one list of Responses items: True for an item with
    a type; None for one that fits but tells nothing alone, an item without a type (a chat
    message may look the same) or an object of another type (an item of a kind trajudge does
    not read, which the reader counts); False for neither."""
    item = is_responses_item(obj)
    if item and isinstance(obj.get("type"), str):
        return True
    if item or (isinstance(obj, dict) and "type" in obj):
        return None
    return False


_Test = Callable[[Any], bool | None]


@cache
def _first_tests() -> tuple[tuple[str, _Test], ...]:
    return _ranked([(r.first, r.name) for r in READERS if r.first is not None])


@cache
def _every_tests() -> tuple[tuple[str, _Test], ...]:
    return _ranked([(r.every, r.name) for r in READERS if r.every is not None])


def _ranked(tests: list[tuple[Rule, str]]) -> tuple[tuple[str, _Test], ...]:
    ranked = sorted(tests, key=lambda t: t[0].rank)
    return tuple((name, cast(_Test, resolve(t.test))) for t, name in ranked)


def first_record_format(first: Any) -> str | None:
    """The format told by a file's first record alone, or None when the other records must
    be looked at too (see :func:`records_format`)."""
    for name, test in _first_tests():
        if test(first):
            return name
    return None


class EveryRecord:
    """The formats told by all of a file's records together (a file that is one conversation:
    chat messages, Responses items, LangChain messages, OpenHands events), given one record at
    a time so that none is kept."""

    def __init__(self) -> None:
        self._open = _every_tests()  # the tests that no record so far failed, in rank order
        self._told: set[str] = set()  # the formats that a record told

    def add(self, obj: Any) -> None:
        failed: list[str] | None = None  # made only when needed: this runs for every record
        for name, test in self._open:
            said = test(obj)
            if said:
                self._told.add(name)
            elif said is not None:
                failed = [name] if failed is None else [*failed, name]
        if failed is not None:
            self._open = tuple(t for t in self._open if t[0] not in failed)

    def possible(self) -> bool:
        """Whether records still to come could make the records so far a format."""
        return bool(self._open)

    def format(self) -> str | None:
        """The format of the records given so far (at least one), or None."""
        for name, _ in self._open:
            if name in self._told:
                return name
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
    for r in READERS:
        if r.magic is not None and resolve(r.magic)(data, path):
            return r.name
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


def format_name(fmt: str) -> str:
    reader = BY_NAME.get(fmt)
    return fmt if reader is None else reader.description


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
        near = closest(value)
        if more:
            return f"at least {count:,} JSON objects with keys {keys}{near}"
        what = "a JSON object" if count == 1 else f"{count} JSON objects"
        return f"{what} with keys {keys}{near}"
    if isinstance(value, list):
        return "JSON lines of lists"
    return f"JSON values of type {type(value).__name__}"


def closest(record: dict[str, Any]) -> str:
    """``; closest to X (--format N): has ...; lacks ...`` naming the format whose records'
    keys ``record`` shares most of, or "" when it shares none with any."""
    have = set(record)
    best: tuple[int, float, str] | None = None
    for r in READERS:
        shared = len(have & set(r.keys))
        if shared and (best is None or (shared, shared / len(r.keys)) > best[:2]):
            best = (shared, shared / len(r.keys), r.name)
    if best is None:
        return ""
    reader = BY_NAME[best[2]]
    has = [k for k in reader.keys if k in have]
    lacks = [k for k in reader.keys if k not in have]
    out = f"; closest to {reader.description} (--format {reader.name}): has {', '.join(has)}"
    if lacks:
        out += f"; lacks {', '.join(lacks[:4])}" + (", ..." if len(lacks) > 4 else "")
    return out
