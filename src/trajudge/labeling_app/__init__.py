"""The human labeling app (Streamlit): blind labeling from per-annotator queues, review of
disagreements with adjudication, and label export. It reads and writes only through the store,
and reads other people's labels and the judgments only through ``_access`` (blind labeling).

Start it with ``trajudge label``; the library parts below are usable without a server.
"""

from typing import TYPE_CHECKING

from trajudge._lazy import lazy_exports

if TYPE_CHECKING:
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
        progress_after_save,
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
    "progress_after_save",
    "review_data",
    "save_adjudication",
    "serve",
    "streamlit_command",
    "validate_annotator",
    "viewer_for",
]

# name -> the module it comes from: imported on first use (see trajudge._lazy)
_EXPORTS = {
    "escalation_scores": "trajudge.labeling_app._queue",
    "AppConfig": "trajudge.labeling_app._config",
    "DEFAULT_RUBRIC": "trajudge.labeling_app._config",
    "ItemReview": "trajudge.labeling_app._access",
    "ItemView": "trajudge.labeling_app._view",
    "NotAllowed": "trajudge.labeling_app._access",
    "Progress": "trajudge.labeling_app._queue",
    "Queue": "trajudge.labeling_app._queue",
    "ReviewData": "trajudge.labeling_app._access",
    "RuleView": "trajudge.labeling_app._view",
    "STRATEGIES": "trajudge.labeling_app._config",
    "StepView": "trajudge.labeling_app._view",
    "Strategy": "trajudge.labeling_app._config",
    "TurnView": "trajudge.labeling_app._view",
    "Viewer": "trajudge.labeling_app._access",
    "adjudicator_password_set": "trajudge.labeling_app._config",
    "annotator_disagreements": "trajudge.labeling_app._review",
    "app_script": "trajudge.labeling_app._serve",
    "build_item_view": "trajudge.labeling_app._view",
    "build_queue": "trajudge.labeling_app._queue",
    "check_adjudicator_password": "trajudge.labeling_app._config",
    "check_config": "trajudge.labeling_app._serve",
    "check_password": "trajudge.labeling_app._config",
    "disagreement_scores": "trajudge.labeling_app._queue",
    "export_frame": "trajudge.labeling_app._access",
    "is_loopback": "trajudge.labeling_app._serve",
    "item_review": "trajudge.labeling_app._access",
    "judge_human_disagreements": "trajudge.labeling_app._review",
    "label_page_judgments": "trajudge.labeling_app._access",
    "may_review": "trajudge.labeling_app._access",
    "next_item": "trajudge.labeling_app._queue",
    "overlap_mask": "trajudge.labeling_app._queue",
    "owners": "trajudge.labeling_app._queue",
    "password_required": "trajudge.labeling_app._config",
    "progress": "trajudge.labeling_app._queue",
    "progress_after_save": "trajudge.labeling_app._queue",
    "review_data": "trajudge.labeling_app._access",
    "save_adjudication": "trajudge.labeling_app._access",
    "serve": "trajudge.labeling_app._serve",
    "streamlit_command": "trajudge.labeling_app._serve",
    "validate_annotator": "trajudge.labeling_app._config",
    "viewer_for": "trajudge.labeling_app._access",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
