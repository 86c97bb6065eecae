"""The store: SQLAlchemy Core schema and queries (SQLite by default, any URL works)."""

from typing import TYPE_CHECKING

from trajudge.core import lazy_exports

if TYPE_CHECKING:
    from trajudge.core import now_iso
    from trajudge.store._engine import make_engine, make_sql_engine, sqlite_path
    from trajudge.store._faults import STORE_FAULT_EXIT, StoreError
    from trajudge.store._names import DEFAULT_URL, LABEL_FORMATS, LabelFormat
    from trajudge.store._redact import (
        forget_secrets,
        install_log_redaction,
        redact,
        redact_value,
        register_secret,
    )
    from trajudge.store._schema import MIGRATIONS, metadata
    from trajudge.store._store import ImportSummary, Store
    from trajudge.store.app._accounts import ROLES, Account
    from trajudge.store.app._draws import NotLead
    from trajudge.store.judging._leases import LEASE_TTL_S, Lease, LeaseHeldError
    from trajudge.store.labels._label_files import (
        LabelImportSummary,
        encode_labels,
        export_labels,
        import_labels,
        label_format,
        labels_export_frame,
        write_atomic,
    )
    from trajudge.store.labels._pair_label_files import (
        PAIR_EXPORT_COLUMNS,
        export_pair_labels,
        import_pair_labels,
        pair_labels_export_frame,
    )

__all__ = [
    "DEFAULT_URL",
    "LABEL_FORMATS",
    "LEASE_TTL_S",
    "MIGRATIONS",
    "PAIR_EXPORT_COLUMNS",
    "ROLES",
    "STORE_FAULT_EXIT",
    "Account",
    "ImportSummary",
    "LabelFormat",
    "LabelImportSummary",
    "Lease",
    "LeaseHeldError",
    "NotLead",
    "Store",
    "StoreError",
    "encode_labels",
    "export_labels",
    "export_pair_labels",
    "forget_secrets",
    "import_labels",
    "import_pair_labels",
    "install_log_redaction",
    "label_format",
    "labels_export_frame",
    "make_engine",
    "make_sql_engine",
    "metadata",
    "now_iso",
    "pair_labels_export_frame",
    "redact",
    "redact_value",
    "register_secret",
    "sqlite_path",
    "write_atomic",
]

# name -> the module it comes from: imported on first use (see trajudge.core._lazy)
_EXPORTS = {
    "Account": "trajudge.store.app._accounts",
    "NotLead": "trajudge.store.app._draws",
    "ROLES": "trajudge.store.app._accounts",
    "DEFAULT_URL": "trajudge.store._names",
    "ImportSummary": "trajudge.store._store",
    "LABEL_FORMATS": "trajudge.store._names",
    "LabelFormat": "trajudge.store._names",
    "LabelImportSummary": "trajudge.store.labels._label_files",
    "LEASE_TTL_S": "trajudge.store.judging._leases",
    "Lease": "trajudge.store.judging._leases",
    "LeaseHeldError": "trajudge.store.judging._leases",
    "MIGRATIONS": "trajudge.store._schema",
    "PAIR_EXPORT_COLUMNS": "trajudge.store.labels._pair_label_files",
    "STORE_FAULT_EXIT": "trajudge.store._faults",
    "Store": "trajudge.store._store",
    "StoreError": "trajudge.store._faults",
    "encode_labels": "trajudge.store.labels._label_files",
    "export_labels": "trajudge.store.labels._label_files",
    "export_pair_labels": "trajudge.store.labels._pair_label_files",
    "forget_secrets": "trajudge.store._redact",
    "import_labels": "trajudge.store.labels._label_files",
    "import_pair_labels": "trajudge.store.labels._pair_label_files",
    "install_log_redaction": "trajudge.store._redact",
    "label_format": "trajudge.store.labels._label_files",
    "labels_export_frame": "trajudge.store.labels._label_files",
    "make_engine": "trajudge.store._engine",
    "make_sql_engine": "trajudge.store._engine",
    "metadata": "trajudge.store._schema",
    "now_iso": "trajudge.core",
    "pair_labels_export_frame": "trajudge.store.labels._pair_label_files",
    "redact": "trajudge.store._redact",
    "redact_value": "trajudge.store._redact",
    "register_secret": "trajudge.store._redact",
    "sqlite_path": "trajudge.store._engine",
    "write_atomic": "trajudge.store.labels._label_files",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
