"""The export page (the sign-in pages are in ``auth``)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from trajudge.labeling_app._access import export_frame, pair_export_frame
from trajudge.labeling_app._data import get_rubric, get_store
from trajudge.labeling_app.auth._session import require_viewer
from trajudge.labeling_app.pages._page_label import signed_in_page
from trajudge.store import LABEL_FORMATS, encode_labels

_MIME = {"csv": "text/csv", "jsonl": "application/x-ndjson", "parquet": "application/octet-stream"}


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
    cfg, _, dataset = signed_in_page()
    viewer = require_viewer(cfg)
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
