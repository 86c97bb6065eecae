"""The lead's page: the accounts with each one's progress, agreement so far (annotators
with each other, judges with the humans: kappa with 95% intervals), the items annotators
disagree on, and the sign-in log.

Only an account with the role lead reaches it: the page list offers it to leads alone, and
the page checks the role it reads from the store itself before it reads anything else.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_count, get_rubric, get_store
from trajudge.labeling_app._review import annotator_disagreements
from trajudge.labeling_app.auth._session import require_viewer
from trajudge.labeling_app.lead._page_queue import queue_section
from trajudge.labeling_app.lead._stats import judge_agreement, pairwise_agreement, rounded
from trajudge.labeling_app.pages._actions import annotator_queue
from trajudge.labeling_app.pages._page_label import signed_in_page
from trajudge.labeling_app.queue._progress import progress

LOG_ROWS = 500


def _progress_rows(cfg: AppConfig, dataset: str) -> pd.DataFrame:
    """Per account: labeled, skipped and assigned items of its queue under the app's rubric
    (item rubrics; a pairwise rubric shows the labels given)."""
    store = get_store(cfg.db_url)
    rubric = get_rubric(cfg.rubric)
    rows = []
    for account in store.accounts():
        row: dict[str, object] = {
            "name": account.name,
            "role": account.role,
            "disabled": account.disabled,
            "e-mail": account.email or "",
            "created": account.created_at[:19],
        }
        if rubric.mode != "pairwise":
            queue = annotator_queue(cfg, dataset, rubric, account.name)
            p = progress(store, dataset, rubric.id, queue, get_count(cfg.db_url, dataset))
            row.update(labeled=p.mine_labeled, skipped=p.mine_skipped, assigned=p.mine_assigned)
        rows.append(row)
    return pd.DataFrame(rows)


def _agreement(cfg: AppConfig, dataset: str) -> None:
    """Kappa so far between annotators and between each judge and the humans, and the items
    the annotators disagree on (item rubrics; a pairwise rubric's pairs are on Review)."""
    rubric = get_rubric(cfg.rubric)
    if rubric.mode == "pairwise":
        st.text("Agreement on pairs: see the Review page.")
        return
    store = get_store(cfg.db_url)
    labels = store.labels_frame(dataset, rubric_id=rubric.id, source="human")
    weighting = "quadratic-weighted " if rubric.scale.kind == "ordinal" else ""
    st.subheader("Agreement between annotators", divider="gray")
    st.caption(
        f"Cohen's {weighting}kappa on the items both labeled, with a 95% interval (items "
        "resampled)."
    )
    pairs = pairwise_agreement(labels, rubric)
    if pairs.empty:
        st.text("No two annotators have labeled the same item yet.")
    else:
        st.dataframe(rounded(pairs), hide_index=True, width="stretch")
    st.subheader("Judges against the humans", divider="gray")
    st.caption("Cohen's kappa on pass / fail (mean score against the pass threshold).")
    judges = judge_agreement(labels, store.judgments_frame(dataset), rubric)
    if judges.empty:
        st.text("No judge has scored an item the annotators labeled yet.")
    else:
        st.dataframe(rounded(judges), hide_index=True, width="stretch")
    st.subheader("Items the annotators disagree on", divider="gray")
    table = annotator_disagreements(labels, rubric)
    if table.empty:
        st.text("None so far.")
    else:
        st.dataframe(table, hide_index=True, width="stretch")


def page_lead() -> None:
    cfg, _, dataset = signed_in_page()
    viewer = require_viewer(cfg)
    if not viewer.lead:
        st.error("Only a lead sees this page.")
        st.stop()
    st.title("Lead")
    st.subheader("Accounts and progress", divider="gray")
    st.caption(
        "Accounts are added, disabled and reset on the command line: trajudge annotators add | "
        "list | disable | reset."
    )
    st.dataframe(_progress_rows(cfg, dataset), hide_index=True, width="stretch")
    queue_section(cfg, dataset, get_rubric(cfg.rubric))
    _agreement(cfg, dataset)
    st.subheader("Sign-in log", divider="gray")
    st.caption(
        f"The latest {LOG_ROWS} sign-ins, failures, refusals and sign-outs (UTC), newest first."
    )
    log = pd.DataFrame(get_store(cfg.db_url).sign_in_log(LOG_ROWS))
    if log.empty:
        st.text("No sign-in yet.")
        return
    log["at"] = log["at"].str.slice(0, 19)
    st.dataframe(log[["at", "name", "client", "event", "detail"]], hide_index=True, width="stretch")
