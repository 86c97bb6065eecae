"""What a caller can add to a file that lacks it, and what a reader reports it left out.

* :class:`ReadOptions`: ``task_id``, ``trial`` and ``outcome`` given on the command line, a
  mapping (trajectory id -> those fields) read by :func:`load_mapping`, and ``per_turn`` (a
  multi-turn OTel conversation as one trajectory per turn).
* :class:`Ignored`: every reader counts what it saw but did not use (spans, messages, items of
  kinds it does not know), with where each was, so nothing is lost without a word.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from trajudge.core import InputError
from trajudge.trajectories._io import check_file, decode_utf8, kind, read_whole, validation_error
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._yaml import load_yaml

_MAP_FIELDS = ("task_id", "trial", "outcome")


@dataclass(frozen=True)
class ReadOptions:
    """Values for files that lack them; see :func:`apply_options`."""

    task_id: str | None = None
    trial: int | None = None
    outcome: bool | None = None
    mapping: Mapping[str, Mapping[str, Any]] | None = None
    per_turn: bool = False


@dataclass
class Ignored:
    """Counts of what a reader did not use, by kind, with the places (for ``--verbose``)."""

    found: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def add(self, one: str, many: str, where: str) -> None:
        """Count one thing left out: ``one`` / ``many`` name it in the singular / plural."""
        self.found.setdefault((one, many), []).append(where)

    def __bool__(self) -> bool:
        return bool(self.found)

    def lines(self) -> list[str]:
        """One line per kind: ``3 TOOL spans without tool attributes were ignored``."""
        out = []
        for (one, many), places in self.found.items():
            n = len(places)
            out.append(f"1 {one} was ignored" if n == 1 else f"{n} {many} were ignored")
        return out

    def details(self) -> list[str]:
        """Every place, one line each: ``TOOL span without tool attributes: line 3: spans[2]``."""
        return [f"{one}: {where}" for (one, _), places in self.found.items() for where in places]


def _coerce(src: str, where: str, key: str, value: Any) -> Any:
    if value is None or value == "":
        return None
    if key == "task_id":
        if isinstance(value, int | str) and not isinstance(value, bool):
            return str(value)
    elif key == "trial":
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
    elif key == "outcome":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "pass", "yes"):
            return True
        if text in ("false", "0", "fail", "no"):
            return False
    raise InputError(
        src, record=where, field=key, reason=f"cannot read {kind(value)} {value!r} as {key}"
    )


def load_mapping(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Read a mapping of trajectory id -> ``task_id`` / ``trial`` / ``outcome``.

    A CSV file with an ``id`` column and any of the three others, or a JSON / YAML object
    ``{id: {task_id: ..., trial: ..., outcome: ...}}``. Unknown columns are errors.
    """
    p = check_file(path)
    text = decode_utf8(p, read_whole(p))
    src = str(p)
    rows: list[tuple[str, dict[str, Any]]] = []
    if p.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        cols = reader.fieldnames or []
        if "id" not in cols:
            raise InputError(src, field="id", reason="missing column")
        extra = [c for c in cols if c not in ("id", *_MAP_FIELDS)]
        if extra:
            raise InputError(
                src, field=extra[0], reason=f"unknown column (known: id, {', '.join(_MAP_FIELDS)})"
            )
        for n, row in enumerate(reader, start=2):
            rows.append((f"line {n}", dict(row)))
    else:
        doc = load_yaml(text, src)
        if not isinstance(doc, dict):
            raise InputError(src, reason=f"expected an object of id -> fields, got {kind(doc)}")
        for key, value in doc.items():
            if not isinstance(value, dict):
                raise InputError(
                    src, record=str(key), reason=f"expected an object, got {kind(value)}"
                )
            extra = [k for k in value if k not in _MAP_FIELDS]
            if extra:
                raise InputError(src, record=str(key), field=str(extra[0]), reason="unknown field")
            rows.append((str(key), {"id": key, **value}))
    out: dict[str, dict[str, Any]] = {}
    for where, row in rows:
        tid = str(row.get("id") or "").strip()
        if not tid:
            raise InputError(src, record=where, field="id", reason="missing or empty")
        if tid in out:
            raise InputError(src, record=where, field="id", reason=f"duplicate id {tid!r}")
        values = {k: _coerce(src, where, k, row.get(k)) for k in _MAP_FIELDS}
        out[tid] = {k: v for k, v in values.items() if v is not None}
    if not out:
        raise InputError(src, reason="the mapping is empty")
    return out


def apply_options(
    file: str, items: Iterable[tuple[str, Trajectory]], opts: ReadOptions
) -> list[tuple[str, Trajectory]]:
    """Apply ``task_id`` / ``trial`` / ``outcome`` from the command line and the mapping.

    ``task_id`` replaces every trajectory's task; ``trial`` is the trial of a single
    trajectory, or the first of consecutive trials when the file holds several (they are then
    repeated runs of that task); ``outcome`` fills trajectories without one. The mapping then
    sets the fields it names per trajectory id; an id in the mapping that is not in the file is
    an error (a typo would otherwise leave a trajectory unmapped without a word).
    """
    return list(iter_options(file, items, opts))


def iter_options(
    file: str, items: Iterable[tuple[str, Trajectory]], opts: ReadOptions
) -> Iterator[tuple[str, Trajectory]]:
    """:func:`apply_options` one trajectory at a time; the mapping's ids are checked at the
    end (the error comes once every trajectory has been read)."""
    seen: set[str] = set()
    for n, (label, t) in enumerate(items):
        update: dict[str, Any] = {}
        if opts.task_id is not None:
            update["task_id"] = opts.task_id
            update["trial"] = (opts.trial or 0) + n  # the n-th run of that task
        elif opts.trial is not None:
            update["trial"] = opts.trial + n
        if opts.outcome is not None and t.outcome is None:
            update["outcome"] = opts.outcome
        if opts.mapping:
            seen.add(t.id)
            if t.id in opts.mapping:
                update.update(opts.mapping[t.id])
        if update:
            try:
                t = Trajectory.model_validate({**t.model_dump(), **update})
            except ValidationError as exc:
                raise validation_error(file, label, exc) from None
        yield label, t
    if opts.mapping:
        missing = sorted(set(opts.mapping) - seen)
        if missing:
            ids = ", ".join(repr(i) for i in missing[:3])
            raise InputError(
                file,
                field="mapping",
                reason=f"ids not in the file: {ids}" + (" ..." if len(missing) > 3 else ""),
            )


def as_json_text(value: Any) -> str:
    """A value as text: strings unchanged, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_count(value: Any) -> int | None:
    """``value`` when it is a count (a non-negative integer, not a boolean), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
