"""Single sign-on for the labeling app: Streamlit's OpenID Connect login (``st.login``,
through Authlib) with each person's verified e-mail mapped to the account that signs their
labels (``account_for_oidc_user``). Configured by the ``sso:`` block of ``trajudge.yaml``
(``SsoOptions``); the client secret comes from an environment variable or a file only its
owner may read, never from the configuration.
"""

from typing import TYPE_CHECKING

from trajudge.core import lazy_exports

if TYPE_CHECKING:
    from trajudge.labeling_app.sso._accounts import (
        NO_ACCOUNT,
        UNVERIFIED,
        AccountLookup,
        ConfiguredAccounts,
        SsoAccount,
        SsoRefused,
        account_for_oidc_user,
    )
    from trajudge.labeling_app.sso._options import (
        DEFAULT_SECRET_ENV,
        SsoOptions,
        auth_secrets,
        client_secret,
        server_secrets,
    )

__all__ = [
    "DEFAULT_SECRET_ENV",
    "NO_ACCOUNT",
    "UNVERIFIED",
    "AccountLookup",
    "ConfiguredAccounts",
    "SsoAccount",
    "SsoOptions",
    "SsoRefused",
    "account_for_oidc_user",
    "auth_secrets",
    "client_secret",
    "server_secrets",
]

_EXPORTS = {
    "NO_ACCOUNT": "trajudge.labeling_app.sso._accounts",
    "UNVERIFIED": "trajudge.labeling_app.sso._accounts",
    "AccountLookup": "trajudge.labeling_app.sso._accounts",
    "ConfiguredAccounts": "trajudge.labeling_app.sso._accounts",
    "SsoAccount": "trajudge.labeling_app.sso._accounts",
    "SsoRefused": "trajudge.labeling_app.sso._accounts",
    "account_for_oidc_user": "trajudge.labeling_app.sso._accounts",
    "DEFAULT_SECRET_ENV": "trajudge.labeling_app.sso._options",
    "SsoOptions": "trajudge.labeling_app.sso._options",
    "auth_secrets": "trajudge.labeling_app.sso._options",
    "client_secret": "trajudge.labeling_app.sso._options",
    "server_secrets": "trajudge.labeling_app.sso._options",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
