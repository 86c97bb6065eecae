"""The sign-in page (name and password or invite token; no list of names; under single
sign-on the provider's button too, or alone with ``sso.only``) and the page that turns an
invite into a password."""

from __future__ import annotations

import streamlit as st

from trajudge.core import InputError
from trajudge.labeling_app import _state as S
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_datasets, get_store
from trajudge.labeling_app.auth._secrets import MAX_PASSWORD, check_new_password
from trajudge.labeling_app.auth._session import ENDED, client_address, end, session, start
from trajudge.labeling_app.auth._signin import (
    Refused,
    SessionEnded,
    set_password,
    sign_in,
)
from trajudge.labeling_app.auth._sso_page import (
    SSO_ACCOUNT,
    SSO_REFUSAL,
    sso_options,
    start_chosen,
)


def _dataset(cfg: AppConfig) -> str:
    if cfg.dataset:
        st.text(f"Dataset: {cfg.dataset}")
        return cfg.dataset
    names = get_datasets(cfg.db_url)
    if not names:
        st.error("The store holds no dataset yet: import trajectories first.")
        st.stop()
    return str(st.selectbox("Dataset", names, key="login-dataset"))


def page_login() -> None:
    """Name and credential; one message for every failure, whatever failed."""
    S.init_state()
    ss = st.session_state
    cfg: AppConfig = ss[S.CONFIG]
    st.title("trajudge · human labels")
    ended = ss.pop(ENDED, None)
    if ended:
        st.info(ended)
    sso = sso_options()
    if sso is not None:
        if ss.get(SSO_REFUSAL):  # signed in at the provider, but no usable account
            st.error(ss[SSO_REFUSAL])
            st.button("Sign out", key="sso-logout", on_click=st.logout)
            return
        account = ss.get(SSO_ACCOUNT)
        if account is not None:  # back from the provider: the dataset is chosen here
            dataset = _dataset(cfg)
            if st.button("Start labeling", type="primary", key="sso-go"):
                start_chosen(cfg, account, dataset)
                st.rerun()
            return
        st.button(sso.button, type="primary", key="sso-login", on_click=st.login)
        if sso.only:
            return
        st.divider()
    dataset = _dataset(cfg)
    with st.form("login", enter_to_submit=True, border=False):
        name = st.text_input("Name", key="login-name", max_chars=64, autocomplete="username")
        credential = st.text_input(
            "Password or invite",
            type="password",
            key="login-password",
            max_chars=MAX_PASSWORD,
            autocomplete="current-password",
            help="Your password, or the one-time invite your lead gave you.",
        )
        go = st.form_submit_button("Sign in", type="primary", key="login-go")
    if not go:
        return
    got = sign_in(
        get_store(cfg.db_url),
        name,
        credential,
        client_address(),
        ttl_s=cfg.session_hours * 3600.0,
    )
    if isinstance(got, Refused):
        st.error(got.message)
        return
    start(got, dataset)
    st.rerun()


def page_set_password() -> None:
    """After signing in with an invite: choose a password (the invite is used up by it)."""
    S.init_state()
    ss = st.session_state
    cfg: AppConfig = ss[S.CONFIG]
    signed = session()
    if signed is None:
        st.rerun()
    st.title("Choose your password")
    st.text(
        f"Signed in as {signed.name} with an invite. Choose the password you will sign in with."
    )
    with st.form("set-password", border=False):
        first = st.text_input(
            "New password", type="password", key="new-password", autocomplete="new-password"
        )
        second = st.text_input(
            "New password again", type="password", key="new-password-2", autocomplete="new-password"
        )
        go = st.form_submit_button("Set password", type="primary", key="set-password-go")
    if st.button("Cancel and sign out", key="set-password-cancel"):
        end("You are signed out; the invite still works until it expires.")
        st.rerun()
    if not go:
        return
    if first != second:
        st.error("The two passwords differ.")
        return
    try:
        check_new_password(first, signed.name)
    except InputError as exc:
        st.error(f"Choose another password: {exc.reason}.")
        return
    try:
        ss_signed = set_password(get_store(cfg.db_url), signed, first, client_address())
    except SessionEnded as exc:
        end(f"Your session ended ({exc}): sign in again.")
        st.rerun()
    start(ss_signed, None)
    st.rerun()
