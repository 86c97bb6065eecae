"""The human labeling app (Streamlit): blind labeling from per-annotator queues, review of
disagreements with adjudication, and label export. It reads and writes only through the store,
and reads other people's labels and the judgments only through ``_access`` (blind labeling).

Start it with ``trajudge label``; the library parts below are usable without a server.
"""

from trajudge.labeling_app._access import (
    ItemReview,
    NotAllowed,
    ReviewData,
    Viewer,
    export_frame,
    item_review,
    label_page_judgments,
    may_review,
    review_data,
    save_adjudication,
    viewer_for,
)
from trajudge.labeling_app._config import (
    DEFAULT_RUBRIC,
    STRATEGIES,
    AppConfig,
    Strategy,
    adjudicator_password_set,
    check_adjudicator_password,
    check_password,
    password_required,
    validate_annotator,
)
from trajudge.labeling_app._queue import (
    Progress,
    Queue,
    build_queue,
    disagreement_scores,
    escalation_scores,
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
    "ItemReview",
    "ItemView",
    "NotAllowed",
    "Progress",
    "Queue",
    "ReviewData",
    "RuleView",
    "StepView",
    "Strategy",
    "TurnView",
    "Viewer",
    "adjudicator_password_set",
    "annotator_disagreements",
    "app_script",
    "build_item_view",
    "build_queue",
    "check_adjudicator_password",
    "check_config",
    "check_password",
    "disagreement_scores",
    "escalation_scores",
    "export_frame",
    "is_loopback",
    "item_review",
    "judge_human_disagreements",
    "label_page_judgments",
    "may_review",
    "next_item",
    "overlap_mask",
    "owners",
    "password_required",
    "progress",
    "review_data",
    "save_adjudication",
    "serve",
    "streamlit_command",
    "validate_annotator",
    "viewer_for",
]
