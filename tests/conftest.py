"""Shared fixtures: the public datasets in ../shared/data and a temporary store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
TAU_BENCH_FILE = SHARED_DATA / "tau_bench" / "historical_trajectories" / "gpt-4o-airline.json"


def require_shared(path: Path = SHARED_DATA) -> Path:
    """Return ``path`` under ../shared/data, or skip where it is absent (a user's clone).

    CI sets TRAJUDGE_REQUIRE_SHARED=1 so that a missing dataset fails instead of skipping.
    """
    if not path.exists():
        if os.environ.get("TRAJUDGE_REQUIRE_SHARED") == "1":
            pytest.fail(f"{path} is required in CI (TRAJUDGE_REQUIRE_SHARED=1) but missing")
        pytest.skip(f"{path} is absent (../shared/data is not part of a user's clone)")
    return path


@pytest.fixture
def shared_data() -> Path:
    return require_shared()


@pytest.fixture
def tau_bench_file() -> Path:
    return require_shared(TAU_BENCH_FILE)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'trajudge.db'}"
