"""The page list: sign-in until an annotator is known, then label (under a pairwise rubric,
the pair page), review and export. With single sign-on, the annotator follows the identity
provider's user on every full run (:mod:`trajudge.labeling_app.sso`)."""

from __future__ import annotations

import streamlit as st

from trajudge.labeling_app import _state as S
from trajudge.labeling_app._data import get_rubric
from trajudge.labeling_app._page_label import page_label
from trajudge.labeling_app._page_misc import page_export, page_login
from trajudge.labeling_app._page_pairs import page_label_pairs
from trajudge.labeling_app._page_review import page_review
from trajudge.labeling_app.sso._page import page_sso_login, sso_options, sync_sso


def pages() -> list[st.Page]:
    S.init_state()
    sso = sso_options()
    if sso is not None:
        sync_sso(sso)
    if st.session_state[S.ANNOTATOR] is None:
        login = page_login if sso is None else page_sso_login
        return [st.Page(login, title="Sign in", url_path="signin", default=True)]
    if get_rubric(st.session_state[S.CONFIG].rubric).mode == "pairwise":
        label = st.Page(page_label_pairs, title="Label pairs", url_path="pairs", default=True)
    else:
        label = st.Page(page_label, title="Label", url_path="label", default=True)
    return [
        label,  # the review and export pages serve items and pairs alike
        st.Page(page_review, title="Review", url_path="review"),
        st.Page(page_export, title="Export", url_path="export"),
    ]
