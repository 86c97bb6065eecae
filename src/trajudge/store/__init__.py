"""The store: SQLAlchemy Core schema and queries (SQLite by default, any URL works)."""

from trajudge.store._schema import MIGRATIONS, metadata
from trajudge.store._store import DEFAULT_URL, ImportSummary, Store, make_engine, now_iso

__all__ = [
    "DEFAULT_URL",
    "MIGRATIONS",
    "ImportSummary",
    "Store",
    "make_engine",
    "metadata",
    "now_iso",
]
