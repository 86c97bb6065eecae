"""Canonical JSON: the one serialisation every hash and cache key of trajudge is made from.

A module of its own (no pydantic) so that what needs only the hashing does not load the model.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any


def canonical_json(value: Any) -> str:
    """Serialise ``value`` to a canonical JSON string (sorted keys, no spaces).

    Two argument dicts that differ only in key order give the same string, which is what
    loop detection and caching need.

    >>> canonical_json({"b": 1, "a": [1, 2]})
    '{"a":[1,2],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def too_many_digits() -> str:
    """What a number past Python's integer-digits limit is called in an error (JSON and YAML).

    >>> too_many_digits()
    'a number with more than 4,300 digits'
    """
    return f"a number with more than {sys.get_int_max_str_digits():,} digits"


class InputJSONDecoder(json.JSONDecoder):
    """The standard decoder, but a number longer than Python's integer-digits limit (4,300
    digits, CVE-2020-10735) is a :class:`json.JSONDecoder` error with its position, like any
    other bad JSON, instead of a bare ``ValueError`` that callers catching decode errors miss.

    >>> InputJSONDecoder().decode('{"n": 12}')
    {'n': 12}
    >>> InputJSONDecoder().decode('{"n": ' + "9" * 5000 + "}")
    Traceback (most recent call last):
    ...
    json.decoder.JSONDecodeError: a number with more than 4,300 digits: line 1 column 7 (char 6)
    """

    def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
        try:
            return super().raw_decode(s, idx)
        except json.JSONDecodeError:
            raise
        except ValueError as exc:
            if "integer string conversion" not in str(exc):
                raise
            most = sys.get_int_max_str_digits()
            found = re.compile(rf"\d{{{most + 1},}}").search(s, idx)
            pos = found.start() if found is not None else idx
            raise json.JSONDecodeError(too_many_digits(), s, pos) from None


INPUT_JSON = InputJSONDecoder()
"""One shared instance (the decoder keeps no state between calls)."""


def loads_input(text: str | bytes) -> Any:
    """``json.loads`` for what users and other tools wrote (see :class:`InputJSONDecoder`).

    >>> loads_input(b'[1, "a"]')
    [1, 'a']
    """
    if isinstance(text, (bytes, bytearray)):  # as json.loads decodes bytes
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    return INPUT_JSON.decode(text)
