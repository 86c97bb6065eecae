"""The store's one ``metadata`` and the tables of a dataset's data: the dataset, its
trajectories, task specs and rule results, its judgments, and its labels (of one trajectory
and of a pair, each with its history).

Apart from :mod:`._schema`, which imports every table defined here and adds those of runs,
aligned judges, tracing backends and the labeling app: modules read the tables from
``_schema`` (importing it registers them all in ``metadata``).
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    literal_column,
)

metadata = MetaData()

schema_migrations = Table(
    "schema_migrations",
    metadata,
    Column("version", Integer, primary_key=True),
    Column("name", String(200), nullable=False),
    Column("applied_at", String(40), nullable=False),
)

datasets = Table(
    "datasets",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("created_at", String(40), nullable=False),
    Column("source", Text, nullable=True),
    Column("source_sha256", String(64), nullable=True),
    Column("fmt", String(40), nullable=True),
)

trajectories = Table(
    "trajectories",
    metadata,
    Column("dataset", String(200), primary_key=True),
    Column("id", String(400), primary_key=True),
    Column("seq", Integer, nullable=False),
    Column("task_id", String(400), nullable=False),
    Column("trial", Integer, nullable=False),
    Column("intent", String(200), nullable=True),
    Column("outcome", Boolean, nullable=True),
    Column("n_steps", Integer, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("data", Text, nullable=False),
    ForeignKeyConstraint(["dataset"], ["datasets.name"], ondelete="CASCADE"),
    UniqueConstraint("dataset", "task_id", "trial", name="uq_traj_task_trial"),
)
Index("ix_traj_dataset_seq", trajectories.c.dataset, trajectories.c.seq)

task_specs = Table(
    "task_specs",
    metadata,
    Column("dataset", String(200), primary_key=True),
    Column("task_id", String(400), primary_key=True),
    Column("data", Text, nullable=False),
    ForeignKeyConstraint(["dataset"], ["datasets.name"], ondelete="CASCADE"),
)

rule_results = Table(
    "rule_results",
    metadata,
    Column("dataset", String(200), primary_key=True),
    Column("trajectory_id", String(400), primary_key=True),
    Column("spec_sha256", String(64), nullable=False),
    Column("gates_passed", Boolean, nullable=False),
    Column("score", Float, nullable=True),
    Column("data", Text, nullable=False),
    ForeignKeyConstraint(["dataset"], ["datasets.name"], ondelete="CASCADE"),
)

judgments = Table(
    "judgments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dataset", String(200), nullable=False),
    Column("trajectory_id", String(400), nullable=False),
    # the other trajectory of a pairwise judgment, or the reference's id in reference mode
    Column("other_id", String(400), nullable=True),
    Column("judge", String(200), nullable=False),
    Column("rubric_id", String(200), nullable=False),
    Column("rubric_version", String(64), nullable=False),
    Column("model", String(300), nullable=False),
    Column("mode", String(20), nullable=False),
    Column("order", String(2), nullable=False),  # ab | ba
    Column("sample", Integer, nullable=False),
    Column("score", Float, nullable=True),
    Column("verdict", String(40), nullable=True),
    Column("reasoning", Text, nullable=True),
    Column("criteria", Text, nullable=True),  # JSON object of per-criterion scores
    Column("raw", Text, nullable=True),
    Column("prompt_tokens", Integer, nullable=True),
    Column("completion_tokens", Integer, nullable=True),
    Column("cost_usd", Float, nullable=True),
    Column("latency_s", Float, nullable=True),
    Column("cache_hit", Boolean, nullable=False, default=False),
    Column("error", Text, nullable=True),
    Column("request_sha256", String(64), nullable=True),
    Column("created_at", String(40), nullable=False),
    # version 2: the judge configuration (model, api_base, request parameters; never a key)
    # as JSON and its SHA-256, part of the key: resume never reuses another configuration's
    # judgments. NULL on rows judged before version 2.
    Column("config_sha256", String(64), nullable=True),
    Column("judge_config", Text, nullable=True),
    # version 5: the expected score from token probabilities (sum of level x its probability
    # at the score token) and those probabilities as JSON {level: p}; NULL where the provider
    # returned none, and on older rows.
    Column("expected_score", Float, nullable=True),
    Column("score_probs", Text, nullable=True),
    ForeignKeyConstraint(["dataset"], ["datasets.name"], ondelete="CASCADE"),
)
Index("ix_judgments_dataset_judge", judgments.c.dataset, judgments.c.judge)
# version 6: the judgment's key, a unique index over expressions. A unique constraint on the
# columns let duplicates of every pointwise judgment in (``other_id`` NULL), and of every
# judgment from before version 2 (``config_sha256`` NULL): NULLs never collide. NULL is
# indexed as '' (no trajectory id or hash is empty), so it collides with itself.
Index(
    "uq_judgment_key",
    judgments.c.dataset,
    judgments.c.trajectory_id,
    func.coalesce(judgments.c.other_id, literal_column("''")),
    judgments.c.judge,
    func.coalesce(judgments.c.config_sha256, literal_column("''")),
    judgments.c.rubric_version,
    judgments.c.order,
    judgments.c.sample,
    unique=True,
)

labels = Table(
    "labels",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dataset", String(200), nullable=False),
    Column("trajectory_id", String(400), nullable=False),
    Column("rubric_id", String(200), nullable=False),
    Column("annotator", String(100), nullable=False),
    Column("value", Float, nullable=True),  # None when skipped
    Column("criteria", Text, nullable=True),  # JSON object of per-criterion values
    Column("note", Text, nullable=True),
    Column("unsure", Boolean, nullable=False, default=False),
    Column("skipped", Boolean, nullable=False, default=False),
    # "human" for people; other sources (e.g. "env_reward") are kept apart by this column
    Column("source", String(40), nullable=False, default="human"),
    Column("adjudication", Boolean, nullable=False, default=False),
    Column("created_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    # version 3: the label of a nominal rubric is a category name (``value`` stays NULL)
    Column("category", String(200), nullable=True),
    ForeignKeyConstraint(["dataset"], ["datasets.name"], ondelete="CASCADE"),
    UniqueConstraint(
        "dataset", "trajectory_id", "rubric_id", "annotator", "adjudication", name="uq_label"
    ),
)
Index("ix_labels_dataset_annotator", labels.c.dataset, labels.c.annotator)

label_history = Table(
    "label_history",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("label_id", Integer, nullable=False),
    Column("value", Float, nullable=True),
    Column("criteria", Text, nullable=True),
    Column("note", Text, nullable=True),
    Column("unsure", Boolean, nullable=False),
    Column("skipped", Boolean, nullable=False),
    Column("changed_at", String(40), nullable=False),
    Column("category", String(200), nullable=True),  # version 3
)
Index("ix_label_history_label", label_history.c.label_id)

# version 3: labels of a pair of trajectories (pairwise rubrics). ``category`` is A, B or tie
# in the original numbering (A = ``trajectory_id``, B = ``other_id``) whichever side each was
# shown on; ``left_id`` is the trajectory this annotator saw on the left.
pair_labels = Table(
    "pair_labels",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dataset", String(200), nullable=False),
    Column("trajectory_id", String(400), nullable=False),
    Column("other_id", String(400), nullable=False),
    Column("rubric_id", String(200), nullable=False),
    Column("annotator", String(100), nullable=False),
    Column("category", String(20), nullable=True),  # None when skipped
    Column("left_id", String(400), nullable=True),
    Column("note", Text, nullable=True),
    Column("unsure", Boolean, nullable=False, default=False),
    Column("skipped", Boolean, nullable=False, default=False),
    Column("source", String(40), nullable=False, default="human"),
    Column("adjudication", Boolean, nullable=False, default=False),
    Column("created_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    ForeignKeyConstraint(["dataset"], ["datasets.name"], ondelete="CASCADE"),
    UniqueConstraint(
        "dataset",
        "trajectory_id",
        "other_id",
        "rubric_id",
        "annotator",
        "adjudication",
        name="uq_pair_label",
    ),
)
Index("ix_pair_labels_dataset_annotator", pair_labels.c.dataset, pair_labels.c.annotator)

pair_label_history = Table(
    "pair_label_history",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("pair_label_id", Integer, nullable=False),
    Column("category", String(20), nullable=True),
    Column("left_id", String(400), nullable=True),
    Column("note", Text, nullable=True),
    Column("unsure", Boolean, nullable=False),
    Column("skipped", Boolean, nullable=False),
    Column("changed_at", String(40), nullable=False),
)
Index("ix_pair_label_history_label", pair_label_history.c.pair_label_id)
