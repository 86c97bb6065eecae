"""The pieces every span container shares: the :class:`Span` record, OTLP ``AnyValue`` and
attribute decoding, ids, nanosecond times, and the checks that name a value of the wrong shape."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._io import kind

STATUS_ERROR = 2


@dataclass
class Span:
    """One span, whatever container it came from."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int  # nanoseconds
    end: int
    attrs: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    error: str | None  # the status message (or "status ERROR") when the status is ERROR
    resource: dict[str, Any]
    scope: str
    record: str
    path: str
    order: int
    depth: int = field(default=0)

    def where(self, key: str) -> str:
        return f"{self.path}.attributes.{key}"


def any_value(value: Any) -> Any:
    """Decode an OTLP JSON ``AnyValue`` (camelCase or snake_case keys)."""
    if not isinstance(value, dict):
        return value
    if any(v is None for v in value.values()):
        # every field spelled out, the unset ones null (Phoenix's /spans/otlpv1): the set one
        # is the value, not the first key present
        value = {k: v for k, v in value.items() if v is not None}
    for key in ("stringValue", "string_value"):
        if key in value:
            return value[key]
    for key in ("boolValue", "bool_value"):
        if key in value:
            return value[key]
    for key in ("intValue", "int_value"):
        if key in value:
            raw = value[key]
            return int(raw) if isinstance(raw, str) and raw.lstrip("-").isdigit() else raw
    for key in ("doubleValue", "double_value"):
        if key in value:
            return value[key]
    for key in ("arrayValue", "array_value"):
        if key in value:
            # a value of another shape is kept as it is, never dropped
            inner = value[key]
            items = inner.get("values", []) if isinstance(inner, dict) else inner
            return [any_value(v) for v in items] if isinstance(items, list) else items
    for key in ("kvlistValue", "kvlist_value"):
        if key in value:
            inner = value[key]
            items = inner.get("values", []) if isinstance(inner, dict) else inner
            return attributes(items) if isinstance(items, list) else items
    for key in ("bytesValue", "bytes_value"):
        if key in value:
            return value[key]
    return None


def attributes(
    items: Any, file: str = "", record: str | None = None, path: str = "attributes"
) -> dict[str, Any]:
    """An OTLP attribute list as a dict; a value that is not a list is an :class:`InputError`
    naming ``path``."""
    out: dict[str, Any] = {}
    if items is not None and not isinstance(items, list):
        raise InputError(
            file, record=record, field=path, reason=f"expected a list, got {kind(items)}"
        )
    for item in items or []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = any_value(item.get("value"))
    return out


def hex_id(raw: Any, size: int) -> str:
    """Ids in hex stay; base64 ids (protobuf JSON, Tempo) become hex."""
    if not isinstance(raw, str) or not raw:
        return ""
    text = raw.lower()
    if len(text) == size * 2 and all(c in "0123456789abcdef" for c in text):
        return text
    try:
        data = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        return raw
    return data.hex() if len(data) == size else raw


def nanos_at(span: dict[str, Any], keys: tuple[str, ...], file: str, record: str, path: str) -> int:
    for key in keys:
        raw = span.get(key)
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.isdigit():
            return int(raw)
    raise InputError(
        file,
        record=record,
        field=f"{path}.{keys[0]}",
        reason=f"expected nanoseconds, got {kind(span.get(keys[0]))}",
    )


def first_key(obj: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in obj:
            return obj[key]
    return None


def list_at(value: Any, file: str, record: str, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(
            file, record=record, field=path, reason=f"expected a list, got {kind(value)}"
        )
    return value


def object_at(value: Any, file: str, record: str, path: str) -> dict[str, Any]:
    """The object at ``path`` (absent or null: an empty one); anything else is an
    :class:`InputError` naming it."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(
            file, record=record, field=path, reason=f"expected an object, got {kind(value)}"
        )
    return value


def objects_at(
    value: Any, file: str, record: str, path: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(path[i], item)`` for each item of the list at ``path``; an item that is not an object
    is an :class:`InputError` naming it."""
    for i, item in enumerate(list_at(value, file, record, path)):
        where = f"{path}[{i}]"
        if not isinstance(item, dict):
            raise InputError(
                file, record=record, field=where, reason=f"expected an object, got {kind(item)}"
            )
        yield where, item
