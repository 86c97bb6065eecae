"""Who is signing in: accounts' secrets (slow hashes), sign-in under a throttle with a log,
the session (``st.session_state[SESSION]``) checked against the store before every page and
every save, the sign-in page, and the Host check in front of the server.

Single sign-on (``_sso_*``): Streamlit's OpenID Connect login (``st.login``, through Authlib)
with each person's verified e-mail mapped to the store's account of that e-mail
(:func:`account_for_oidc_user`, refusing a disabled one); :func:`start_for_account`
(``method="oidc"``) then logs the sign-in and opens the session every page checks. Configured
by the ``sso:`` block of ``trajudge.yaml`` (:class:`SsoOptions`); the client secret comes from
an environment variable or a file only its owner may read, never from the configuration.
"""

from typing import TYPE_CHECKING

from trajudge.core import lazy_exports

if TYPE_CHECKING:
    from trajudge.labeling_app.auth._hosts import HostCheck, host_allowed
    from trajudge.labeling_app.auth._secrets import (
        check_new_password,
        hash_secret,
        new_invite,
        verify_secret,
    )
    from trajudge.labeling_app.auth._session import (
        SESSION,
        client_address,
        end,
        require_account,
        require_viewer,
        session,
        start,
        start_for_account,
        viewer_of,
    )
    from trajudge.labeling_app.auth._signin import (
        FAILED,
        Refused,
        SessionEnded,
        SignedIn,
        account_wait_s,
        check_session,
        client_wait_s,
        open_session,
        sign_in,
        sign_out,
    )
    from trajudge.labeling_app.auth._sso_accounts import (
        NO_ACCOUNT,
        UNVERIFIED,
        AccountLookup,
        SsoAccount,
        SsoRefused,
        account_for_oidc_user,
    )
    from trajudge.labeling_app.auth._sso_options import (
        DEFAULT_SECRET_ENV,
        SsoOptions,
        auth_secrets,
        client_secret,
        server_secrets,
    )

__all__ = [
    "DEFAULT_SECRET_ENV",
    "FAILED",
    "NO_ACCOUNT",
    "SESSION",
    "UNVERIFIED",
    "AccountLookup",
    "HostCheck",
    "Refused",
    "SessionEnded",
    "SignedIn",
    "SsoAccount",
    "SsoOptions",
    "SsoRefused",
    "account_for_oidc_user",
    "account_wait_s",
    "auth_secrets",
    "check_new_password",
    "check_session",
    "client_address",
    "client_secret",
    "client_wait_s",
    "end",
    "hash_secret",
    "host_allowed",
    "new_invite",
    "open_session",
    "require_account",
    "require_viewer",
    "server_secrets",
    "session",
    "sign_in",
    "sign_out",
    "start",
    "start_for_account",
    "verify_secret",
    "viewer_of",
]

# name -> the module it comes from: imported on first use (see trajudge.core._lazy)
_EXPORTS = {
    "HostCheck": "trajudge.labeling_app.auth._hosts",
    "host_allowed": "trajudge.labeling_app.auth._hosts",
    "check_new_password": "trajudge.labeling_app.auth._secrets",
    "hash_secret": "trajudge.labeling_app.auth._secrets",
    "new_invite": "trajudge.labeling_app.auth._secrets",
    "verify_secret": "trajudge.labeling_app.auth._secrets",
    "SESSION": "trajudge.labeling_app.auth._session",
    "client_address": "trajudge.labeling_app.auth._session",
    "end": "trajudge.labeling_app.auth._session",
    "require_account": "trajudge.labeling_app.auth._session",
    "require_viewer": "trajudge.labeling_app.auth._session",
    "session": "trajudge.labeling_app.auth._session",
    "start": "trajudge.labeling_app.auth._session",
    "start_for_account": "trajudge.labeling_app.auth._session",
    "viewer_of": "trajudge.labeling_app.auth._session",
    "FAILED": "trajudge.labeling_app.auth._signin",
    "Refused": "trajudge.labeling_app.auth._signin",
    "SessionEnded": "trajudge.labeling_app.auth._signin",
    "SignedIn": "trajudge.labeling_app.auth._signin",
    "account_wait_s": "trajudge.labeling_app.auth._signin",
    "check_session": "trajudge.labeling_app.auth._signin",
    "client_wait_s": "trajudge.labeling_app.auth._signin",
    "open_session": "trajudge.labeling_app.auth._signin",
    "sign_in": "trajudge.labeling_app.auth._signin",
    "sign_out": "trajudge.labeling_app.auth._signin",
    "NO_ACCOUNT": "trajudge.labeling_app.auth._sso_accounts",
    "UNVERIFIED": "trajudge.labeling_app.auth._sso_accounts",
    "AccountLookup": "trajudge.labeling_app.auth._sso_accounts",
    "SsoAccount": "trajudge.labeling_app.auth._sso_accounts",
    "SsoRefused": "trajudge.labeling_app.auth._sso_accounts",
    "account_for_oidc_user": "trajudge.labeling_app.auth._sso_accounts",
    "DEFAULT_SECRET_ENV": "trajudge.labeling_app.auth._sso_options",
    "SsoOptions": "trajudge.labeling_app.auth._sso_options",
    "auth_secrets": "trajudge.labeling_app.auth._sso_options",
    "client_secret": "trajudge.labeling_app.auth._sso_options",
    "server_secrets": "trajudge.labeling_app.auth._sso_options",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
