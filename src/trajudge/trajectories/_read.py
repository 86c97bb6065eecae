"""One entry point for every input format: :func:`read_trajectories`."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from trajudge.trajectories._errors import InputError
from trajudge.trajectories._io import Record, check_file, decode_utf8, load_json_records
from trajudge.trajectories._jsonl import trajectories_from_records
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._openai import openai_from_records
from trajudge.trajectories._otel import otel_from_records
from trajudge.trajectories._parquet import read_parquet_items
from trajudge.trajectories._spec import TaskSpec
from trajudge.trajectories._tau_bench import tau_bench_from_records

Format = Literal["auto", "jsonl", "parquet", "openai", "otel", "tau-bench"]
FORMATS: tuple[str, ...] = get_args(Format)
PARQUET_MAGIC = b"PAR1"


@dataclass(frozen=True)
class ImportResult:
    """Everything read from one file, validated: trajectories, task specs, format, file hash."""

    trajectories: list[Trajectory]
    specs: dict[str, TaskSpec] = field(default_factory=dict)
    fmt: str = "jsonl"
    sha256: str = ""
    source: str = ""


def detect_format(path: Path, first: Any) -> str:
    """Guess the format of a JSON file from its first record."""
    if isinstance(first, dict):
        if "resourceSpans" in first:
            return "otel"
        if "traj" in first and "info" in first and "reward" in first:
            return "tau-bench"
        if "messages" in first and "steps" not in first:
            return "openai"
    return "jsonl"


def read_trajectories(path: str | os.PathLike[str], *, fmt: str = "auto") -> ImportResult:
    """Read and validate a whole file of trajectories in any supported format.

    ``fmt`` is one of ``auto``, ``jsonl``, ``parquet``, ``openai``, ``otel``, ``tau-bench``.
    ``auto`` picks Parquet by its magic bytes (or a ``.parquet`` / ``.pq`` name) and the JSON
    formats by the keys of the first record: ``resourceSpans`` (otel), ``traj`` + ``info`` +
    ``reward`` (tau-bench), ``messages`` (openai), else the native JSON Lines.

    Everything is read and checked before anything is returned, so a caller never stores half a
    file; a bad file raises :class:`InputError` naming file, record and field.
    """
    if fmt not in FORMATS:
        raise InputError(
            str(path), None, "format", f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})"
        )
    p = check_file(path)
    data = p.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    if fmt == "parquet" or (
        fmt == "auto" and (data[:4] == PARQUET_MAGIC or p.suffix.lower() in (".parquet", ".pq"))
    ):
        items = read_parquet_items(p)
        return ImportResult([t for _, t in items], {}, "parquet", sha, str(p))
    records: list[Record] = load_json_records(p, decode_utf8(p, data))
    chosen = detect_format(p, records[0][1]) if fmt == "auto" else fmt
    specs: dict[str, TaskSpec] = {}
    if chosen == "otel":
        items = otel_from_records(p, records)
    elif chosen == "tau-bench":
        items, specs = tau_bench_from_records(p, records)
    elif chosen == "openai":
        items = openai_from_records(p, records)
    else:
        items = trajectories_from_records(p, records)
    return ImportResult([t for _, t in items], specs, chosen, sha, str(p))
