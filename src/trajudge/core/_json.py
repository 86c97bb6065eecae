"""Canonical JSON: the one serialisation every hash and cache key of trajudge is made from.

A module of its own (no pydantic) so that what needs only the hashing does not load the model.
"""

from __future__ import annotations

import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Serialise ``value`` to a canonical JSON string (sorted keys, no spaces).

    Two argument dicts that differ only in key order give the same string, which is what
    loop detection and caching need.

    >>> canonical_json({"b": 1, "a": [1, 2]})
    '{"a":[1,2],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
