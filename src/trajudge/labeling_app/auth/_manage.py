"""Managing accounts (what ``trajudge annotators`` does): add, reset, disable, and the first
lead's account that `trajudge label` creates on a store without any.

An account gets either a password (checked, hashed) or a one-time invite token, which is
returned once to be handed to its person and stored only as a hash: signing in with it asks
for a password at once, and it stops working when it is used or expires.
"""

from __future__ import annotations

import time

from trajudge.labeling_app._config import validate_annotator
from trajudge.labeling_app.auth._secrets import check_new_password, hash_secret, new_invite
from trajudge.store import Account, Store

INVITE_DAYS = 7.0
FIRST_LEAD = "lead"


def _secret(
    name: str, password: str | None, invite_days: float
) -> tuple[str, str, float | None, str | None]:
    """(hash, kind, expiry, invite token or None) for a password or a new invite."""
    if password is not None:
        return hash_secret(check_new_password(password, name)), "password", None, None
    token = new_invite()
    return hash_secret(token), "invite", time.time() + invite_days * 86400.0, token


def add_account(
    store: Store,
    name: str,
    role: str = "annotator",
    *,
    email: str | None = None,
    password: str | None = None,
    invite_days: float = INVITE_DAYS,
) -> tuple[Account, str | None]:
    """Add an account with ``password``, or with a new invite; returns the account and the
    invite token (None with a password). InputError for a bad or taken name or e-mail."""
    name = validate_annotator(name)
    secret, kind, expires, token = _secret(name, password, invite_days)
    account = store.add_account(
        name, role, email=email, secret=secret, secret_kind=kind, secret_expires_at=expires
    )
    return account, token


def reset_account(
    store: Store, name: str, *, password: str | None = None, invite_days: float = INVITE_DAYS
) -> tuple[Account, str | None]:
    """Give an account a new password or a new invite (the old secret stops working and its
    sessions end); returns the account and the invite token (None with a password)."""
    secret, kind, expires, token = _secret(name, password, invite_days)
    return store.set_account_secret(name, secret, kind, expires), token


def first_lead(store: Store) -> tuple[Account, str] | None:
    """On a store without any account: a lead account ``lead`` with an invite (returned with
    its token), so that `trajudge label` alone starts a session someone can sign in to.
    None when the store has accounts."""
    if store.accounts():
        return None
    account, token = add_account(store, FIRST_LEAD, "lead")
    assert token is not None  # no password was given: an invite
    store.log_sign_in(FIRST_LEAD, "trajudge label", "account added", "first lead, invite")
    return account, token
