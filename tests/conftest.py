"""Shared fixtures: the public datasets in ../shared/data and a temporary store."""

from __future__ import annotations

from pathlib import Path

import pytest

from _shared import EXAMPLE_TAU_BENCH, TAU_BENCH_FILE, TAU_BENCH_SIZE, require_shared


@pytest.fixture
def shared_data() -> Path:
    return require_shared()


@pytest.fixture
def tau_bench_file() -> Path:
    """The τ-bench gpt-4o airline file: the project's own MIT copy in examples/ (so these
    tests run in a user's clone too), else ../shared/data."""
    if EXAMPLE_TAU_BENCH.is_file() and EXAMPLE_TAU_BENCH.stat().st_size == TAU_BENCH_SIZE:
        return EXAMPLE_TAU_BENCH
    return require_shared(TAU_BENCH_FILE)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'trajudge.db'}"
