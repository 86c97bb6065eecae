"""The page list: sign-in until an account is signed in (then, after an invite, choosing a
password), then label (under a pairwise rubric, the pair page), review and export, and for a
lead the lead's page. Under single sign-on the session first follows the identity
provider's user (:func:`~trajudge.labeling_app.auth._sso_page.sync_sso`)."""

from __future__ import annotations

import streamlit as st

from trajudge.labeling_app import _state as S
from trajudge.labeling_app._data import get_rubric
from trajudge.labeling_app.auth._page_signin import page_login, page_set_password
from trajudge.labeling_app.auth._session import session
from trajudge.labeling_app.auth._sso_page import sso_options, sync_sso
from trajudge.labeling_app.lead._page_lead import page_lead
from trajudge.labeling_app.pages._page_label import page_label
from trajudge.labeling_app.pages._page_misc import page_export
from trajudge.labeling_app.pages._page_pairs import page_label_pairs
from trajudge.labeling_app.pages._page_review import page_review


def pages() -> list[st.Page]:
    S.init_state()
    if sso_options() is not None:
        sync_sso(st.session_state[S.CONFIG])
    signed = session()
    if signed is None:
        return [st.Page(page_login, title="Sign in", url_path="signin", default=True)]
    if signed.must_set_password:
        return [st.Page(page_set_password, title="Password", url_path="password", default=True)]
    if get_rubric(st.session_state[S.CONFIG].rubric).mode == "pairwise":
        label = st.Page(page_label_pairs, title="Label pairs", url_path="pairs", default=True)
    else:
        label = st.Page(page_label, title="Label", url_path="label", default=True)
    shown = [
        label,  # the review and export pages serve items and pairs alike
        st.Page(page_review, title="Review", url_path="review"),
        st.Page(page_export, title="Export", url_path="export"),
    ]
    if signed.role == "lead":  # the page checks the stored role again itself
        shown.append(st.Page(page_lead, title="Lead", url_path="lead"))
    return shown
