"""One entry point for every input format: :func:`read_trajectories` (a whole file) and
:func:`stream_trajectories` (one trajectory at a time)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from trajudge.core import InputError
from trajudge.trajectories._census import LOSSES, Held, Loss, add_built, check
from trajudge.trajectories._detect import detect, format_name
from trajudge.trajectories._formats import FORMATS
from trajudge.trajectories._io import (
    Record,
    check_file,
    decode_utf8,
    read_whole,
    unique_items,
    validation_error,
)
from trajudge.trajectories._json import load_json
from trajudge.trajectories._limits import RECORD
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._options import Ignored, ReadOptions, iter_options
from trajudge.trajectories._readers import BY_NAME, READERS, Reader, Source, resolve
from trajudge.trajectories._sniff import Sniffed, refusal, sniff
from trajudge.trajectories._spec import TaskSpec
from trajudge.trajectories._stream import iter_json_records

Item = tuple[str, Trajectory]  # (record label, trajectory)
Specs = dict[str, TaskSpec]
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


class TrajectoryStream:
    """The trajectories of one file, read, validated and given one at a time.

    Made by :func:`stream_trajectories`. ``source``, ``fmt`` and ``sha256`` are known at once;
    ``specs`` (e.g. τ-bench's expected actions) and ``ignored`` are whole when the iteration
    ends, and ``count`` is the number of trajectories given so far. Iterate it once.

    When the iteration ends, what the source held (``held``, the reader's census) is compared
    with what was read (``made``): a difference not named in ``accept`` raises
    :class:`InputError`; the accepted ones are in ``losses``.

    A bad record raises :class:`InputError` FROM THE ITERATION, when it is reached: a caller
    that stores trajectories as they come must be able to undo them
    (:meth:`trajudge.store.Store.import_dataset` validates the whole stream before it writes).
    """

    def __init__(
        self,
        items: Iterator[Item],
        *,
        source: str,
        fmt: str,
        sha256: str,
        specs: Specs,
        ignored: Ignored,
        strict: bool,
        held: Held | None = None,
        accept: frozenset[str] = frozenset(),
        at: _At | None = None,
    ) -> None:
        self.source = source
        self.fmt = fmt
        self.sha256 = sha256
        self.specs = specs
        self.ignored = ignored
        self.count = 0
        self.held = held
        self.made = Held()
        self.losses: list[Loss] = []
        self.at = at or _At()
        self._accept = accept
        self._items: Iterator[Item] | None = items
        self._strict = strict

    def __iter__(self) -> Iterator[Trajectory]:
        if self._items is None:
            raise RuntimeError("a TrajectoryStream can be read once")
        items, self._items = self._items, None
        return self._run(items)

    def _run(self, items: Iterator[Item]) -> Iterator[Trajectory]:
        try:
            for _, t in items:
                self.count += 1
                add_built(self.made, t)
                yield t
        except InputError:
            raise  # named by the reader (an InputError is a ValueError too)
        except ValidationError as exc:
            # a value of a type the reader did not expect reached a model: the first error,
            # on one line, at the record being read
            raise validation_error(self.source, self.at.label, exc) from None
        except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
            # the safety net under every reader's own checks: a shape no check named is still
            # one line naming the file and the record, never a traceback
            what = " ".join(str(exc).split())[:200]
            raise InputError(
                self.source,
                record=self.at.label,
                reason=f"a value of an unexpected type or shape ({type(exc).__name__}: {what})",
            ) from None
        held = self.held
        if held is not None:
            for done in held.finish:
                try:
                    done(held)
                except Exception as exc:  # kept, and refused below
                    _broke(held, "the end", exc)
            failed = held.scratch.get(_FAILED)
            if failed is not None:
                # a census that breaks on a file the reader read whole is a trajudge bug:
                # refusing says so, where counting nothing would pass the loss unseen
                raise InputError(
                    self.source, reason=f"cannot count what the source holds: {failed}"
                )
            self.losses = check(self.source, held, self.made, self._accept)
        if self._strict and self.ignored:
            raise InputError(self.source, reason="; ".join(self.ignored.lines()) + " (--strict)")


def _items(reader: Reader, src: Source) -> Iterator[Item]:
    """The trajectories ``reader`` reads from ``src``, ids checked for repeats."""
    items = reader.read(src)
    return unique_items(str(src.path), items) if reader.streams else items


_FAILED = "census failed"


class _At:
    """The label of the record a reader took last (None before the first, or for a reader
    that reads the file itself), for an error the reader did not name."""

    label: str | None = None


def _broke(held: Held, where: str, exc: Exception) -> None:
    """Keep the first exception a census raised (a census is written not to raise: any
    exception is a bug, refused when the read ends; see ``TrajectoryStream``)."""
    held.scratch.setdefault(_FAILED, f"{where}: {type(exc).__name__}: {exc}")


def _taken(records: Iterator[Record], at: _At, held: Held, census: str | None) -> Iterator[Record]:
    """``records`` as the reader takes them: the last one's label kept in ``at``, each
    counted by the census ``census`` names (None: a census of the file itself, or none)."""
    count = None if census is None else resolve(census)
    for label, value in records:
        at.label = label
        if count is not None:
            try:
                count(label, value, held)
            except Exception as exc:  # kept, and refused at the end
                _broke(held, label, exc)
        yield label, value


def _census_source(reader: Reader, src: Source) -> tuple[Source, Held | None, _At]:
    """``src`` with its records counted by ``reader``'s census as the reader takes them, the
    census (None for a reader without one), and where the reader is (the last record's label).
    A census of the file itself runs once the reader has read it (and refused what it would
    refuse: a zip bomb is never opened by the census first)."""
    held, at = Held(), _At()
    records = _taken(src.records, at, held, reader.census)
    src = Source(src.path, records, src.options, src.ignored, src.specs)
    if reader.census_file is not None:
        count = resolve(reader.census_file)
        held.finish.append(lambda h: count(src.path, h))
    elif reader.census is None:
        return src, None, at
    return src, held, at


def _hinted(items: Iterator[Item], detected: str) -> Iterator[Item]:
    """``items``, with a hint on errors when the file looks like another format."""
    try:
        yield from items
    except InputError as exc:
        hint = f"the file looks like {format_name(detected)}: use --format {detected}"
        raise InputError(
            exc.file, record=exc.record, field=exc.field, reason=f"{exc.reason}; {hint}"
        ) from None


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
    src, held, at = _census_source(reader, src)
    items = _items(reader, src)
    if detected is not None and detected != reader.name:
        items = _hinted(items, detected)
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
    src, held, at = _census_source(reader, Source(folder, iter(records), opts, ignored, specs))
    items = _items(reader, src)
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
