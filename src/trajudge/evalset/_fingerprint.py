"""The agent fingerprint: what, when it changes, calls for a full re-run of the eval set.

A new system prompt, tool set, model or model version can change behaviour anywhere, so the
layered run (core first) is not enough: the whole set, holdout included, must run again.
:func:`fingerprint` reads these from trajectory metadata (or a config), and
:func:`diff_fingerprints` says in words what changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from trajudge.core import InputError, atomic_write, canonical_json
from trajudge.trajectories import Trajectory, load_json
from trajudge.trajectories._io import check_file, decode_utf8, write_text_lines

CONFIG_KEYS = frozenset(
    {
        "system_prompt",
        "system_prompt_sha256",
        "tools",
        "tool_definitions",
        "tools_sha256",
        "model",
        "model_version",
    }
)
_LABELS = {
    "system_prompt_sha256": "system prompt",
    "tools_sha256": "tool set",
    "model": "model",
    "model_version": "model version",
}


@dataclass(frozen=True)
class Fingerprint:
    """What identifies an agent build. None means "unknown"."""

    system_prompt_sha256: str | None = None
    tools_sha256: str | None = None
    model: str | None = None
    model_version: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        """The four fields as a JSON-able dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fingerprint:
        """Build from :meth:`to_dict` output; unknown keys or non-text values are errors."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown fingerprint keys: {', '.join(unknown)}")
        for key, value in data.items():
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{key}: expected text or null, got {type(value).__name__}")
        return cls(**{k: data.get(k) for k in names})


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _one(values: Iterable[str], *, hashed: bool) -> str | None:
    """The single distinct value, None for none, or a marked summary when they disagree."""
    distinct = sorted(set(values))
    if not distinct:
        return None
    if len(distinct) == 1:
        return distinct[0]
    if hashed:
        return "mixed:" + _sha256("\n".join(distinct))
    return "mixed: " + ", ".join(distinct)


def _tool_name(definition: Any) -> str | None:
    if isinstance(definition, str):
        return definition
    if isinstance(definition, Mapping):
        fn = definition.get("function")
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            return str(fn["name"])
        if isinstance(definition.get("name"), str):
            return str(definition["name"])
    return None


def tools_hash(names_seen: Iterable[str], definitions: Iterable[Any] = ()) -> str | None:
    """SHA-256 of the tool set: the definitions when known, else the sorted names seen.

    With definitions, the hash covers each distinct definition (canonical JSON, sorted) plus
    any tool called but not declared. Without them it covers the sorted set of names called,
    which also moves when the agent merely stops calling a tool: pass the definitions (in
    metadata or the config) for a fingerprint of the configuration alone.

    >>> tools_hash(["b", "a", "a"]) == tools_hash(["a", "b"])
    True
    """
    defs = sorted({canonical_json(d) for d in definitions})
    seen = sorted(set(names_seen))
    if defs:
        declared = {_tool_name(d) for d in definitions}
        undeclared = [n for n in seen if n not in declared]
        return _sha256(canonical_json({"definitions": defs, "undeclared_calls": undeclared}))
    if seen:
        return _sha256(canonical_json({"tools_called": seen}))
    return None


def fingerprint(
    trajectories: Iterable[Trajectory], *, config: Mapping[str, Any] | None = None
) -> Fingerprint:
    """The fingerprint of the agent that produced ``trajectories``.

    Parameters
    ----------
    trajectories:
        Runs of one agent build. Read from each one's metadata: ``system_prompt_sha256`` (or
        ``system_prompt``, hashed), ``tool_definitions`` or ``tools`` (a list of definitions
        or names), ``model`` and ``model_version``; and the names of the tools called.
    config:
        Values that win over the metadata, with the same keys plus ``tools_sha256``.

    Notes
    -----
    Runs that disagree give ``"mixed:<sha256 of the sorted values>"`` for the hashes and
    ``"mixed: a, b"`` for the model fields, so a mixed batch never passes for a clean one.

    Examples
    --------
    >>> t = Trajectory(id="1", task_id="t", metadata={"model": "gpt-4o"})
    >>> fingerprint([t], config={"model_version": "2024-08-06"}).model_version
    '2024-08-06'
    """
    prompts: list[str] = []
    models: list[str] = []
    versions: list[str] = []
    seen: list[str] = []
    definitions: list[Any] = []
    for t in trajectories:
        meta = t.metadata
        if isinstance(meta.get("system_prompt_sha256"), str):
            prompts.append(meta["system_prompt_sha256"])
        elif isinstance(meta.get("system_prompt"), str):
            prompts.append(_sha256(meta["system_prompt"]))
        for key, bucket in (("model", models), ("model_version", versions)):
            if meta.get(key) is not None:
                bucket.append(str(meta[key]))
        defs = meta.get("tool_definitions", meta.get("tools"))
        if isinstance(defs, list):
            definitions.extend(defs)
        seen.extend(t.tools)
    fp = Fingerprint(
        system_prompt_sha256=_one(prompts, hashed=True),
        tools_sha256=tools_hash(seen, definitions),
        model=_one(models, hashed=False),
        model_version=_one(versions, hashed=False),
    )
    return _apply_config(fp, config or {}, seen)


def _apply_config(fp: Fingerprint, config: Mapping[str, Any], seen: list[str]) -> Fingerprint:
    unknown = sorted(set(config) - CONFIG_KEYS)
    if unknown:
        raise ValueError(
            f"unknown fingerprint config keys: {', '.join(unknown)} "
            f"(known: {', '.join(sorted(CONFIG_KEYS))})"
        )
    values = fp.to_dict()
    if config.get("system_prompt") is not None:
        values["system_prompt_sha256"] = _sha256(str(config["system_prompt"]))
    defs = config.get("tool_definitions", config.get("tools"))
    if defs is not None:
        if not isinstance(defs, list):
            raise ValueError("config tools / tool_definitions: expected a list")
        values["tools_sha256"] = tools_hash(seen, defs)
    for key in ("system_prompt_sha256", "tools_sha256", "model", "model_version"):
        if config.get(key) is not None:
            values[key] = str(config[key])
    return Fingerprint(**values)


def _short(value: str | None) -> str:
    if value is None:
        return "unknown"
    if len(value) == 64 and all(ch in "0123456789abcdef" for ch in value):
        return value[:8] + "…"
    return value


def diff_fingerprints(baseline: Fingerprint, current: Fingerprint) -> list[str]:
    """What changed between two fingerprints, one line each; empty when nothing did.

    >>> a = Fingerprint(system_prompt_sha256="a1b2" * 16, model="gpt-4o")
    >>> b = Fingerprint(system_prompt_sha256="c3d4" * 16, model="gpt-4o")
    >>> diff_fingerprints(a, b)
    ['system prompt changed (a1b2a1b2… → c3d4c3d4…): a full re-run is due']
    """
    changes = []
    for key, label in _LABELS.items():
        old, new = getattr(baseline, key), getattr(current, key)
        if old != new:
            changes.append(f"{label} changed ({_short(old)} → {_short(new)}): a full re-run is due")
    return changes


def read_fingerprint(path: str | os.PathLike[str]) -> Fingerprint:
    """Read a fingerprint saved by :func:`write_fingerprint` (InputError when bad)."""
    p = check_file(path)
    try:
        data = load_json(decode_utf8(p, p.read_bytes()), str(p))
    except json.JSONDecodeError as exc:
        raise InputError(
            str(p), record=f"line {exc.lineno}", reason=f"invalid JSON: {exc.msg}"
        ) from None
    if not isinstance(data, dict):
        raise InputError(str(p), reason="expected a JSON object")
    try:
        return Fingerprint.from_dict(data)
    except ValueError as exc:
        raise InputError(str(p), reason=str(exc)) from None


def write_fingerprint(path: str | os.PathLike[str], fp: Fingerprint) -> Path:
    """Save a fingerprint as a small JSON object (atomically), e.g. beside the eval set."""
    text = json.dumps(fp.to_dict(), indent=2, sort_keys=True)
    return atomic_write(path, lambda tmp: write_text_lines(tmp, iter([text])))
