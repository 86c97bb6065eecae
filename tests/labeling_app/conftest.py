"""Fixtures for the labeling app: a temporary store with a few trajectories."""

from __future__ import annotations

import pytest
from labeling_helpers import DATASET, make_trajectories

from trajudge.store import Store


@pytest.fixture
def store_url(db_url: str) -> str:
    """A store holding dataset ``demo`` with 12 trajectories (the first is the XSS sample)."""
    store = Store(db_url)
    store.import_dataset(DATASET, make_trajectories(12))
    store.close()
    return db_url


@pytest.fixture
def store(store_url: str) -> Store:
    return Store(store_url)
