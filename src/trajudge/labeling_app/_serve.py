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
from trajudge.labeling_app._config import (
    ENV_ADJUDICATOR_PASSWORD,
    AppConfig,
    adjudicator_password_set,
)
from trajudge.labeling_app.sso._options import (
    ENV_COOKIE_SECRET,
    SsoOptions,
    check_provider,
    client_secret,
    new_cookie_secret,
    to_env,
)


def app_script(*, sso: bool = False) -> Path:
    """The entry file of the app; with single sign-on, the one that serves it as an
    ``st.App`` holding the ``[auth]`` secrets in memory."""
    if sso:
        return Path(__file__).parent / "sso" / "sso_app.py"
    return Path(__file__).with_name("app.py")


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine (127.0.0.0/8, ::1 or localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def streamlit_command(*, host: str = "127.0.0.1", port: int = 8501, sso: bool = False) -> list[str]:
    """The ``streamlit run`` command line: headless, no usage statistics, no browser.

    Streamlit's full garbage collection after every script run is off: with the library
    loaded it walks a few hundred thousand objects, which took most of the server's time per
    click on the label page (Python's own generational collector still runs).
    """
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app_script(sso=sso)),
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
    ]


def check_config(config: AppConfig) -> None:
    """Fail early (InputError) on a missing dataset, an unknown rubric, or adjudicators
    without the adjudicator password (anyone could sign in under their names)."""
    # imported on use: the store (SQLAlchemy) loads when the app starts, not for --help
    from trajudge.judges import load_rubric
    from trajudge.store import Store

    if config.adjudicators and not adjudicator_password_set():
        raise InputError(
            "--adjudicator",
            reason=f"set {ENV_ADJUDICATOR_PASSWORD}: adjudicators sign in with it, "
            "so nobody else can take their role by typing their name",
        )
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
    With ``sso``, people sign in through that OpenID Connect provider."""
    check_config(config)
    env = {**os.environ, **config.to_env()}
    if sso is not None:
        env.update(sso_env(sso.for_server(host, port), env))
        check_provider(sso)
    env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] = "false"
    env["STREAMLIT_SERVER_HEADLESS"] = "true"
    command = streamlit_command(host=host, port=port, sso=sso is not None)
    proc = subprocess.Popen(command, env=env)

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
