"""Behind a reverse proxy with TLS, as the README says (its section "Running a labeling
session for a team"): a real nginx (tests/_nginx.py) with the README's ``server`` block and a
self-signed certificate for labels.example.org, in front of the real `trajudge label` started
with the README's flags; Debian chromium signs in and labels through https, the WebSocket
included.

The client address in the sign-in log (and in the per-client throttle) is the one the proxy
forwards only when the app was told to trust that proxy (--trusted-proxy): the browser
reaches nginx from 127.0.0.5 (a relay) and is logged as 127.0.0.5, while the X-Forwarded-For
it sends itself is dropped by nginx. Without the option a X-Forwarded-For sent straight to
the app is ignored (from loopback too, whatever FORWARDED_ALLOW_IPS says), and with it the
same header is taken: the header does reach the app, and the option is what decides.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import httpx
import pytest
from labeling_helpers import browser_sign_in
from test_app_browser import CHROMIUM, TIMEOUT_MS, _shown_id, _wait
from test_app_browser_accounts import ARGS, _labels, _store_with_accounts, running_app

from _nginx import Relay, run_nginx, server_block
from trajudge.labeling_app.auth._signin import FAILED
from trajudge.store import Store

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
PUBLIC = "labels.example.org"  # the README's public name
SOURCE = "127.0.0.5"  # where the browser's connections to the proxy come from
SPOOFED = "203.0.113.9"  # a documentation address (RFC 5737) a client claims to be


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def _readme_flags(readme: str) -> tuple[str, ...]:
    """The flags of the README's `trajudge label` line for the proxy (its --dataset aside,
    which is the test's)."""
    lines = [ln for ln in readme.split("\n") if ln.startswith("trajudge label ")]
    (line,) = [ln for ln in lines if "--trusted-proxy" in ln]
    words = shlex.split(line.split("#")[0])[2:]
    if "--dataset" in words:
        i = words.index("--dataset")
        del words[i : i + 2]
    return tuple(words)


def _clients(store: Store, name: str) -> list[tuple[str, str]]:
    return [(e["event"], e["client"]) for e in store.sign_in_log() if e["name"] == name]


def _launch(p: Any, *extra: str) -> Any:
    return p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=[*ARGS, *extra])


def test_behind_nginx_with_tls_the_client_is_the_forwarded_address(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    readme = _readme()
    flags = _readme_flags(readme)
    # what the README tells a team to run: their public name let in, the proxy trusted
    assert flags == ("--allowed-host", PUBLIC, "--trusted-proxy", "127.0.0.1"), flags
    url = f"sqlite:///{tmp_path / 'trajudge.db'}"
    store = _store_with_accounts(url, "alice")
    folder = tmp_path / "nginx"
    folder.mkdir()
    with (
        running_app(tmp_path, url, args=flags) as base,
        run_nginx(
            folder, server_block(readme), name=PUBLIC, app_port=int(base.rsplit(":", 1)[1])
        ) as port,
        Relay(port, SOURCE) as relay,
        sync_playwright() as p,
    ):
        # a foreign name sent to the proxy is forwarded as it came, and the app refuses it
        with httpx.Client(verify=False, timeout=60) as http:
            ours = http.get(f"https://127.0.0.1:{port}/", headers={"Host": PUBLIC})
            foreign = http.get(f"https://127.0.0.1:{port}/", headers={"Host": "rebind.example"})
            assert (ours.status_code, foreign.status_code) == (200, 403)
        browser = _launch(
            p, f"--host-resolver-rules=MAP {PUBLIC} 127.0.0.1", "--ignore-certificate-errors"
        )
        try:
            # the client's own X-Forwarded-For: nginx replaces it with the address it saw
            context = browser.new_context(extra_http_headers={"X-Forwarded-For": SPOOFED})
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(f"https://{PUBLIC}:{relay.port}/", wait_until="domcontentloaded")
            browser_sign_in(page, "alice", "not her password")
            page.get_by_text(FAILED).wait_for()
            browser_sign_in(page, "alice")
            item = _shown_id(page)
            page.get_by_role("heading", name="Final answer").click()
            page.keyboard.press("4")
            _wait(lambda: _labels(store, "alice").get(item) == 4.0, 120, "alice's label")
            assert page.url.startswith(f"https://{PUBLIC}:{relay.port}/")
        finally:
            browser.close()
    # the failure and the sign-in were counted and logged for the address nginx saw
    assert _clients(store, "alice") == [("signed in", SOURCE), ("failed", SOURCE)]
    assert SPOOFED not in repr(store.sign_in_log())
    # the page and its WebSocket went through nginx, from the relay's address
    access = (folder / "access.log").read_text()
    assert re.search(rf'^{re.escape(SOURCE)} .*"GET /_stcore/stream HTTP/1\.1" 101 ', access, re.M)


@pytest.mark.parametrize("trusted", [False, True], ids=["default", "trusted-proxy"])
def test_a_forwarded_for_sent_to_the_app_counts_only_from_a_trusted_proxy(
    tmp_path: Path, trusted: bool
) -> None:
    from playwright.sync_api import sync_playwright

    url = f"sqlite:///{tmp_path / 'trajudge.db'}"
    store = _store_with_accounts(url, "alice")
    args = ("--trusted-proxy", "127.0.0.1") if trusted else ()
    # uvicorn trusts loopback by default, and this variable would widen it to anyone:
    # `trajudge label` sets it itself
    env = {"FORWARDED_ALLOW_IPS": "*"}
    with running_app(tmp_path, url, args=args, env=env) as base, sync_playwright() as p:
        browser = _launch(p)
        try:
            context = browser.new_context(extra_http_headers={"X-Forwarded-For": SPOOFED})
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(base, wait_until="domcontentloaded")
            browser_sign_in(page, "alice", "not her password")
            page.get_by_text(FAILED).wait_for()
            browser_sign_in(page, "alice")
            _shown_id(page)
        finally:
            browser.close()
    # a loopback peer is "loopback" in the log (auth/_session.py: client_address)
    client = SPOOFED if trusted else "loopback"
    assert _clients(store, "alice") == [("signed in", client), ("failed", client)]
