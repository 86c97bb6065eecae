"""Single sign-on without a browser: the ``sso:`` options, where the client secret may come
from, the ``[auth]`` section handed to Streamlit, and the e-mail → account mapping. (The whole
flow, against a real provider in Chromium, is test_app_sso_browser.py.)"""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import ValidationError

from trajudge.core import InputError
from trajudge.labeling_app._serve import sso_env
from trajudge.labeling_app.auth import (
    NO_ACCOUNT,
    UNVERIFIED,
    SsoOptions,
    SsoRefused,
    account_for_oidc_user,
    auth_secrets,
    client_secret,
    server_secrets,
)
from trajudge.labeling_app.auth._sso_options import (
    ENV_COOKIE_SECRET,
    ENV_SSO,
    check_provider,
    from_env,
)
from trajudge.store import Store

METADATA = "https://idp.example.test/.well-known/openid-configuration"
SECRET = "client-secret-for-this-test"


def _options(**extra: object) -> SsoOptions:
    return SsoOptions.model_validate(
        {"server_metadata_url": METADATA, "client_id": "labels", **extra}
    )


@dataclass(frozen=True)
class _Account:
    name: str
    disabled: bool


@dataclass(frozen=True)
class _Accounts:
    """A lookup of fixed accounts (for the claims checks, which never reach the lookup)."""

    table: dict[str, _Account]

    def account_by_email(self, email: str) -> _Account | None:
        return self.table.get(email)


def _store_with(db_url: str, *accounts: tuple[str, str]) -> Store:
    """A store holding these (name, e-mail) accounts, as `trajudge annotators add` makes them."""
    store = Store(db_url)
    for name, email in accounts:
        store.add_account(name, "annotator", email=email, secret="x", secret_kind="password")
    return store


def test_a_verified_email_maps_to_its_account_whatever_its_case(db_url: str) -> None:
    accounts = _store_with(db_url, ("alice", "Alice@Example.test"))
    user = {"email": " ALICE@example.TEST ", "email_verified": True, "sub": "x"}
    assert account_for_oidc_user(accounts, user).name == "alice"
    # a provider that sends the claim as the JSON string "true"
    assert account_for_oidc_user(accounts, {**user, "email_verified": "true"}).name == "alice"


@pytest.mark.parametrize(
    "user",
    [
        {"email": "alice@example.test", "email_verified": False},
        {"email": "alice@example.test", "email_verified": "false"},
        {"email": "alice@example.test"},  # no claim: not verified
        {"email_verified": True},  # no e-mail at all
        {"email": "  ", "email_verified": True},
    ],
)
def test_an_unverified_or_missing_email_is_refused(user: dict[str, object]) -> None:
    accounts = _Accounts({"alice@example.test": _Account("alice", False)})
    with pytest.raises(SsoRefused) as refused:
        account_for_oidc_user(accounts, user)
    assert str(refused.value) == UNVERIFIED


def test_unknown_and_disabled_accounts_get_the_same_message(db_url: str) -> None:
    accounts = _store_with(db_url, ("ann", "ann@example.test"), ("old", "old@example.test"))
    accounts.set_account_disabled("old", True)  # `trajudge annotators disable old`
    verified = {"email_verified": True}
    assert account_for_oidc_user(accounts, {**verified, "email": "ann@example.test"}).name == "ann"
    said = []
    for email in ("old@example.test", "nobody@example.test"):
        with pytest.raises(SsoRefused) as refused:
            account_for_oidc_user(accounts, {**verified, "email": email})
        said.append(str(refused.value))
    assert said == [NO_ACCOUNT, NO_ACCOUNT]  # no hint which addresses have an account


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        # e-mails map to the store's accounts only: a table here could bypass a disabled one
        ({"accounts": {"a@x.test": "a"}}, "Extra inputs are not permitted"),
        ({"redirect_uri": "https://labels.example.test/callback"}, "/oauth2callback"),
        ({"server_metadata_url": "file:///etc/passwd"}, "not an http(s) URL"),
        ({"server_metadata_url": "https://u:pw@idp.test/x"}, "credential in this URL"),
        ({"client_secret": "inline"}, "Extra inputs are not permitted"),
    ],
)
def test_bad_options_are_refused(extra: dict[str, object], words: str) -> None:
    with pytest.raises(ValidationError) as bad:
        _options(**extra)
    assert words in str(bad.value)


def test_the_redirect_uri_defaults_to_a_loopback_server_only() -> None:
    filled = _options().for_server("127.0.0.1", 8600)
    assert filled.redirect_uri == "http://127.0.0.1:8600/oauth2callback"
    assert _options().for_server("::1", 8600).redirect_uri == "http://[::1]:8600/oauth2callback"
    public = "https://labels.example.test/oauth2callback"
    assert _options(redirect_uri=public).for_server("0.0.0.0", 8501).redirect_uri == public
    with pytest.raises(InputError, match=r"sso\.redirect_uri: the app listens on 0\.0\.0\.0"):
        _options().for_server("0.0.0.0", 8501)


