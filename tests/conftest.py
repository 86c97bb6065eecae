"""Shared fixtures: the public datasets in ../shared/data and a temporary store."""

from __future__ import annotations

from pathlib import Path

import pytest

from _shared import TAU_BENCH_FILE, require_shared


@pytest.fixture
def shared_data() -> Path:
    return require_shared()


@pytest.fixture
def tau_bench_file() -> Path:
    return require_shared(TAU_BENCH_FILE)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'trajudge.db'}"
