"""Single sign-on in the app: the session follows the identity provider's user on every full
run, and sign-out ends Streamlit's sign-in cookie too.

Nobody becomes an annotator by typing a name: a person signed in at the provider gets the
session of the store's account with their verified e-mail (:func:`sync_sso`, through
:func:`~trajudge.labeling_app.auth._session.start_for_account`, logged like a password
sign-in), or a refusal (logged, no secret). It is decided again on every full run of the page,
so an account disabled meanwhile stops at that run, and its next save is refused by
``require_account`` as for a password session.
"""

from __future__ import annotations

import functools

import streamlit as st

from trajudge.labeling_app import _state as S
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_store
from trajudge.labeling_app.auth._session import (
    client_address,
    end,
    session,
    start_for_account,
)
from trajudge.labeling_app.auth._sso_accounts import SsoRefused, account_for_oidc_user
from trajudge.labeling_app.auth._sso_options import SsoOptions, from_env
from trajudge.store import Account, Store

SSO_ACCOUNT = "sso_account"  # the account the provider's user maps to, or None
SSO_REFUSAL = "sso_refusal"  # why the provider's user may not label, or None
_LOGGED = "sso_refusal_logged"  # the refusal already written to the sign-in log


@functools.cache
def sso_options() -> SsoOptions | None:
    """This server's single sign-on options (None: password sign-in only)."""
    return from_env()


def accounts_for(cfg: AppConfig) -> Store:
    """Where the accounts of e-mail addresses are looked up: the store."""
    return get_store(cfg.db_url)


def sync_sso(cfg: AppConfig) -> None:
    """Match this session to the provider's user (every full run, before the page list is
    made): open the mapped account's session when there is none and the dataset is known,
    end an SSO session whose user is gone or refused."""
    ss = st.session_state
    signed = session()
    ss[SSO_REFUSAL] = None
    ss[SSO_ACCOUNT] = None
    if not st.user.is_logged_in:
        if signed is not None and signed.method == "oidc":
            end(None)
        return
    user = st.user.to_dict()
    try:
        account = account_for_oidc_user(accounts_for(cfg), user)
    except SsoRefused as exc:
        ss[SSO_REFUSAL] = str(exc)
        if signed is not None and signed.method == "oidc":
            end(None)
        if not ss.get(_LOGGED):  # once per browser session, not on every rerun
            who = str(user.get("email") or user.get("sub") or "?")
            accounts_for(cfg).log_sign_in(who, client_address(), "refused", "oidc: no account")
            ss[_LOGGED] = True
        return
    ss[SSO_ACCOUNT] = account
    if signed is not None and signed.method == "oidc" and signed.name != account.name:
        end(None)
        signed = None
    dataset = cfg.dataset or ss[S.DATASET]
    if signed is None and dataset is not None:
        start_for_account(cfg, account, method="oidc", dataset=dataset)


def start_chosen(cfg: AppConfig, account: Account, dataset: str) -> None:
    """Open the SSO session on the dataset chosen after coming back from the provider."""
    start_for_account(cfg, account, method="oidc", dataset=dataset)


def sso_sign_out() -> None:
    """After the app's own sign-out: end Streamlit's sign-in cookie too (and the provider's
    session, when it offers an end-session endpoint)."""
    if sso_options() is not None and st.user.is_logged_in:
        st.logout()
        # the run ends here, so the browser is sent to Streamlit's /auth/logout (which
        # deletes the cookie); a rerun would drop that redirect and keep the cookie
        st.stop()
