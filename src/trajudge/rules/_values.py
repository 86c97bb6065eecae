"""Value helpers shared by the checks: canonical keys, nested paths, equality and diffs.

Numbers compare by value (``250 == 250.0``), booleans never equal numbers, and dict key order
never matters. These helpers are on the hot path of every check, so they avoid building JSON
text unless a key is needed.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final


class _Missing:
    """Sentinel for a path that is not present in the arguments."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


MISSING: Final = _Missing()


def normalize(value: Any) -> Any:
    """Return ``value`` with every integral float turned into an int (recursively).

    >>> normalize({"amount": 250.0, "ratio": 0.5, "ok": True})
    {'amount': 250, 'ratio': 0.5, 'ok': True}
    """
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalize(v) for v in value]
    return value


# An integral float always prints with ".0" at the end of its digits (250.0) or with a
# positive exponent (1e+16); text with neither cannot hold one, so it is already canonical.
_INTEGRAL_FLOAT = re.compile(r"\.0(?![0-9])|[0-9][eE]\+")
# one encoder for every key: json.dumps with options builds a new encoder on each call
_ENCODE = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
).encode
_SHOW = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str).encode


def call_key(args: Any) -> str:
    """Canonical JSON of normalised arguments: equal keys mean equal arguments.

    >>> call_key({"b": 250.0, "a": [1]}) == call_key({"a": [1], "b": 250})
    True
    """
    text = _ENCODE(args)
    if _INTEGRAL_FLOAT.search(text) is None:
        return text
    return _ENCODE(normalize(args))


def values_equal(a: Any, b: Any) -> bool:
    """Structural equality with numbers by value and booleans kept apart from numbers.

    >>> values_equal([1, {"x": 2.0}], [1.0, {"x": 2}]), values_equal(True, 1)
    (True, False)
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def get_path(value: Any, parts: tuple[str | int, ...]) -> Any:
    """The value at a parsed path, or :data:`MISSING`.

    >>> get_path({"passengers": [{"dob": "1990-04-05"}]}, ("passengers", 0, "dob"))
    '1990-04-05'
    >>> get_path({"passengers": []}, ("passengers", 0, "dob"))
    <absent>
    """
    for part in parts:
        if isinstance(part, int):
            if not isinstance(value, list) or part >= len(value):
                return MISSING
        elif not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def join_path(prefix: str, part: str | int) -> str:
    """Append a key or an index to a display path: ``flights`` + 1 -> ``flights[1]``."""
    if isinstance(part, int):
        return f"{prefix}[{part}]"
    return f"{prefix}.{part}" if prefix else part


_PLAIN_LEAVES = frozenset((str, int, bool, type(None)))


def diff_values(expected: Any, actual: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Where two values differ: ``(path, expected, actual)`` for each differing leaf.

    A key present on one side only is reported with :data:`MISSING` on the other.

    >>> diff_values({"a": 1, "p": [{"dob": "x"}]}, {"a": 1.0, "p": [{"dob": "y"}], "z": 0})
    [('p[0].dob', 'x', 'y'), ('z', <absent>, 0)]
    """
    te, ta = type(expected), type(actual)
    if te is ta and te in _PLAIN_LEAVES:  # the common leaf: two strings, two ints
        return [] if expected == actual else [(path or "(args)", expected, actual)]
    if te is dict and ta is dict:
        out: list[tuple[str, Any, Any]] = []
        for key, ev in expected.items():
            sub = join_path(path, key)
            if key in actual:
                out.extend(diff_values(ev, actual[key], sub))
            else:
                out.append((sub, ev, MISSING))
        out.extend((join_path(path, k), MISSING, v) for k, v in actual.items() if k not in expected)
        return out
    if te is list and ta is list:
        out = []
        for i in range(max(len(expected), len(actual))):
            sub = join_path(path, i)
            if i >= len(actual):
                out.append((sub, expected[i], MISSING))
            elif i >= len(expected):
                out.append((sub, MISSING, actual[i]))
            else:
                out.extend(diff_values(expected[i], actual[i], sub))
        return out
    if values_equal(expected, actual):
        return []
    return [(path or "(args)", expected, actual)]


def show(value: Any, limit: int = 60) -> str:
    """A short one-line rendering of a value for check details."""
    if value is MISSING:
        return "<absent>"
    text = _SHOW(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_diffs(diffs: list[tuple[str, Any, Any]], limit: int = 3) -> str:
    """``field: expected X, got Y`` for the first few differences."""
    parts = [f"{p}: expected {show(e)}, got {show(a)}" for p, e, a in diffs[:limit]]
    if len(diffs) > limit:
        parts.append(f"(+{len(diffs) - limit} more)")
    return "; ".join(parts)
