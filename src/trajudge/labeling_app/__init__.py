"""The human labeling app (Streamlit): blind labeling from per-annotator queues, review of
disagreements with adjudication, and label export. It reads and writes only through the store.

Start it with ``trajudge label``; the library parts below are usable without a server.
"""

from trajudge.labeling_app._config import (
    DEFAULT_RUBRIC,
    STRATEGIES,
    AppConfig,
    Strategy,
    check_password,
    password_required,
    validate_annotator,
)
from trajudge.labeling_app._queue import (
    Progress,
    Queue,
    build_queue,
    disagreement_scores,
    next_item,
    overlap_mask,
    owners,
    progress,
)
from trajudge.labeling_app._review import annotator_disagreements, judge_human_disagreements
from trajudge.labeling_app._serve import (
    app_script,
    check_config,
    is_loopback,
    serve,
    streamlit_command,
)
from trajudge.labeling_app._view import ItemView, RuleView, StepView, TurnView, build_item_view

__all__ = [
    "DEFAULT_RUBRIC",
    "STRATEGIES",
    "AppConfig",
    "ItemView",
    "Progress",
    "Queue",
    "RuleView",
    "StepView",
    "Strategy",
    "TurnView",
    "annotator_disagreements",
    "app_script",
    "build_item_view",
    "build_queue",
    "check_config",
    "check_password",
    "disagreement_scores",
    "is_loopback",
    "judge_human_disagreements",
    "next_item",
    "overlap_mask",
    "owners",
    "password_required",
    "progress",
    "serve",
    "streamlit_command",
    "validate_annotator",
]
