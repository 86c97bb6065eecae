"""The response cache's own file failing: one StoreError naming the cache, no sqlite3
traceback (the CLI prints it as one line, exit code 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajudge.judges.calls._cache import ResponseCache
from trajudge.store import StoreError


def test_a_cache_file_that_is_not_a_database_is_one_store_error(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    path.write_bytes(b"not a database, " * 256)
    with pytest.raises(StoreError) as caught:
        ResponseCache(path)
    assert str(caught.value) == (
        f"response cache {path}: store fault: the file is not a database "
        "(file is not a database); nothing after it was written"
    )
