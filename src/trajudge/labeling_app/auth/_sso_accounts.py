"""Who a person signed in through the identity provider is in trajudge: their verified e-mail
mapped to an account, whose name signs their labels.

The only place the mapping is decided is :func:`account_for_oidc_user`. It asks an
:class:`AccountLookup` for the account of an e-mail address: the store, whose accounts
(``trajudge annotators add NAME --email E``) answer with ``Store.account_by_email``. There is
no second table of e-mails in the configuration, so a disabled account stays refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from trajudge.labeling_app.auth._sso_options import normal_email

# One message for an address with no account and for a disabled account: the refusal says
# nothing about which accounts exist.
NO_ACCOUNT = (
    "This sign-in is not linked to an active trajudge account. Ask the lead of this labeling "
    "session to add your e-mail address."
)
UNVERIFIED = (
    "Your identity provider has not verified this e-mail address, and trajudge signs people "
    "in only by a verified one."
)


class SsoAccount(Protocol):
    """What the mapping reads of an account."""

    @property
    def name(self) -> str: ...

    @property
    def disabled(self) -> bool: ...


A = TypeVar("A", bound=SsoAccount, covariant=True)


class AccountLookup(Protocol[A]):
    """Anything that finds the account of an e-mail address (lower case), or None: the
    store (``Store.account_by_email``)."""

    def account_by_email(self, email: str) -> A | None: ...


class SsoRefused(PermissionError):
    """The identity provider's user has no usable trajudge account; ``str()`` is the
    message to show them."""


def _verified(value: Any) -> bool:
    # a boolean claim; a few providers send the JSON string "true"
    return value is True or (isinstance(value, str) and value.lower() == "true")


def account_for_oidc_user(accounts: AccountLookup[A], user: Mapping[str, Any]) -> A:
    """The account whose name signs the labels of the provider's ``user`` (its ID-token
    claims, as ``st.user`` holds them); :class:`SsoRefused` when the e-mail is missing or not
    verified (``email_verified`` must be true), or has no account, or the account is
    disabled."""
    email = user.get("email")
    if not isinstance(email, str) or not email.strip() or not _verified(user.get("email_verified")):
        raise SsoRefused(UNVERIFIED)
    account = accounts.account_by_email(normal_email(email))
    if account is None or account.disabled:
        raise SsoRefused(NO_ACCOUNT)
    return account
