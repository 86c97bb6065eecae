"""The store: SQLAlchemy Core schema and queries (SQLite by default, any URL works)."""

from trajudge.store._label_files import (
    LABEL_FORMATS,
    LabelFormat,
    LabelImportSummary,
    encode_labels,
    export_labels,
    import_labels,
    label_format,
    labels_export_frame,
    write_atomic,
)
from trajudge.store._schema import MIGRATIONS, metadata
from trajudge.store._store import DEFAULT_URL, ImportSummary, Store, make_engine, now_iso

__all__ = [
    "DEFAULT_URL",
    "LABEL_FORMATS",
    "MIGRATIONS",
    "ImportSummary",
    "LabelFormat",
    "LabelImportSummary",
    "Store",
    "encode_labels",
    "export_labels",
    "import_labels",
    "label_format",
    "labels_export_frame",
    "make_engine",
    "metadata",
    "now_iso",
    "write_atomic",
]
