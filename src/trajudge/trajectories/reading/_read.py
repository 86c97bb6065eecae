"""One entry point for every input format: :func:`read_trajectories` (a whole file) and
:func:`stream_trajectories` (one trajectory at a time)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from trajudge.core import InputError
from trajudge.trajectories._census import LOSSES, Held, Loss
from trajudge.trajectories._formats import FORMATS
from trajudge.trajectories._io import Record, check_file, decode_utf8, read_whole
from trajudge.trajectories._json import load_json
from trajudge.trajectories._limits import RECORD
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._options import Ignored, ReadOptions, iter_options
from trajudge.trajectories._read_functions import Source
from trajudge.trajectories._readers import BY_NAME, READERS, Reader
from trajudge.trajectories._spec import TaskSpec
from trajudge.trajectories._stream import iter_json_records
from trajudge.trajectories.reading._detect import detect
from trajudge.trajectories.reading._sniff import Sniffed, refusal, sniff
from trajudge.trajectories.reading._trajectory_stream import (
    Specs,
    TrajectoryStream,
    census_source,
    checked_items,
    hinted,
)

_HEAD = 4096  # bytes looked at for magic numbers and the first character


@dataclass(frozen=True)
class ImportResult:
    """Everything read from one file, validated: trajectories, task specs, format, file hash.

    ``ignored`` counts what the reader saw but did not use (see :class:`Ignored`); ``losses``
    are the differences between what the source held and what was read that the caller
    accepted (see :mod:`trajudge.trajectories._census`).
    """

    trajectories: list[Trajectory]
    specs: dict[str, TaskSpec] = field(default_factory=dict)
    fmt: str = "jsonl"
    sha256: str = ""
    source: str = ""
    ignored: Ignored = field(default_factory=Ignored)
    losses: list[Loss] = field(default_factory=list)
    held: Held | None = None


def _file_sha256(p: Path) -> str:
    with open(p, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _head(p: Path) -> bytes:
    with open(p, "rb") as fh:
        return fh.read(_HEAD)


def stream_trajectories(
    path: str | os.PathLike[str],
    *,
    fmt: str = "auto",
    options: ReadOptions | None = None,
    strict: bool = False,
    accept_loss: Iterable[str] = (),
) -> TrajectoryStream:
    """Read a file of trajectories in any supported format, one trajectory at a time.

    Arguments as for :func:`read_trajectories`. The file is never held whole when its format
    has one trajectory per record (native JSONL and Parquet, τ-bench, OpenAI, Responses and
    LangChain records): a JSON list or JSON Lines file is decoded record by record, a Parquet
    file a few hundred rows at a time. The format is detected from the first bytes and the
    first record (the records after it for a file that is one conversation), within the first
    ``TRAJUDGE_MAX_SNIFF_BYTES`` of the file: a file whose format they do not tell is refused
    unless ``fmt`` names it.

    Raises :class:`InputError` at once for an unknown, unreadable or unrecognised file, and
    from the iteration for a bad record (see :class:`TrajectoryStream`).
    """
    if fmt not in FORMATS:
        raise InputError(
            str(path),
            field="format",
            reason=f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})",
        )
    opts = options or ReadOptions()
    accept = _accepted(str(path), accept_loss)
    folder = Path(path)
    if folder.is_dir():
        for r in READERS:
            if r.folder is not None and fmt in ("auto", r.name) and any(folder.glob(r.folder)):
                return _folder_stream(r, folder, r.folder, opts, strict, accept)
    p = check_file(path)
    file = str(p)
    head = _head(p)
    ignored = Ignored()
    auto = fmt == "auto"
    specs: Specs = {}
    src = Source(p, iter_json_records(p), opts, ignored, specs)
    reader = _file_reader(fmt, head, p)
    detected = None
    if reader is None:
        found = _sniff_json(p, head, auto)
        detected = None if found is None else found.fmt
        if auto and detected is None:
            raise refusal(file, head, found)
        reader = BY_NAME[detected if auto and detected is not None else fmt]
    src, held, at = census_source(reader, src)
    items = checked_items(reader, src)
    if detected is not None and detected != reader.name:
        items = hinted(items, detected)
    return TrajectoryStream(
        iter_options(file, items, opts),
        source=file,
        fmt=reader.name,
        sha256=_file_sha256(p),
        specs=specs,
        ignored=ignored,
        strict=strict,
        held=held,
        accept=accept,
        at=at,
    )


def _accepted(file: str, names: Iterable[str]) -> frozenset[str]:
    """The losses a caller accepts, each checked to be a count the census makes."""
    out = frozenset(names)
    for name in sorted(out):
        if name not in LOSSES:
            raise InputError(
                file,
                field="accept_loss",
                reason=f"unknown loss {name!r} (choose from {', '.join(LOSSES)})",
            )
    return out


def _file_reader(fmt: str, head: bytes, p: Path) -> Reader | None:
    """The reader, of those told before any JSON is parsed (by magic bytes or file name), that
    reads ``p``: the one ``fmt`` names, or under ``auto`` the first that ``head`` or the suffix
    tells."""
    auto = fmt == "auto"
    magic = detect(head, p) if auto else None
    suffix = p.suffix.lower()
    for reader in READERS:
        if reader.magic is None and not reader.suffixes:
            continue
        if fmt == reader.name or (auto and (magic == reader.name or suffix in reader.suffixes)):
            return reader
    return None


def _sniff_json(p: Path, head: bytes, auto: bool) -> Sniffed | None:
    """What the first bytes of a JSON file tell (see :func:`sniff`); None for a file that is
    not JSON at all when the format is ``auto`` (the caller names what it looks like)."""
    try:
        return sniff(p)
    except InputError:
        start = head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
        if auto and start and start not in (b"{", b"["):
            return None  # binary or other text
        raise


def read_trajectories(
    path: str | os.PathLike[str],
    *,
    fmt: str = "auto",
    options: ReadOptions | None = None,
    strict: bool = False,
    accept_loss: Iterable[str] = (),
) -> ImportResult:
    """Read and validate a whole file of trajectories in any supported format.

    ``fmt`` is one of :data:`FORMATS`; ``auto`` recognises each format by its magic bytes or
    its JSON shape, and names what an unrecognised file looks like. ``options`` supplies
    ``task_id`` / ``trial`` / ``outcome`` (and a mapping) for files that lack them, and
    ``per_turn`` for OTel conversations. With ``strict`` anything a reader did not use is an
    error instead of a count in :attr:`ImportResult.ignored`. Every reader counts what the
    source holds (tool calls, failed calls, user messages, tokens) and a file whose
    trajectories hold less or more is refused, unless ``accept_loss`` names that count (the
    accepted differences are in :attr:`ImportResult.losses`).

    Everything is read and checked before anything is returned, so a caller never stores half a
    file; a bad file raises :class:`InputError` naming file, record and field. To read a big
    file one trajectory at a time, see :func:`stream_trajectories`.
    """
    stream = stream_trajectories(
        path, fmt=fmt, options=options, strict=strict, accept_loss=accept_loss
    )
    trajectories = list(stream)
    return ImportResult(
        trajectories,
        stream.specs,
        stream.fmt,
        stream.sha256,
        stream.source,
        stream.ignored,
        stream.losses,
        stream.held,
    )


def _folder_stream(
    reader: Reader,
    folder: Path,
    pattern: str,
    opts: ReadOptions,
    strict: bool,
    accept: frozenset[str],
) -> TrajectoryStream:
    """A folder that is one input: a JSON record in each file named ``pattern``, in file-name
    order (an OpenHands SDK ``events`` folder)."""
    import json

    records: list[Record] = []
    digest = hashlib.sha256()
    for f in sorted(folder.glob(pattern)):
        data = read_whole(f, RECORD)  # each file is one record
        digest.update(data)
        try:
            records.append((f.name, load_json(decode_utf8(f, data), str(f))))
        except json.JSONDecodeError as exc:
            raise InputError(
                str(f), reason=f"invalid JSON: {exc.msg} (line {exc.lineno})"
            ) from None
    ignored = Ignored()
    specs: Specs = {}
    src, held, at = census_source(reader, Source(folder, iter(records), opts, ignored, specs))
    items = checked_items(reader, src)
    return TrajectoryStream(
        iter_options(str(folder), items, opts),
        source=str(folder),
        fmt=reader.name,
        sha256=digest.hexdigest(),
        specs=specs,
        ignored=ignored,
        strict=strict,
        held=held,
        accept=accept,
        at=at,
    )


def detect_format(path: str | os.PathLike[str]) -> str | None:
    """The format ``auto`` would read ``path`` as, or None when it is in no known format (or
    in none that its first ``TRAJUDGE_MAX_SNIFF_BYTES`` tell)."""
    p = check_file(path)
    found = detect(_head(p), p)
    if found is not None:
        return found
    suffix = p.suffix.lower()
    for reader in READERS:
        if reader.detect_by_suffix and suffix in reader.suffixes:
            return reader.name
    try:
        return sniff(p).fmt
    except InputError:
        return None
