"""Where the public datasets of ../shared/data are, and the skip-or-fail rule for them.

A module of its own (not conftest) so that test files can import it by name.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
EXAMPLE_TAU_BENCH = ROOT / "examples" / "tau_airline" / "gpt-4o-airline.json"
TAU_BENCH_SIZE = 4_114_038  # bytes, per shared/data/tau_bench/SOURCE.md (copied byte-for-byte)
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
