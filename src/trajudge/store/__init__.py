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
from trajudge.store._redact import (
    forget_secrets,
    install_log_redaction,
    redact,
    redact_value,
    register_secret,
)
from trajudge.store._schema import MIGRATIONS, metadata
from trajudge.store._store import (
    DEFAULT_URL,
    ImportSummary,
    Store,
    make_engine,
    now_iso,
    sqlite_path,
)

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
    "forget_secrets",
    "import_labels",
    "install_log_redaction",
    "label_format",
    "labels_export_frame",
    "make_engine",
    "metadata",
    "now_iso",
    "redact",
    "redact_value",
    "register_secret",
    "sqlite_path",
    "write_atomic",
]
