"""Who is signing in: accounts' secrets (slow hashes), sign-in under a throttle with a log,
the session (``st.session_state[SESSION]``) checked against the store before every page and
every save, the sign-in and lead pages, and the Host check in front of the server.

For a single sign-on page: find the account with ``Store.account_by_email``, refuse a
disabled one, then call :func:`start_for_account` (``method="oidc"``); it logs the sign-in
and opens the session every page checks.
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

__all__ = [
    "FAILED",
    "SESSION",
    "HostCheck",
    "Refused",
    "SessionEnded",
    "SignedIn",
    "account_wait_s",
    "check_new_password",
    "check_session",
    "client_address",
    "client_wait_s",
    "end",
    "hash_secret",
    "host_allowed",
    "new_invite",
    "open_session",
    "require_account",
    "require_viewer",
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
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
