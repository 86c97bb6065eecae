"""The input key hashes the code that renders prompts (RENDER_MODULES): every module that code
imports is either listed too or a model whose content the key hashes on its own, so moving
rendering code into a new module cannot leave it out of the key (stale keys)."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest

import _imports
from trajudge.judges.prompts import _inputs

# hashed by content elsewhere in the key: the trajectory and task spec (content hashes), the
# rubric (its version); the base room and package tables hold no rendering code
CONTENT_HASHED = {
    "trajudge.trajectories._models",
    "trajudge.trajectories._spec",
    "trajudge.rubrics._rubric",
}


def _allowed(module: str) -> bool:
    path = _imports.SRC.parent.joinpath(*module.split("."))
    is_package = (path / "__init__.py").exists()
    return (
        module in _inputs.RENDER_MODULES
        or module in CONTENT_HASHED
        or module == "trajudge.core"
        or module.startswith("trajudge.core.")
        or is_package
    )


def test_the_rendering_code_imports_nothing_the_key_misses() -> None:
    graph = _imports.build()
    reached: set[str] = set()
    for module in _inputs.RENDER_MODULES:
        assert module in graph.files, f"{module} is listed but does not exist"
        reached |= _imports.closure(graph.edges, module, CONTENT_HASHED)
    assert sorted(m for m in reached if not _allowed(m)) == []


def test_the_key_follows_the_code_not_where_it_lives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same bytes under the same file names elsewhere: the same key; one byte more: another."""
    before = _inputs.render_code_sha256()
    copies = {}
    for name in _inputs.RENDER_MODULES:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        origin = Path(spec.origin)
        target = tmp_path / hashlib.sha256(name.encode()).hexdigest()[:8] / origin.name
        target.parent.mkdir()
        target.write_bytes(origin.read_bytes())
        copies[name] = target
    monkeypatch.setattr(_inputs, "_module_file", lambda name: copies[name])
    _inputs.render_code_sha256.cache_clear()
    try:
        assert _inputs.render_code_sha256() == before
        first = copies[_inputs.RENDER_MODULES[0]]
        first.write_bytes(first.read_bytes() + b"\n")
        _inputs.render_code_sha256.cache_clear()
        assert _inputs.render_code_sha256() != before
    finally:
        _inputs.render_code_sha256.cache_clear()
