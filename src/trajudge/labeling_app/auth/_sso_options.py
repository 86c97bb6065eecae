"""What single sign-on needs (the ``sso:`` block of ``trajudge.yaml``) and the ``[auth]``
section Streamlit's OIDC login reads, built in the app's process from it.

The client secret is never in ``trajudge.yaml``, on a command line or in a file trajudge
writes: the app process reads it from an environment variable (``client_secret_env``) or from
a file the user owns and no one else may read (``client_secret_file``), and hands it to
Streamlit in memory (``st.App(secrets=...)``, see ``auth/_server_app.py``). The cookie secret that
signs the sign-in cookie is the same: from ``TRAJUDGE_LABEL_COOKIE_SECRET`` when set (sign-ins
then survive a restart), else drawn afresh by ``trajudge label`` at each start.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trajudge.core import InputError

ENV_SSO = "TRAJUDGE_LABEL_SSO"  # the options as JSON (no secret in them)
ENV_COOKIE_SECRET = "TRAJUDGE_LABEL_COOKIE_SECRET"
DEFAULT_SECRET_ENV = "TRAJUDGE_OIDC_CLIENT_SECRET"
CALLBACK = "/oauth2callback"  # Streamlit serves the provider's redirect here


class SsoOptions(BaseModel):
    """How the labeling app signs people in through an OpenID Connect provider.

    A verified e-mail address maps to the store's account with that e-mail (``trajudge
    annotators add NAME --email E``), whose name signs the labels; a disabled account is
    refused. ``only``: the sign-in page offers the provider alone (no password sign-in).
    ``redirect_uri`` is the app's
    ``/oauth2callback`` as the browser reaches it (default: the address ``trajudge label``
    listens on; give the public ``https://`` URL behind a reverse proxy). ``prompt`` is sent
    to the provider as is (Streamlit's default ``select_account`` when unset).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    server_metadata_url: str = Field(min_length=1)
    client_id: str = Field(min_length=1)
    client_secret_env: str = DEFAULT_SECRET_ENV
    client_secret_file: Path | None = None
    redirect_uri: str | None = None
    prompt: str | None = None
    button: str = Field(default="Sign in with SSO", min_length=1, max_length=64)
    only: bool = False

    @field_validator("server_metadata_url")
    @classmethod
    def _metadata_url(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.username is not None or parts.password is not None:
            raise ValueError("a credential in this URL would be shown in messages: remove it")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{url!r} is not an http(s) URL")
        return url

    @field_validator("redirect_uri")
    @classmethod
    def _callback(cls, url: str | None) -> str | None:
        if url is not None and not (urlsplit(url).netloc and url.endswith(CALLBACK)):
            raise ValueError(f"must be the app's URL ending in {CALLBACK}, got {url!r}")
        return url

    def for_server(self, host: str, port: int) -> SsoOptions:
        """These options with the redirect URI filled in for a server on ``host:port``; a
        server reached through another name (not loopback) must be given one."""
        if self.redirect_uri is not None:
            return self
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise InputError(
                "sso.redirect_uri",
                reason=f"the app listens on {host}: give the URL people open it at, "
                f"ending in {CALLBACK}",
            )
        shown = f"[{host}]" if ":" in host else host
        return self.model_copy(update={"redirect_uri": f"http://{shown}:{port}{CALLBACK}"})


def to_env(options: SsoOptions) -> dict[str, str]:
    """The environment variables that carry the options to the app process (no secret)."""
    return {ENV_SSO: options.model_dump_json()}


def from_env(environ: Mapping[str, str] | None = None) -> SsoOptions | None:
    """The options :func:`to_env` wrote, None when the app runs without single sign-on."""
    env = os.environ if environ is None else environ
    text = env.get(ENV_SSO)
    return None if not text else SsoOptions.model_validate_json(text)


def server_secrets(environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The secrets the app's ``st.App`` is built with: the ``[auth]`` section under single
    sign-on, None without it."""
    options = from_env(environ)
    return None if options is None else auth_secrets(options, environ)


def normal_email(email: str) -> str:
    """An e-mail address as accounts are looked up: trimmed, lower case."""
    return email.strip().lower()


def client_secret(options: SsoOptions, environ: Mapping[str, str] | None = None) -> str:
    """The OIDC client secret: from ``client_secret_file`` when given (a file only its owner
    may read), else from the environment variable ``client_secret_env``."""
    env = os.environ if environ is None else environ
    path = options.client_secret_file
    if path is not None:
        try:
            mode = path.stat().st_mode
            text = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise InputError(
                str(path), reason=f"cannot read the client secret: {exc.strerror}"
            ) from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise InputError(
                str(path), reason="others may read this client secret file: chmod 600 it"
            )
        if not text:
            raise InputError(str(path), reason="the client secret file is empty")
        return text
    value = env.get(options.client_secret_env, "")
    if not value:
        raise InputError(
            "sso",
            field="client_secret_env",
            reason=f"set {options.client_secret_env} to the OIDC client secret "
            "(or give sso.client_secret_file)",
        )
    return value


def check_provider(options: SsoOptions, *, timeout: float = 15.0) -> str:
    """The provider's issuer, read from its metadata document; InputError naming
    ``sso.server_metadata_url`` when it cannot be read or is not an OpenID Connect
    provider's (so a mistyped URL stops `trajudge label` before anyone tries to sign in)."""
    url = options.server_metadata_url
    try:  # an http(s) URL: the options refuse any other scheme
        with urllib.request.urlopen(url, timeout=timeout) as response:
            document = json.loads(response.read(1_000_000))
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc.__class__.__name__
        raise InputError(
            "sso.server_metadata_url", record=url, reason=f"cannot read it: {reason}"
        ) from None
    needed = ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri")
    missing = [k for k in needed if not isinstance(document, dict) or not document.get(k)]
    if missing:
        raise InputError(
            "sso.server_metadata_url",
            record=url,
            reason=f"not an OpenID Connect provider's metadata (no {', '.join(missing)})",
        )
    return str(document["issuer"])


def new_cookie_secret() -> str:
    """A fresh secret for signing the sign-in cookie (256 bits)."""
    return secrets.token_urlsafe(32)


def auth_secrets(options: SsoOptions, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Streamlit's secrets for ``st.login()``: one ``[auth]`` section naming the default
    provider (``st.login()`` without a name), built in memory."""
    env = os.environ if environ is None else environ
    cookie = env.get(ENV_COOKIE_SECRET, "")
    if not cookie:
        raise InputError(ENV_COOKIE_SECRET, reason="not set (trajudge label sets it)")
    if options.redirect_uri is None:
        raise InputError("sso", field="redirect_uri", reason="not set (trajudge label sets it)")
    section: dict[str, Any] = {
        "redirect_uri": options.redirect_uri,
        "cookie_secret": cookie,
        "client_id": options.client_id,
        "client_secret": client_secret(options, env),
        "server_metadata_url": options.server_metadata_url,
    }
    if options.prompt:
        section["client_kwargs"] = {"prompt": options.prompt}
    return {"auth": section}