def test_the_client_secret_comes_from_the_environment_or_an_owner_only_file(
    tmp_path: Path,
) -> None:
    assert client_secret(_options(), {"TRAJUDGE_OIDC_CLIENT_SECRET": SECRET}) == SECRET
    assert client_secret(_options(client_secret_env="MY_IDP"), {"MY_IDP": SECRET}) == SECRET
    with pytest.raises(InputError, match="set TRAJUDGE_OIDC_CLIENT_SECRET"):
        client_secret(_options(), {})
    path = tmp_path / "client-secret"
    path.write_text(SECRET + "\n")
    path.chmod(0o644)
    with pytest.raises(InputError, match="others may read this client secret file"):
        client_secret(_options(client_secret_file=path), {})
    path.chmod(0o600)
    assert client_secret(_options(client_secret_file=path), {}) == SECRET
    path.write_text("\n")
    with pytest.raises(InputError, match="empty"):
        client_secret(_options(client_secret_file=path), {})
    with pytest.raises(InputError, match="cannot read the client secret"):
        client_secret(_options(client_secret_file=tmp_path / "missing"), {})


def test_the_auth_section_streamlit_reads() -> None:
    options = _options(prompt="login").for_server("127.0.0.1", 8600)
    env = {"TRAJUDGE_OIDC_CLIENT_SECRET": SECRET, ENV_COOKIE_SECRET: "cookie-signing-key"}
    # the keys of Streamlit's [auth] section for its default provider (st.login())
    assert auth_secrets(options, env) == {
        "auth": {
            "redirect_uri": "http://127.0.0.1:8600/oauth2callback",
            "cookie_secret": "cookie-signing-key",
            "client_id": "labels",
            "client_secret": SECRET,
            "server_metadata_url": METADATA,
            "client_kwargs": {"prompt": "login"},
        }
    }
    assert "client_kwargs" not in auth_secrets(_options().for_server("127.0.0.1", 1), env)["auth"]


def test_the_app_process_gets_the_options_and_a_cookie_secret_never_the_client_secret() -> None:
    options = _options(only=True).for_server("127.0.0.1", 8600)
    env = sso_env(options, {"TRAJUDGE_OIDC_CLIENT_SECRET": SECRET})
    assert SECRET not in json.dumps(env)  # the child inherits the variable; nothing copies it
    assert from_env(env) == options
    assert len(env[ENV_COOKIE_SECRET]) >= 43  # 32 random bytes, URL-safe base64
    again = sso_env(options, {"TRAJUDGE_OIDC_CLIENT_SECRET": SECRET})
    assert again[ENV_COOKIE_SECRET] != env[ENV_COOKIE_SECRET]
    # a cookie secret the user set is kept (sign-ins then survive a restart)
    kept = {"TRAJUDGE_OIDC_CLIENT_SECRET": SECRET, ENV_COOKIE_SECRET: "mine"}
    assert ENV_COOKIE_SECRET not in sso_env(options, kept)
    assert set(env) == {ENV_SSO, ENV_COOKIE_SECRET}
    with pytest.raises(InputError, match="TRAJUDGE_OIDC_CLIENT_SECRET"):
        sso_env(options, {})
    assert from_env({}) is None
    # what the app process builds its st.App with, from that environment and the variable
    child = {**env, "TRAJUDGE_OIDC_CLIENT_SECRET": SECRET}
    auth = (server_secrets(child) or {})["auth"]
    assert auth["client_secret"] == SECRET and auth["cookie_secret"] == env[ENV_COOKIE_SECRET]
    assert server_secrets({}) is None  # no single sign-on: no secrets


@pytest.fixture
def metadata_server() -> Iterator[tuple[str, dict[str, object]]]:
    """A loopback HTTP server answering every GET with the JSON document in its dict."""
    served: dict[str, object] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(served).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield (
            f"http://127.0.0.1:{server.server_address[1]}/.well-known/openid-configuration",
            served,
        )
    finally:
        server.shutdown()
        server.server_close()


def test_the_provider_is_checked_before_the_app_serves(
    metadata_server: tuple[str, dict[str, object]],
) -> None:
    url, served = metadata_server
    served.update({"issuer": "http://127.0.0.1", "authorization_endpoint": "x"})
    with pytest.raises(InputError, match=r"no token_endpoint, jwks_uri"):
        check_provider(_options(server_metadata_url=url))
    served.update({"token_endpoint": "y", "jwks_uri": "z"})
    assert check_provider(_options(server_metadata_url=url)) == "http://127.0.0.1"
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/.well-known/openid-configuration"
    with pytest.raises(InputError, match=r"sso\.server_metadata_url: .*cannot read it"):
        check_provider(_options(server_metadata_url=closed), timeout=5)


def test_with_or_without_sso_streamlit_serves_one_entry_file_as_an_st_app() -> None:
    from streamlit.web.server.app_discovery import discover_asgi_app

    from trajudge.labeling_app import streamlit_command

    command = streamlit_command(host="127.0.0.1", port=8600)
    entry = Path(command[command.index("run") + 1])
    assert entry.name == "_server_app.py"
    # `streamlit run` serves it with uvicorn only when it finds the st.App in it
    found = discover_asgi_app(entry)
    assert found.is_asgi_app and found.app_name == "app"
    # the secrets it is built with: the [auth] section under single sign-on, else none
    assert "secrets=server_secrets()" in entry.read_text()
