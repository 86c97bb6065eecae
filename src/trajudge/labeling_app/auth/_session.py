"""The signed-in session in Streamlit: where it is kept and where it is checked.

``st.session_state[SESSION]`` holds the :class:`~trajudge.labeling_app.auth._signin.SignedIn`
of this browser tab's session (None before sign-in) and ``st.session_state[S.ANNOTATOR]``
its account name, which the pages label under. Every full run of a page and every rerun of
its fragment checks the session against the store (:func:`require_viewer`), and every save
does so again in its callback (:func:`require_account`): a disabled or reset account's next
click saves nothing and lands on the sign-in page with one line saying why.
"""

from __future__ import annotations

import time

import streamlit as st

from trajudge.labeling_app import _state as S
from trajudge.labeling_app._access import Viewer
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_store
from trajudge.labeling_app.auth._signin import SessionEnded, SignedIn, check_session, open_session
from trajudge.store import Account

SESSION = "signed_in"  # SignedIn of this session, or None
ENDED = "session_ended"  # why the last session ended (shown once on the sign-in page), or None


def client_address() -> str:
    """The client's address as the server saw it ("loopback" on this machine; behind a proxy
    on this machine, the address it forwards in X-Forwarded-For)."""
    try:
        found = st.context.ip_address
    except Exception:  # no client context (a script run by AppTest)
        found = None
    return found if isinstance(found, str) and found else "loopback"


def session() -> SignedIn | None:
    """This session's sign-in, or None."""
    found = st.session_state.get(SESSION)
    return found if isinstance(found, SignedIn) else None


def start(signed: SignedIn, dataset: str | None) -> None:
    """Make ``signed`` this session's sign-in (on the dataset chosen at sign-in)."""
    ss = st.session_state
    ss[SESSION] = signed
    ss[S.ANNOTATOR] = signed.name
    if dataset is not None:
        ss[S.DATASET] = dataset
    ss.pop(ENDED, None)
    S.reset_queue_position()


def start_for_account(
    cfg: AppConfig, account: Account, *, method: str, dataset: str | None = None
) -> SignedIn:
    """Open and keep a session for an account that proved who it is elsewhere (single
    sign-on): logged, with the server's session lifetime. The caller has checked that the
    account is enabled."""
    signed = open_session(
        get_store(cfg.db_url),
        account,
        client_address(),
        method=method,
        ttl_s=cfg.session_hours * 3600.0,
        now=time.time(),
    )
    start(signed, dataset)
    return signed


def end(why: str | None) -> None:
    """Drop this session's sign-in (``why``: the line the sign-in page shows, if any)."""
    ss = st.session_state
    ss[SESSION] = None
    ss[S.ANNOTATOR] = None
    if why:
        ss[ENDED] = why
    S.reset_queue_position()


def require_account(cfg: AppConfig) -> Account:
    """The signed-in account, checked against the store now; otherwise the session ends and
    :class:`~trajudge.labeling_app._state.SignedOut` is raised (nothing is saved)."""
    signed = session()
    if signed is None or signed.must_set_password:
        end(None)
        raise S.SignedOut("not signed in")
    try:
        return check_session(get_store(cfg.db_url), signed, client_address())
    except SessionEnded as exc:
        end(f"Your session ended ({exc}): sign in again. Nothing was saved after it ended.")
        raise S.SignedOut(str(exc)) from None


def viewer_of(account: Account) -> Viewer:
    """What the account may see: adjudicators and leads see every item and adjudicate."""
    return Viewer(
        account.name,
        adjudicator=account.role in ("adjudicator", "lead"),
        lead=account.role == "lead",
    )


def require_viewer(cfg: AppConfig) -> Viewer:
    """The signed-in viewer for a page or fragment run; back to the sign-in page (a full
    rerun) when the session is over."""
    try:
        return viewer_of(require_account(cfg))
    except S.SignedOut:
        st.rerun(scope="app")
