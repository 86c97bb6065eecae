"""Keys of a judge call's *inputs*, known before any trajectory is parsed.

A request key (``request_sha256``) hashes the rendered request, so finding it means reading,
gating and rendering the trajectory. The keys here hash what the request is a function of
instead, so a re-run can look its answers up in bulk from the store's content hashes alone
(see :mod:`trajudge.judges.calls._cache`):

- :func:`input_key`: the trajectory's content hash, the other trajectory's (or the task
  spec's expected calls, for a reference built from them), the judge configuration hash,
  order, sample, and the SHA-256 of the code that renders prompts;
- :func:`gate_key`: a trajectory's content hash, the SHA-256 of the task spec it is checked
  against (the stored spec merged over the defaults) and of the rules' code. A spec naming a
  custom check has no gate key: the check's code is not in any hash.

Hashing the code means a new version of the renderer or of the checks misses instead of
serving what the old code made of the same content.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from collections.abc import Mapping
from pathlib import Path

import jinja2

import trajudge.rules
from trajudge.core import canonical_json
from trajudge.rules import merge_specs, spec_sha256
from trajudge.trajectories import TaskSpec

#: Version of the input key's layout; bump it when the key's parts change.
INPUT_KEY_VERSION = 1


#: The modules whose code turns a trajectory and a rubric into a prompt. What they are given
#: (the trajectory, the rubric, the judge configuration) is hashed by content elsewhere in the
#: key; tests/judges/test_render_modules.py checks that every module they import is either here
#: or such a content-hashed model, so moving rendering code elsewhere cannot keep stale keys.
RENDER_MODULES = (
    "trajudge.judges.prompts._prompt",
    "trajudge.judges.prompts._render",
    "trajudge.rubrics._template",
)


def _sources_sha256(folder: Path, names: list[str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(names):
        digest.update(name.encode() + b"\0" + (folder / name).read_bytes() + b"\0")
    return digest.hexdigest()


def _module_file(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"rendering module {name} not found")
    return Path(spec.origin)


@functools.cache
def render_code_sha256() -> str:
    """SHA-256 of the modules that turn a trajectory into a prompt (and jinja2's version).

    Each file counts by its last dotted name and its bytes, so the key follows the code, not
    where the package keeps it. A change of this key only costs re-rendering: the responses
    themselves are filed under the rendered request's own key.
    """
    digest = hashlib.sha256()
    for name in sorted(RENDER_MODULES, key=lambda n: n.rpartition(".")[2]):
        path = _module_file(name)
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return hashlib.sha256((digest.hexdigest() + jinja2.__version__).encode()).hexdigest()


@functools.cache
def rules_code_sha256() -> str:
    """SHA-256 of the rules package's modules (every built-in check)."""
    folder = Path(trajudge.rules.__file__).parent
    return _sources_sha256(folder, [p.name for p in folder.glob("*.py")])


def input_key(
    trajectory_sha256: str,
    other_sha256: str | None,
    *,
    config_sha256: str,
    order: str,
    sample: int,
    other_expected: bool = False,
) -> str:
    """The input key of one call (see the module docstring)."""
    parts = {
        "v": INPUT_KEY_VERSION,
        "code": render_code_sha256(),
        "judge": config_sha256,
        "trajectory": trajectory_sha256,
        "other": other_sha256,
        "other_expected": other_expected,
        "order": order,
        "sample": sample,
    }
    return hashlib.sha256(canonical_json(parts).encode()).hexdigest()


def spec_reference_sha256(spec: TaskSpec) -> str:
    """Content hash of a reference built from ``spec``'s expected calls (the candidate's
    task id and input, the rest of what it shows, are in the candidate's hash)."""
    calls = [c.model_dump(mode="json") for c in spec.reference or []]
    return hashlib.sha256(canonical_json({"expected_calls": calls}).encode()).hexdigest()


def gate_keys(
    task_ids: Mapping[str, str],
    hashes: Mapping[str, str],
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None,
) -> dict[str, str]:
    """Trajectory id -> gate key, for the ids of ``task_ids`` (id -> task) with a content hash
    in ``hashes`` and a spec without custom checks."""

    base = defaults if defaults is not None else TaskSpec()
    per_task: dict[str, str | None] = {}
    out: dict[str, str] = {}
    for tid, task_id in task_ids.items():
        if task_id not in per_task:
            entry = specs.get(task_id)
            spec = base if entry is None else merge_specs(base, entry)
            per_task[task_id] = (
                None if spec.checks else rules_code_sha256() + ":" + spec_sha256(spec)
            )
        sha = hashes.get(tid)
        prefix = per_task[task_id]
        if sha is not None and prefix is not None:
            out[tid] = hashlib.sha256(f"gate:{prefix}:{sha}".encode()).hexdigest()
    return out
