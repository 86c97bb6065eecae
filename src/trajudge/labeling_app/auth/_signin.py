"""Signing in to the labeling app: credentials, the throttle, the session, the sign-in log.

No Streamlit here: the rules are plain functions over the store, so they hold whichever page
(or a single sign-on callback) calls them.

- A failed sign-in says one thing, whatever failed (unknown name, wrong password, used or
  expired invite, disabled account): :data:`FAILED`. An unknown name costs the same hash as a
  known one.
- Failures are counted per account name and per client address in the store (every app
  process of one store counts together). Past a few, each next attempt must wait longer
  (:func:`account_wait_s`, :func:`client_wait_s`), up to a lock-out; an attempt that comes too
  early is refused without looking at the credential. The counts start again after an hour
  without failure, or after a successful sign-in.
- Every attempt, refusal and sign-out is a line of the sign-in log (never a secret).
- A session (:class:`SignedIn`) expires, and ends as soon as its account is disabled, reset or
  given another role (the account's ``epoch`` moved on): :func:`check_session` is called
  before every page and every save.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from trajudge.labeling_app.auth._secrets import hash_secret, verify_secret
from trajudge.store import Account, Store

FAILED = (
    "Sign-in failed: the name or the password (or invite) is not right, or the account is "
    "not active."
)
THROTTLED = "Too many failed sign-ins: wait {wait} and try again."
FORGET_AFTER_S = 3600.0
LOCKOUT_S = 900.0  # 15 minutes
# the hash the unknown names are checked against (any valid hash: nothing matches it)
_NOBODY = hash_secret("no account has this secret")


def account_wait_s(failures: int) -> float:
    """Seconds before the next attempt for one account name: free for 3 failures, then 2, 4,
    8 ... seconds, and a 15-minute lock-out from the 10th."""
    if failures < 4:
        return 0.0
    if failures >= 10:
        return LOCKOUT_S
    return float(2 ** (failures - 3))


def client_wait_s(failures: int) -> float:
    """The same per client address, looser (a team may sign in from one address): free for
    10 failures, then 2, 4, 8 ... seconds, a 15-minute lock-out from the 20th."""
    if failures < 11:
        return 0.0
    if failures >= 20:
        return LOCKOUT_S
    return float(2 ** (failures - 10))


def throttle_keys(name: str, client: str) -> tuple[str, str]:
    """The throttle's keys of an attempt (names compared without case, as people type)."""
    return f"account:{name.strip().casefold()[:100]}", f"client:{client[:100]}"


@dataclass(frozen=True)
class SignedIn:
    """A signed-in session, as ``st.session_state[auth.SESSION]`` holds it.

    ``epoch`` is the account's at sign-in: a reset, disable or role change moves it on and
    ends the session. ``must_set_password``: signed in with an invite, which must be turned
    into a password before anything else.
    """

    name: str
    role: str
    epoch: int
    method: str  # password | invite | oidc
    expires_at: float  # epoch seconds
    must_set_password: bool = False


@dataclass(frozen=True)
class Refused:
    """A refused sign-in: the one message the page shows."""

    message: str


def _wait_words(seconds: float) -> str:
    s = max(1, round(seconds))
    return f"{s} seconds" if s < 120 else f"{round(s / 60)} minutes"


def open_session(
    store: Store, account: Account, client: str, *, method: str, ttl_s: float, now: float
) -> SignedIn:
    """The session of an account that proved who it is (by password, invite, or single
    sign-on); logged. The caller checked the credential and that the account is enabled."""
    store.log_sign_in(account.name, client, "signed in", method)
    return SignedIn(
        account.name,
        account.role,
        account.epoch,
        method,
        now + ttl_s,
        must_set_password=method == "invite",
    )


def sign_in(
    store: Store,
    name: str,
    credential: str,
    client: str,
    *,
    ttl_s: float,
    now: float | None = None,
) -> SignedIn | Refused:
    """Check a name and a password (or invite token) under the throttle."""
    now = time.time() if now is None else now
    name = name.strip()
    keys = throttle_keys(name, client)
    until = store.throttle_until(keys)
    if until > now:
        store.log_sign_in(name, client, "throttled", f"{until - now:.0f} s left")
        return Refused(THROTTLED.format(wait=_wait_words(until - now)))
    account = store.account(name) if name else None
    matched = verify_secret(credential, account.secret if account else _NOBODY)
    why = None
    if account is None:
        why = "unknown name"
    elif not matched:
        why = "wrong credential"
    elif account.disabled:
        why = "account disabled"
    elif account.secret_kind == "invite" and (account.secret_expires_at or 0.0) <= now:
        why = "invite expired"
    if why is not None or account is None:
        n = store.record_failure(keys[0], now, forget_after_s=FORGET_AFTER_S, wait_s=account_wait_s)
        store.record_failure(keys[1], now, forget_after_s=FORGET_AFTER_S, wait_s=client_wait_s)
        store.log_sign_in(name, client, "failed", f"{why} (failure {n})")
        return Refused(FAILED)
    store.clear_failures(keys)
    method = "invite" if account.secret_kind == "invite" else "password"
    return open_session(store, account, client, method=method, ttl_s=ttl_s, now=now)


def set_password(store: Store, session: SignedIn, password: str, client: str) -> SignedIn:
    """Turn the invite a session signed in with into a password (checked by the caller with
    ``check_new_password``). The write is conditional on the invite still being the account's
    secret (of two sessions redeeming one invite, one wins); otherwise the session ends
    (:class:`SessionEnded`)."""
    account = store.account(session.name)
    if account is None or account.secret is None or account.secret_kind != "invite":
        raise SessionEnded("the invite was used or replaced meanwhile")
    if not store.redeem_invite(session.name, account.secret, hash_secret(password)):
        raise SessionEnded("the invite was used or replaced meanwhile")
    store.log_sign_in(session.name, client, "password set", "from invite")
    return replace(session, must_set_password=False, method="password")


class SessionEnded(PermissionError):
    """The session is over: expired, or its account disabled, reset or changed."""


def check_session(
    store: Store, session: SignedIn, client: str, now: float | None = None
) -> Account:
    """The session's account, read from the store now; :class:`SessionEnded` (logged) when the
    session expired or the account was disabled, reset, given another role or removed."""
    now = time.time() if now is None else now
    account = store.account(session.name)
    why = None
    if account is None:
        why = "account removed"
    elif account.disabled:
        why = "account disabled"
    elif account.epoch != session.epoch:
        why = "account reset or changed"
    elif now >= session.expires_at:
        why = "session expired"
    if why is not None or account is None:
        store.log_sign_in(session.name, client, "session ended", why)
        raise SessionEnded(why)
    return account


def sign_out(store: Store, session: SignedIn, client: str) -> None:
    """Log a sign-out (the caller drops the session)."""
    store.log_sign_in(session.name, client, "signed out", None)
