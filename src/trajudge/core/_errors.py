"""The one error type for bad user input.

Every reader, spec loader and rubric loader raises :class:`InputError` for input that a user
can fix. The CLI turns it into one red line and exit code 2; nothing else is printed.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: names the file, the record (line number or index) and the field.

    The "file" is whatever the user gave that holds the fault: a path, an option such as
    ``--judge``, or a URL (without its credentials). Record and field are named by keyword
    where they are known:

    >>> err = InputError("runs.jsonl", record="line 3", field="steps[0].ok", reason="not a bool")
    >>> str(err)
    'runs.jsonl: line 3: steps[0].ok: not a bool'
    >>> str(InputError("--overlap", reason="must be in [0, 1], got 2"))
    '--overlap: must be in [0, 1], got 2'
    """

    def __init__(
        self,
        file: str,
        record: str | None = None,
        field: str | None = None,
        reason: str | None = None,
    ) -> None:
        if reason is None:
            # a reason given positionally in the record's place would be printed as a record
            raise TypeError("InputError needs a reason (reason=...)")
        self.file = str(file)
        self.record = record
        self.field = field
        self.reason = " ".join(str(reason).split())  # always one line
        super().__init__(str(self))

    def __reduce__(self) -> tuple[type[InputError], tuple[str, str | None, str | None, str]]:
        # pickled as its parts (a Ray worker raises it, the driver prints it)
        return (type(self), (self.file, self.record, self.field, self.reason))

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
