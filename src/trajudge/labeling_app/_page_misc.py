"""The sign-in and export pages."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from trajudge.core import InputError
from trajudge.labeling_app import _state as S
from trajudge.labeling_app._access import export_frame, pair_export_frame, viewer_for
from trajudge.labeling_app._config import (
    AppConfig,
    check_adjudicator_password,
    check_password,
    password_required,
    validate_annotator,
)
from trajudge.labeling_app._data import get_datasets, get_rubric, get_store
from trajudge.labeling_app._page_label import signed_in_page
from trajudge.store import LABEL_FORMATS, encode_labels

_NEW = "(type a new name below)"
_MIME = {"csv": "text/csv", "jsonl": "application/x-ndjson", "parquet": "application/octet-stream"}


def page_login() -> None:
    S.init_state()
    ss = st.session_state
    cfg: AppConfig = ss[S.CONFIG]
    st.title("trajudge · human labels")
    if cfg.dataset:
        dataset: str | None = cfg.dataset
        st.text(f"Dataset: {cfg.dataset}")
    else:
        names = get_datasets(cfg.db_url)
        if not names:
            st.error("The store holds no dataset yet: import trajectories first.")
            st.stop()
        dataset = st.selectbox("Dataset", names, key="login-dataset")
    assert dataset is not None
    known = get_store(cfg.db_url).label_annotators(dataset)
    picked = st.selectbox("Your name", [_NEW, *known], key="login-pick")
    typed = st.text_input(
        "New name", key="login-name", max_chars=64, help="Letters, digits, spaces, . _ -"
    )
    password = (
        st.text_input("Password", type="password", key="login-password")
        if password_required()
        else ""
    )
    adjudicator_password = (
        st.text_input(
            "Adjudicator password",
            type="password",
            key="login-adjudicator-password",
            help="Only for the names given with `trajudge label --adjudicator`.",
        )
        if cfg.adjudicators
        else ""
    )
    if st.button("Start labeling", type="primary", key="login-go"):
        name = typed if picked == _NEW else picked
        try:
            name = validate_annotator(name)
        except InputError as exc:
            st.error(f"Invalid name: {exc.reason}")
            st.stop()
        if not check_password(password):
            st.error("Wrong password.")
            st.stop()
        if cfg.is_adjudicator(name) and not check_adjudicator_password(adjudicator_password):
            st.error("This name is an adjudicator's: give the adjudicator password.")
            st.stop()
        ss[S.ANNOTATOR] = name
        ss[S.DATASET] = dataset
        S.reset_queue_position()
        st.rerun()


def _downloads(frame: pd.DataFrame, dataset: str, kind: str) -> None:
    """One download button per file format for ``frame`` (labels or pair labels)."""
    cols = st.columns(len(LABEL_FORMATS))
    for col, fmt in zip(cols, LABEL_FORMATS, strict=True):
        col.download_button(
            f"Download {fmt.upper()}",
            data=encode_labels(frame, fmt),
            file_name=f"{dataset}-{kind}.{fmt}",
            mime=_MIME[fmt],
            key=f"download-{kind}-{fmt}",
            on_click="ignore",
        )


def page_export() -> None:
    """The labels and pair labels the viewer may download: everyone's for an adjudicator,
    else their own (other annotators' labels stay hidden, as on the Review page)."""
    cfg, me, dataset = signed_in_page()
    viewer = viewer_for(cfg, me)
    store = get_store(cfg.db_url)
    st.title("Export labels")
    whose = "all annotators" if viewer.adjudicator else "yours; an adjudicator exports everyone's"
    pairwise = get_rubric(cfg.rubric).mode == "pairwise"
    kinds = [("pair-labels", pair_export_frame), ("labels", export_frame)]
    for kind, read in kinds if pairwise else kinds[::-1]:
        frame = read(store, dataset, viewer)
        noun = kind.replace("-", " ")
        st.subheader(noun.capitalize(), divider="gray")
        st.text(f"{len(frame)} {noun} in dataset {dataset} (all rubrics, {whose}).")
        if frame.empty:
            continue
        st.dataframe(frame.head(200), hide_index=True, width="stretch")
        _downloads(frame, dataset, kind)
