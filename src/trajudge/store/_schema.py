"""The database schema (SQLAlchemy Core) and its ordered migrations.

Every table is keyed by dataset name so one database can hold many datasets. Trajectories,
task specs and rule results are stored as their canonical JSON beside the columns that queries
filter on; judgments and labels are stored column by column since they are analysed in bulk.

The one ``metadata`` and the tables of a dataset's data (the dataset, its trajectories, task
specs, rule results, judgments and labels) are defined in :mod:`._schema_data`; they are
imported here, so that every module reads every table from this one, and ``metadata`` holds
them all once this module is imported. Here are the tables added for runs, aligned judges,
tracing backends and the labeling app, and :data:`MIGRATIONS`.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from trajudge.store._schema_data import datasets as datasets
from trajudge.store._schema_data import judgments as judgments
from trajudge.store._schema_data import label_history as label_history
from trajudge.store._schema_data import labels as labels
from trajudge.store._schema_data import metadata as metadata
from trajudge.store._schema_data import pair_label_history as pair_label_history
from trajudge.store._schema_data import pair_labels as pair_labels
from trajudge.store._schema_data import rule_results as rule_results
from trajudge.store._schema_data import schema_migrations as schema_migrations
from trajudge.store._schema_data import task_specs as task_specs
from trajudge.store._schema_data import trajectories as trajectories

# Version 4: batches submitted to a provider's batch API (``--engine batch``), so that a second
# run collects a submitted batch instead of paying for it again. One row per batch, one per
# request in it (its custom_id, the judgment it fills and the request's cache key).
provider_batches = Table(
    "provider_batches",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dataset", String(200), nullable=False),
    Column("batch_id", String(200), nullable=False),
    Column("provider", String(40), nullable=False),
    Column("api_base", Text, nullable=True),
    Column("model", String(300), nullable=False),
    Column("input_file_id", String(200), nullable=False),
    Column("status", String(40), nullable=False),
    Column("output_file_id", String(200), nullable=True),
    Column("error_file_id", String(200), nullable=True),
    Column("requests", Integer, nullable=False),
    Column("detail", Text, nullable=True),
    Column("created_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    ForeignKeyConstraint(["dataset"], ["datasets.name"], ondelete="CASCADE"),
)
Index("ix_provider_batches_dataset", provider_batches.c.dataset)

provider_batch_items = Table(
    "provider_batch_items",
    metadata,
    Column("batch", Integer, primary_key=True),
    Column("custom_id", String(40), primary_key=True),
    Column("request_sha256", String(64), nullable=False),
    Column("trajectory_id", String(400), nullable=False),
    Column("other_id", String(400), nullable=True),
    Column("judge", String(200), nullable=False),
    Column("config_sha256", String(64), nullable=True),
    Column("rubric_version", String(64), nullable=False),
    Column("order", String(2), nullable=False),
    Column("sample", Integer, nullable=False),
    # the provider answered this request with an error: a later run submits it again
    Column("failed", Boolean, nullable=False, default=False),
    ForeignKeyConstraint(["batch"], ["provider_batches.id"], ondelete="CASCADE"),
)

# version 5: aligned judges (``trajudge align``), each version kept. ``data`` is the JSON of
# the aligned judge (its judge spec, rubric content, verdict rule, split, and the alignment
# figures measured on the holdout); ``sha256`` is that JSON's hash, so saving the same
# alignment twice adds no version. ``dataset`` is where it was fitted (no foreign key: the
# aligned judge stays usable by name after that dataset is gone).
aligned_judges = Table(
    "aligned_judges",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("created_at", String(40), nullable=False),
    Column("dataset", String(200), nullable=False),
    Column("base_judge", String(200), nullable=False),
    Column("config_sha256", String(64), nullable=True),
    Column("sha256", String(64), nullable=False),
    Column("data", Text, nullable=False),
)
Index("ix_aligned_judges_dataset", aligned_judges.c.dataset)

# version 7: who is judging a dataset with a judge configuration now (``Store.try_lease``):
# one row per (dataset, config_sha256) while a run holds it. ``expires_at`` (seconds since the
# epoch) moves forward with the holder's heartbeat; past it, or once the holder's pid is gone
# from its host, the next run takes the lease over.
leases = Table(
    "leases",
    metadata,
    Column("dataset", String(200), primary_key=True),
    Column("config_sha256", String(64), primary_key=True),
    Column("judge", String(200), nullable=False),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("token", String(64), nullable=False),
    Column("acquired_at", String(40), nullable=False),
    Column("expires_at", Float, nullable=False),
)

# version 9: the active labelling design of a dataset and rubric (``--strategy active``), frozen
# when first built: each item's place in the order the draws walk, the probability it was
# drawn with and whether it was. Estimates weight each label by 1 / probability.
label_draws = Table(
    "label_draws",
    metadata,
    Column("dataset", String(200), primary_key=True),
    Column("rubric_id", String(200), primary_key=True),
    Column("trajectory_id", String(400), primary_key=True),
    Column("position", Integer, nullable=False),
    Column("probability", Float, nullable=False),
    Column("drawn", Boolean, nullable=False),
    Column("design", Text, nullable=False),  # JSON: how the probabilities were made
    Column("created_at", String(40), nullable=False),
    # version 12: 1 for a draw of the uniform learning phase, 2 for one drawn with the
    # probabilities fitted on that phase's labels; NULL for a design frozen whole at once
    Column("phase", Integer, nullable=True),
    ForeignKeyConstraint(["dataset"], ["datasets.name"], ondelete="CASCADE"),
)

# version 10: where an incremental pull from a tracing backend stopped (``trajudge import
# phoenix+http://...``): one row per (dataset, source), the source being the backend URL without
# credentials; ``cursor`` is the backend's own position (for Phoenix, the first span not yet
# taken), written in the same transaction as the trajectories it covers.
pull_cursors = Table(
    "pull_cursors",
    metadata,
    Column("dataset", String(200), primary_key=True),
    Column("source", String(1000), primary_key=True),
    Column("cursor", Text, nullable=False),
    Column("updated_at", String(40), nullable=False),
)

# version 10: what ``trajudge export`` has written to a target that cannot be read back (an OTLP
# collector): one row per (target, item) with the hash of what was sent, so a re-export sends
# only new or changed items and an interrupted one completes without repeating.
export_marks = Table(
    "export_marks",
    metadata,
    Column("target", String(1000), primary_key=True),
    Column("dataset", String(200), primary_key=True),
    Column("item", String(400), primary_key=True),
    Column("sha256", String(64), nullable=False),
    Column("exported_at", String(40), nullable=False),
)

# version 11: accounts of the labeling app (one per person who labels), the sign-in throttle and
# the sign-in log. ``secret`` is a slow hash (scrypt) of the account's password or of its
# one-time invite token (``secret_kind``), never the secret itself; ``epoch`` grows with each
# reset or disable, which ends every session opened before. ``email`` (lower case) maps a
# single sign-on identity to the account.
accounts = Table(
    "accounts",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("role", String(20), nullable=False),
    Column("email", String(320), nullable=True),
    Column("disabled", Boolean, nullable=False, default=False),
    Column("secret", String(300), nullable=True),
    Column("secret_kind", String(20), nullable=True),  # password | invite
    Column("secret_expires_at", Float, nullable=True),  # an invite's expiry (epoch seconds)
    Column("epoch", Integer, nullable=False, default=0),
    Column("created_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    UniqueConstraint("email", name="uq_account_email"),
)

# failed sign-ins per key (``account:<name>`` or ``client:<address>``): the count since the
# last success and when the next attempt may come (epoch seconds), kept in the store so
# that every app process of one store throttles alike
sign_in_throttle = Table(
    "sign_in_throttle",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("failures", Integer, nullable=False),
    Column("last_failure_at", Float, nullable=False),
    Column("not_before", Float, nullable=False),
)

# every sign-in, failure, refusal and sign-out (never a secret): what the lead's page shows
sign_in_events = Table(
    "sign_in_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", String(40), nullable=False),
    Column("name", String(100), nullable=False),
    Column("client", String(100), nullable=False),
    Column("event", String(40), nullable=False),
    Column("detail", Text, nullable=True),
)
Index("ix_sign_in_events_at", sign_in_events.c.at)

# an item (or pair key) handed to one annotator for a while, so that two annotators are not
# handed the same non-overlap item at once (their views of who shares the items may differ
# for a moment); ``expires_at`` in epoch seconds, a lapsed one is taken over
reservations = Table(
    "reservations",
    metadata,
    Column("dataset", String(200), primary_key=True),
    Column("rubric_id", String(200), primary_key=True),
    Column("item", String(900), primary_key=True),
    Column("annotator", String(100), nullable=False),
    Column("expires_at", Float, nullable=False),
)

# version 12: the label queue's strategy of a dataset and rubric as the lead chose it in the
# app, append-only: the newest row is in force, and every row says who changed it, when, and
# from what (the audit); none yet: the strategy `trajudge label --strategy` started with
label_strategies = Table(
    "label_strategies",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dataset", String(200), nullable=False),
    Column("rubric_id", String(200), nullable=False),
    Column("strategy", String(40), nullable=False),
    Column("budget", Integer, nullable=True),  # active: expected labels of a new design
    Column("learn", Integer, nullable=True),  # active: labels of the uniform learning phase
    Column("previous", String(40), nullable=True),  # the strategy in force before
    Column("name", String(100), nullable=False),  # the lead who chose it
    Column("at", String(40), nullable=False),
)
Index("ix_label_strategies_key", label_strategies.c.dataset, label_strategies.c.rubric_id)

# Ordered migrations: (version, name). Version 1 creates the tables; each later version has
# its DDL in ``_migrations.UPGRADES`` for databases created before it, and a test pins the
# resulting schema (and that an upgraded database equals a new one).
MIGRATIONS: list[tuple[int, str]] = [
    (1, "initial schema"),
    (2, "judge configuration on judgments"),
    (3, "verdict kinds: category labels, pair labels"),
    (4, "provider batches"),
    (5, "aligned judges; expected scores on judgments"),
    (6, "judgment key unique with NULL other_id / config_sha256"),
    (7, "leases"),
    (8, "aligned judges say threshold, not cut"),
    (9, "label draws: the active labelling design"),
    (10, "pull cursors and export marks (tracing backends)"),
    (11, "accounts, sign-in throttle, sign-in log, reservations"),
    (12, "label strategies chosen by the lead; the phase of each label draw"),
]
