"""One entry point for every input format: :func:`read_trajectories`."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from trajudge.trajectories._detect import describe, detect, format_name
from trajudge.trajectories._errors import InputError
from trajudge.trajectories._inspect import read_inspect
from trajudge.trajectories._io import Record, check_file, decode_utf8, load_json_records
from trajudge.trajectories._jsonl import trajectories_from_records
from trajudge.trajectories._langchain import langchain_from_records
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._openai import openai_from_records
from trajudge.trajectories._openhands import openhands_from_records
from trajudge.trajectories._options import Ignored, ReadOptions, apply_options
from trajudge.trajectories._otel import otel_from_records
from trajudge.trajectories._parquet import read_parquet_items
from trajudge.trajectories._responses import responses_from_records
from trajudge.trajectories._spec import TaskSpec
from trajudge.trajectories._swe_agent import swe_agent_from_records
from trajudge.trajectories._tau2_bench import tau2_from_records
from trajudge.trajectories._tau_bench import tau_bench_from_records

Format = Literal[
    "auto",
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
]
FORMATS: tuple[str, ...] = get_args(Format)

Items = list[tuple[str, Trajectory]]
Specs = dict[str, TaskSpec]


@dataclass(frozen=True)
class ImportResult:
    """Everything read from one file, validated: trajectories, task specs, format, file hash.

    ``ignored`` counts what the reader saw but did not use (see :class:`Ignored`).
    """

    trajectories: list[Trajectory]
    specs: dict[str, TaskSpec] = field(default_factory=dict)
    fmt: str = "jsonl"
    sha256: str = ""
    source: str = ""
    ignored: Ignored = field(default_factory=Ignored)


def _records_reader(
    fmt: str,
) -> Callable[[Path, list[Record], ReadOptions, Ignored], tuple[Items, Specs]]:
    def no_specs(
        fn: Callable[[Path, list[Record], Ignored], Items],
    ) -> Callable[..., tuple[Items, Specs]]:
        return lambda p, r, o, i: (fn(p, r, i), {})

    readers: dict[
        str, Callable[[Path, list[Record], ReadOptions, Ignored], tuple[Items, Specs]]
    ] = {
        "jsonl": lambda p, r, o, i: (trajectories_from_records(p, r), {}),
        "openai": no_specs(openai_from_records),
        "responses": no_specs(responses_from_records),
        "langchain": no_specs(langchain_from_records),
        "otel": lambda p, r, o, i: (otel_from_records(p, r, o, i), {}),
        "tau-bench": lambda p, r, o, i: tau_bench_from_records(p, r),
        "tau2-bench": lambda p, r, o, i: tau2_from_records(p, r, i),
        "swe-agent": no_specs(swe_agent_from_records),
        "openhands": no_specs(openhands_from_records),
    }
    return readers[fmt]


def _parse(p: Path, data: bytes, auto: bool) -> list[Record] | None:
    """The JSON records of the file; None when it is not JSON at all (auto-detection only)."""
    try:
        text = decode_utf8(p, data)
    except InputError:
        if auto and data.lstrip()[:1] not in (b"{", b"["):
            return None  # binary: the caller names what it looks like
        raise
    try:
        return load_json_records(p, text)
    except InputError:
        if auto and text.strip() and text.lstrip()[:1] not in ("{", "["):
            return None
        raise


def read_trajectories(
    path: str | os.PathLike[str],
    *,
    fmt: str = "auto",
    options: ReadOptions | None = None,
    strict: bool = False,
) -> ImportResult:
    """Read and validate a whole file of trajectories in any supported format.

    ``fmt`` is one of :data:`FORMATS`; ``auto`` recognises each format by its magic bytes or
    its JSON shape, and names what an unrecognised file looks like. ``options`` supplies
    ``task_id`` / ``trial`` / ``outcome`` (and a mapping) for files that lack them, and
    ``per_turn`` for OTel conversations. With ``strict`` anything a reader did not use is an
    error instead of a count in :attr:`ImportResult.ignored`.

    Everything is read and checked before anything is returned, so a caller never stores half a
    file; a bad file raises :class:`InputError` naming file, record and field.
    """
    if fmt not in FORMATS:
        raise InputError(
            str(path), None, "format", f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})"
        )
    opts = options or ReadOptions()
    folder = Path(path)
    if folder.is_dir() and fmt in ("auto", "openhands") and any(folder.glob("event-*.json")):
        return _read_event_folder(folder, opts, strict)
    p = check_file(path)
    file = str(p)
    data = p.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    ignored = Ignored()
    auto = fmt == "auto"
    specs: Specs = {}
    if fmt == "parquet" or (
        auto and (detect(data, None) == "parquet" or p.suffix.lower() in (".parquet", ".pq"))
    ):
        items = read_parquet_items(p)
        chosen = "parquet"
    elif fmt == "inspect" or (
        auto and (detect(data, None) == "inspect" or p.suffix.lower() == ".eval")
    ):
        items = read_inspect(p, ignored)
        chosen = "inspect"
    else:
        records = _parse(p, data, auto)
        detected = detect(data, records)
        if auto and detected is None:
            supported = ", ".join(f for f in FORMATS if f != "auto")
            raise InputError(
                file,
                None,
                None,
                f"unrecognised format: {describe(data, records)} (supported: {supported})",
            )
        chosen = detected if auto and detected is not None else fmt
        assert records is not None
        try:
            if chosen == "inspect":
                items = read_inspect(p, ignored)
            else:
                items, specs = _records_reader(chosen)(p, records, opts, ignored)
        except InputError as exc:
            if detected is not None and detected != chosen:
                hint = f"the file looks like {format_name(detected)}: use --format {detected}"
                raise InputError(exc.file, exc.record, exc.field, f"{exc.reason}; {hint}") from None
            raise
    items = apply_options(file, items, opts)
    if strict and ignored:
        raise InputError(file, None, None, "; ".join(ignored.lines()) + " (--strict)")
    return ImportResult([t for _, t in items], specs, chosen, sha, file, ignored)


def _read_event_folder(folder: Path, opts: ReadOptions, strict: bool) -> ImportResult:
    """An OpenHands SDK ``events`` folder: one JSON file per event, in file-name order."""
    import json

    records: list[Record] = []
    digest = hashlib.sha256()
    for f in sorted(folder.glob("event-*.json")):
        data = f.read_bytes()
        digest.update(data)
        try:
            records.append((f.name, json.loads(decode_utf8(f, data))))
        except json.JSONDecodeError as exc:
            raise InputError(
                str(f), None, None, f"invalid JSON: {exc.msg} (line {exc.lineno})"
            ) from None
    ignored = Ignored()
    items = apply_options(str(folder), openhands_from_records(folder, records, ignored), opts)
    if strict and ignored:
        raise InputError(str(folder), None, None, "; ".join(ignored.lines()) + " (--strict)")
    return ImportResult(
        [t for _, t in items], {}, "openhands", digest.hexdigest(), str(folder), ignored
    )


def detect_format(path: str | os.PathLike[str]) -> str | None:
    """The format ``auto`` would read ``path`` as, or None when it is in no known format."""
    p = check_file(path)
    data = p.read_bytes()
    found = detect(data, None)
    if found is not None or p.suffix.lower() == ".eval":
        return found or "inspect"
    try:
        records = _parse(p, data, True)
    except InputError:
        return None
    return detect(data, records)
