"""Start the Streamlit server for `trajudge label`."""

from __future__ import annotations

import ipaddress
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from trajudge.core import InputError
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app.auth._sso_options import (
    ENV_COOKIE_SECRET,
    SsoOptions,
    check_provider,
    client_secret,
    new_cookie_secret,
    to_env,
)


def app_script() -> Path:
    """The entry file of the app (its pages)."""
    return Path(__file__).with_name("app.py")


def server_script() -> Path:
    """The file ``streamlit run`` serves: the app behind the Host check (``auth/_hosts``)."""
    return Path(__file__).parent / "auth" / "_server_app.py"


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine (127.0.0.0/8, ::1 or localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def streamlit_command(*, host: str = "127.0.0.1", port: int = 8501) -> list[str]:
    """The ``streamlit run`` command line: headless, no usage statistics, no browser.

    Streamlit's full garbage collection after every script run is off: with the library
    loaded it walks a few hundred thousand objects, which took most of the server's time per
    click on the label page (Python's own generational collector still runs).

    CORS and XSRF protection are switched on here, on the command line, which Streamlit
    reads over its environment variables and any ``.streamlit/config.toml``: a file or a
    variable that switches them off cannot weaken the app.
    """
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(server_script()),
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--server.runOnSave",
        "false",
        "--client.toolbarMode",
        "viewer",
        "--runner.postScriptGC",
        "false",
        # an unexpected error shows its type only: no traceback, SQL or server path
        "--client.showErrorDetails",
        "type",
        "--server.enableCORS",
        "true",
        "--server.enableXsrfProtection",
        "true",
    ]


def check_config(config: AppConfig) -> None:
    """Fail early (InputError) on a missing dataset or an unknown rubric."""
    # imported on use: the store (SQLAlchemy) loads when the app starts, not for --help
    from trajudge.judges import load_rubric
    from trajudge.store import Store

    load_rubric(config.rubric)
    store = Store(config.db_url)
    try:
        if config.dataset is not None:
            store.require_dataset(config.dataset)
    finally:
        store.close()


def check_sso_support() -> None:
    """Refuse (InputError) a Streamlit that cannot hold the ``[auth]`` secrets in memory
    (``st.App(secrets=...)``) or has no Authlib for ``st.login``."""
    # imported on use: only a server with single sign-on needs them
    import importlib.util
    import inspect

    import streamlit

    server = getattr(streamlit, "App", None)
    if server is None or "secrets" not in inspect.signature(server).parameters:
        raise InputError(
            "sso",
            reason=f"Streamlit {streamlit.__version__} has no st.App(secrets=...), which "
            "single sign-on needs (1.67 has it): pip install -U streamlit",
        )
    if importlib.util.find_spec("authlib") is None:
        raise InputError(
            "sso", reason="st.login needs Authlib: pip install 'trajudge[app]' (or authlib)"
        )


def sso_env(sso: SsoOptions, environ: dict[str, str]) -> dict[str, str]:
    """What the app process needs for single sign-on besides the inherited environment: the
    options (no secret in them) and, unless the user set one, a fresh cookie secret. The
    client secret is checked here, so a missing one stops `trajudge label` before it
    serves."""
    check_sso_support()
    client_secret(sso, environ)
    env = to_env(sso)
    if not environ.get(ENV_COOKIE_SECRET):
        env[ENV_COOKIE_SECRET] = new_cookie_secret()
    return env


def serve(
    config: AppConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8501,
    sso: SsoOptions | None = None,
) -> int:
    """Check the configuration, then run the app until it stops; return its exit code.
    With ``sso``, people may sign in through that OpenID Connect provider."""
    check_config(config)
    env = {**os.environ, **config.to_env()}
    if sso is not None:
        env.update(sso_env(sso.for_server(host, port), env))
        check_provider(sso)
    env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] = "false"
    env["STREAMLIT_SERVER_HEADLESS"] = "true"
    proc = subprocess.Popen(streamlit_command(host=host, port=port), env=env)

    def forward(signum: int, _frame: object) -> None:
        proc.send_signal(signum)  # stopping `trajudge label` stops the server too

    forwarded = (signal.SIGTERM, signal.SIGHUP) if hasattr(signal, "SIGHUP") else (signal.SIGTERM,)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {s: signal.signal(s, forward) for s in forwarded}
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            return proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
