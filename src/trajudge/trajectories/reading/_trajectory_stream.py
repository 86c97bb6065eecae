"""The stream a read gives: :class:`TrajectoryStream` (the trajectories one at a time, a bad
record named in one line, the census compared when the iteration ends) and the plumbing that
counts the source's records as the reader takes them.

Apart from :mod:`._read` (the entry points: which reader reads a file or folder), because
this is what happens once the reader is chosen, whatever the format.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import ValidationError

from trajudge.core import InputError
from trajudge.trajectories._census import Held, Loss, add_built, check
from trajudge.trajectories._io import Record, unique_items, validation_error
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._options import Ignored
from trajudge.trajectories._read_functions import Source
from trajudge.trajectories._readers import Reader, resolve
from trajudge.trajectories._spec import TaskSpec
from trajudge.trajectories.reading._detect import format_name

Item = tuple[str, Trajectory]  # (record label, trajectory)
Specs = dict[str, TaskSpec]


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


def checked_items(reader: Reader, src: Source) -> Iterator[Item]:
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


def census_source(reader: Reader, src: Source) -> tuple[Source, Held | None, _At]:
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


def hinted(items: Iterator[Item], detected: str) -> Iterator[Item]:
    """``items``, with a hint on errors when the file looks like another format."""
    try:
        yield from items
    except InputError as exc:
        hint = f"the file looks like {format_name(detected)}: use --format {detected}"
        raise InputError(
            exc.file, record=exc.record, field=exc.field, reason=f"{exc.reason}; {hint}"
        ) from None
