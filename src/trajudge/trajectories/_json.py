"""JSON from user files, parsed within the nesting limit (``TRAJUDGE_MAX_NESTING``).

``json.loads`` stops at about a thousand levels with a ``RecursionError``, and anything from
256 levels up parses but fails later, when pydantic-core serialises the record
(``PydanticSerializationError``): both were tracebacks. :func:`load_json` refuses deeper than
the limit with an :class:`InputError` naming the file and the record; readers that decode a
piece of a window themselves (``raw_decode``) call :func:`check_json_depth` on what they
decoded.
"""

from __future__ import annotations

import re
from typing import Any

from trajudge.core import INPUT_JSON, InputError
from trajudge.trajectories._limits import NESTING

_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_SQUARE = str.maketrans("{}", "[]")


def json_deeper_than(text: str, depth: int) -> bool:
    r"""Whether the JSON ``text`` nests more than ``depth`` arrays and objects.

    Linear and in C: escapes are dropped (so every ``"`` left opens or closes a string), then
    the strings, then everything but brackets; each removal of ``[]`` peels one level off.
    Meant for valid JSON (parse first): on broken JSON it may answer either way.

    >>> json_deeper_than('{"a": [[1, "]]]["]]}', 3), json_deeper_than('[[["\\\\"]]]', 2)
    (False, True)
    """
    if text.count("[") + text.count("{") <= depth:
        return False  # fewer openers than levels: most records, at the cost of two counts
    if "\\" in text:
        text = text.replace("\\\\", "").replace('\\"', "")
    brackets = _NOT_BRACKET.sub("", "".join(text.split('"')[::2])).translate(_SQUARE)
    for _ in range(depth):
        if not brackets:
            return False
        brackets = brackets.replace("[]", "")
    return bool(brackets)


def too_deep(file: str, record: str | None, field: str | None = None) -> InputError:
    return InputError(file, record=record, field=field, reason=NESTING.exceeded())


def check_json_depth(
    text: str,
    file: str,
    record: str | None,
    field: str | None = None,
    *,
    limit: int | None = None,
) -> None:
    """Raise :func:`too_deep` when the (valid) JSON ``text`` nests deeper than ``limit``
    (default: the limit in force)."""
    if json_deeper_than(text, NESTING.value if limit is None else limit):
        raise too_deep(file, record, field)


def load_json(
    text: str,
    file: str,
    record: str | None = None,
    field: str | None = None,
    *,
    limit: int | None = None,
) -> Any:
    """``json.loads`` for user input: a :class:`json.JSONDecodeError` as it is, nesting deeper
    than the limit an :class:`InputError` naming ``file``, ``record``, ``field`` and the limit.

    ``limit`` is the depth limit read once by a caller that decodes many values (reading it
    from the environment took a third of the time of a small value); default: the limit in
    force.

    >>> load_json("[" * 300 + "]" * 300, "x.json", "line 1")
    Traceback (most recent call last):
    ...
    trajudge...InputError: x.json: line 1: nesting depth over the limit of 200; raise ...
    """
    try:
        value = INPUT_JSON.decode(text)
    except RecursionError:  # a thousand levels and more: the decoder's own stop
        raise too_deep(file, record, field) from None
    # after parsing: bad JSON keeps json's message
    check_json_depth(text, file, record, field, limit=limit)
    return value
