"""Spec files: YAML with defaults and per-task entries, validated when loaded.

::

    imports: [mypkg.checks]          # optional: modules that register custom checks
    defaults:                        # applies to every task
      loop_threshold: 3
      forbidden_tools: [delete_account]
    tasks:
      "12":                          # merged over defaults: lists replace, dicts merge
        reference: [{tool: get_user_details, args: {user_id: mia_li_3668}}]
        match_mode: in_order
        arg_checks: [{tool: book_reservation, path: passengers[0].dob, value: "1990-04-05"}]

Every problem (unknown key, unknown custom check, bad regex, malformed JSON schema, bad match
mode, ...) raises :class:`~trajudge.trajectories.InputError` naming the file and the key,
e.g. ``specs.yaml: tasks.12.arg_checks[0].op: Input should be 'equals', ...``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trajudge.core import InputError
from trajudge.rules._compile import BUILTIN_CHECKS
from trajudge.rules._engine import merge_specs
from trajudge.rules._registry import bind_error, registered_checks
from trajudge.trajectories import TaskSpec, read_yaml

_TOP_KEYS = ("imports", "defaults", "tasks")


@dataclass
class SpecSet:
    """Specs from one file: the defaults and the per-task entries (not yet merged).

    ``spec_for(task_id)`` gives the merged spec; :func:`trajudge.rules.check_dataset`
    takes ``tasks`` and ``defaults`` and merges the same way.
    """

    defaults: TaskSpec = field(default_factory=TaskSpec)
    tasks: dict[str, TaskSpec] = field(default_factory=dict)
    source: str | None = None

    def spec_for(self, task_id: str) -> TaskSpec:
        entry = self.tasks.get(task_id)
        return self.defaults if entry is None else merge_specs(self.defaults, entry)


def _loc(prefix: str, loc: tuple[int | str, ...]) -> str:
    out = prefix
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _validate(file: str, prefix: str, raw: Any) -> TaskSpec:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InputError(file, field=prefix, reason=f"expected a mapping, got {type(raw).__name__}")
    try:
        spec = TaskSpec.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        msg = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        raise InputError(file, field=_loc(prefix, tuple(err["loc"])), reason=msg) from None
    _check_names(file, prefix, spec)
    return spec


def _check_names(file: str, prefix: str, spec: TaskSpec) -> None:
    """Custom checks must be registered with matching params; weights and severities must
    name a built-in check or one of this spec's custom checks."""
    known = registered_checks()
    for i, ref in enumerate(spec.checks):
        if ref.name not in known:
            names = ", ".join(sorted(known)) or "none"
            raise InputError(
                file,
                field=f"{prefix}.checks[{i}].name",
                reason=f"unknown custom check {ref.name!r} (registered: {names})",
            )
        problem = bind_error(ref.name, ref.params)
        if problem is not None:
            raise InputError(file, field=f"{prefix}.checks[{i}].params", reason=problem)
    for key in ("weights", "severities"):
        for name in getattr(spec, key):
            if name not in BUILTIN_CHECKS and name not in known:
                raise InputError(file, field=f"{prefix}.{key}.{name}", reason="unknown check name")


def load_specs(path: str | Path) -> SpecSet:
    """Load and validate a spec file (see the module doc for the format)."""
    file = str(path)
    doc = read_yaml(path)
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise InputError(file, reason="expected a mapping with defaults and tasks")
    for key in doc:
        if key not in _TOP_KEYS:
            raise InputError(
                file, field=str(key), reason=f"unknown key (expected one of {_TOP_KEYS})"
            )
    imports = doc.get("imports") or []
    if not isinstance(imports, list):
        raise InputError(file, field="imports", reason="expected a list of module names")
    for i, module in enumerate(imports):
        try:
            importlib.import_module(str(module))
        except ImportError as exc:
            raise InputError(file, field=f"imports[{i}]", reason=f"cannot import: {exc}") from None
    defaults = _validate(file, "defaults", doc.get("defaults"))
    tasks_raw = doc.get("tasks") or {}
    if not isinstance(tasks_raw, dict):
        raise InputError(file, field="tasks", reason="expected a mapping of task id -> spec")
    tasks: dict[str, TaskSpec] = {}
    for task_id, raw in tasks_raw.items():
        key = str(task_id)
        if key in tasks:
            raise InputError(file, field=f"tasks.{key}", reason="duplicate task id")
        tasks[key] = _validate(file, f"tasks.{key}", raw)
        try:
            merge_specs(defaults, tasks[key])
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            raise InputError(
                file, field=_loc(f"tasks.{key}", tuple(err["loc"])), reason=err["msg"]
            ) from None
    return SpecSet(defaults=defaults, tasks=tasks, source=file)


def resolve_specs(
    stored: Mapping[str, TaskSpec], spec_set: SpecSet | None = None
) -> tuple[dict[str, TaskSpec], TaskSpec]:
    """Combine the specs stored with a dataset and an optional spec file.

    Returns ``(tasks, defaults)`` for :func:`trajudge.rules.check_dataset`. Precedence, from
    lowest to highest: the file's ``defaults``, then the stored spec of the task (e.g. the
    reference τ-bench's importer took from the task's expected actions), then the file's entry
    for that task. Each layer overrides only the fields it sets (lists replace, dicts merge),
    so a file can add checks to a stored spec without repeating its reference, or replace the
    reference of one task. Tasks only in the file are added. Without a file, the stored specs
    are used with default settings.
    """
    if spec_set is None:
        return dict(stored), TaskSpec()
    tasks: dict[str, TaskSpec] = {}
    for task_id in {*stored, *spec_set.tasks}:
        base, over = stored.get(task_id), spec_set.tasks.get(task_id)
        if base is None:
            assert over is not None
            tasks[task_id] = over
        elif over is None:
            tasks[task_id] = base
        else:
            tasks[task_id] = merge_specs(base, over)
    return dict(sorted(tasks.items())), spec_set.defaults
