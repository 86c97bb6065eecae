"""Single sign-on in the app: who is signed in follows the identity provider's user on every
full run, and the sign-in page offers only the provider's button.

With single sign-on on, nobody becomes an annotator by typing a name: the session's annotator
is the account :func:`~trajudge.labeling_app.sso.account_for_oidc_user` maps the provider's
user to, or nobody. It is decided again on every full run of the page, not only at sign-in,
so an account the lookup no longer gives (or gives disabled) stops labeling at that run.
"""

from __future__ import annotations

import functools

import streamlit as st

from trajudge.labeling_app import _state as S
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_datasets
from trajudge.labeling_app.sso._accounts import (
    AccountLookup,
    ConfiguredAccounts,
    SsoAccount,
    SsoRefused,
    account_for_oidc_user,
)
from trajudge.labeling_app.sso._options import SsoOptions, from_env

SSO_NAME = "sso_name"  # the account the provider's user maps to, or None
SSO_REFUSAL = "sso_refusal"  # why the provider's user may not label, or None


@functools.cache
def sso_options() -> SsoOptions | None:
    """This server's single sign-on options (None: sign-in by name, no provider)."""
    return from_env()


def accounts_for(options: SsoOptions) -> AccountLookup[SsoAccount]:
    """Where the accounts of e-mail addresses are looked up."""
    return ConfiguredAccounts(options.accounts)


def sync_sso(options: SsoOptions) -> None:
    """Make the session's annotator the provider's user's account, or nobody (every full
    run, before the page list is made)."""
    ss = st.session_state
    name: str | None = None
    ss[SSO_REFUSAL] = None
    if st.user.is_logged_in:
        try:
            name = account_for_oidc_user(accounts_for(options), st.user.to_dict()).name
        except SsoRefused as exc:
            ss[SSO_REFUSAL] = str(exc)
    ss[SSO_NAME] = name
    if ss[S.ANNOTATOR] is not None and ss[S.ANNOTATOR] != name:
        ss[S.ANNOTATOR] = None
        S.reset_queue_position()
    if name is not None and ss[S.ANNOTATOR] is None and ss[S.DATASET] is not None:
        ss[S.ANNOTATOR] = name
        S.reset_queue_position()


def sign_out() -> None:
    """Sign out of the app and, when signed in through the provider, of Streamlit's sign-in
    cookie too (and of the provider, when it offers an end-session endpoint)."""
    st.session_state[S.ANNOTATOR] = None
    S.reset_queue_position()
    if sso_options() is not None and st.user.is_logged_in:
        st.logout()
        # the run ends here, so the browser is sent to Streamlit's /auth/logout (which
        # deletes the cookie); a rerun would drop that redirect and keep the cookie
        st.stop()
    st.rerun()


def page_sso_login() -> None:
    """The sign-in page under single sign-on: the provider's button; once back from the
    provider, the refusal, or the dataset to label when the server names none."""
    S.init_state()
    ss = st.session_state
    options = sso_options()
    assert options is not None
    cfg: AppConfig = ss[S.CONFIG]
    st.title("trajudge · human labels")
    if ss.get(SSO_REFUSAL):
        st.error(ss[SSO_REFUSAL])
        st.button("Sign out", key="sso-logout", on_click=st.logout)
        return
    if not st.user.is_logged_in:
        st.button(options.button, type="primary", key="sso-login", on_click=st.login)
        return
    names = get_datasets(cfg.db_url)
    if not names:
        st.error("The store holds no dataset yet: import trajectories first.")
        return
    dataset = st.selectbox("Dataset", names, key="login-dataset")
    if st.button("Start labeling", type="primary", key="login-go"):
        ss[S.DATASET] = dataset
        ss[S.ANNOTATOR] = ss[SSO_NAME]
        S.reset_queue_position()
        st.rerun()
