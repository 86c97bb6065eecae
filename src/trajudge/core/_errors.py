"""The one error type for bad user input.

Every reader, spec loader and rubric loader raises :class:`InputError` for input that a user
can fix. The CLI turns it into one red line and exit code 2; nothing else is printed.
"""

from __future__ import annotations

_MOST = 1000  # characters of one part of a message: a hostile value is quoted, not pasted


def _bounded(text: str) -> str:
    """``text`` on one line, its middle left out past :data:`_MOST` characters.

    >>> _bounded("ab" * 2000)[:12], len(_bounded("ab" * 2000)) < 1100
    ('abababababab', True)
    """
    text = " ".join(text.split())
    if len(text) <= _MOST:
        return text
    head, tail = text[: _MOST * 3 // 4], text[-_MOST // 5 :]
    return f"{head} ... ({len(text) - len(head) - len(tail):,} characters left out) ... {tail}"


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

    Each part is one line; one longer than 1,000 characters (a hostile value quoted in the
    reason, a key of a megabyte) keeps its start and end with the length of what was left out.
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
        self.file = _bounded(str(file))
        self.record = None if record is None else _bounded(record)
        self.field = None if field is None else _bounded(field)
        self.reason = _bounded(str(reason))  # always one line, of bounded length
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
