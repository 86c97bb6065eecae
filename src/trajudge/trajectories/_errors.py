"""The one error type for bad user input.

Every reader, spec loader and rubric loader raises :class:`InputError` for input that a user
can fix. The CLI turns it into one red line and exit code 2; nothing else is printed.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: names the file, the record (line number or index) and the field.

    >>> str(InputError("runs.jsonl", "line 3", "steps[0].ok", "expected a boolean"))
    'runs.jsonl: line 3: steps[0].ok: expected a boolean'
    """

    def __init__(
        self,
        file: str,
        record: str | None,
        field: str | None,
        reason: str,
    ) -> None:
        self.file = str(file)
        self.record = record
        self.field = field
        self.reason = " ".join(str(reason).split())  # always one line
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [self.file]
        if self.record:
            parts.append(self.record)
        if self.field:
            parts.append(self.field)
        parts.append(self.reason)
        return ": ".join(parts)


def pydantic_field(loc: tuple[object, ...]) -> str:
    """Turn a pydantic error location into a dotted path with indexes: ``steps[0].ok``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(record)"
