"""Accounts in a real browser against the real `trajudge label` server (SQLite and
PostgreSQL): a second browser without alice's password is not alice, with it it is; 50 wrong
passwords are throttled and logged; a disabled account's next click saves nothing; a foreign
Host (a DNS-rebinding page, and a WebSocket upgrade with a foreign Host and Origin) is
refused, whatever .streamlit/config.toml or the environment say about CORS and XSRF."""

from __future__ import annotations

import base64
import http.client
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from labeling_helpers import DATASET, PASSWORD, add_accounts, browser_sign_in, make_trajectories
from test_app_browser import CHROMIUM, TIMEOUT_MS, _free_port, _shown_id, _wait

from trajudge.labeling_app.auth._signin import FAILED
from trajudge.store import Store

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
FOREIGN = "rebind.example"


@contextmanager
def running_app(
    tmp_path: Path,
    url: str,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
) -> Iterator[str]:
    """`trajudge label` on ``url`` (with more ``args``) until the block ends; yields its base
    URL."""
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium (/usr/bin/chromium) is not installed")
    port = _free_port()
    exe = shutil.which("trajudge", path=str(Path(sys.executable).parent)) or "trajudge"
    cmd = [exe, "label", "--db", url, "--dataset", DATASET, "--port", str(port), "--overlap", "1"]
    cmd += args
    log_path = tmp_path / f"server-{port}.log"
    # started in another folder: a relative PYTHONPATH (a checkout's src) must still name it
    paths = [
        str(Path(x).resolve()) for x in os.environ.get("PYTHONPATH", "").split(os.pathsep) if x
    ]
    env = {**({"PYTHONPATH": os.pathsep.join(paths)} if paths else {}), **(env or {})}
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env}, cwd=cwd
        )
        base = f"http://127.0.0.1:{port}"

        def healthy() -> bool:
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                    return r.status == 200
            except OSError:
                return proc.poll() is not None

        try:
            _wait(healthy, 180, "the streamlit server")
            assert proc.poll() is None, log_path.read_text()
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _store_with_accounts(url: str, *names: str) -> Store:
    store = Store(url)
    store.import_dataset(DATASET, make_trajectories(6))
    add_accounts(url, *names)
    return store


def _labels(store: Store, name: str) -> dict[str, float]:
    frame = store.labels_frame(DATASET)
    mine = frame[frame["annotator"] == name]
    return dict(zip(mine["trajectory_id"], mine["value"], strict=True))


def _idle(page: Any) -> None:
    page.wait_for_function(
        """() => { const a = document.querySelector("[data-testid='stApp']");
          return a && a.dataset.testConnectionState === "CONNECTED"
            && a.dataset.testScriptState === "notRunning"; }""",
        timeout=TIMEOUT_MS,
        polling=100,
    )


def test_without_alices_password_a_second_browser_is_not_alice(tmp_path: Path, db_url: str) -> None:
    from playwright.sync_api import sync_playwright

    store = _store_with_accounts(db_url, "alice", "mallory")
    store.save_label(DATASET, "t005", "trajectory_reasonableness", "alice", 2.0, note="ALICE-NOTE")
    with running_app(tmp_path, db_url) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            first = browser.new_context().new_page()
            second = browser.new_context().new_page()  # another browser: no shared cookies
            for page in (first, second):
                page.set_default_timeout(TIMEOUT_MS)
                page.goto(base, wait_until="domcontentloaded")
            # the sign-in page names nobody
            _idle(second)
            body = second.inner_text("body")
            assert "alice" not in body and "mallory" not in body
            # alice signs in in the first browser and labels the item on screen
            browser_sign_in(first, "alice")
            a_item = _shown_id(first)
            first.get_by_role("heading", name="Final answer").click()
            first.keyboard.press("4")
            _wait(lambda: _labels(store, "alice").get(a_item) == 4.0, 120, "alice's label")
            # the second browser without her password: one message, nothing of hers
            for given in ("wrong password", "", PASSWORD.upper()):
                browser_sign_in(second, "alice", given)
                second.get_by_text(FAILED).wait_for()
                _idle(second)
                body = second.inner_text("body")
                assert "ALICE-NOTE" not in body and "Annotator: alice" not in body
                assert second.get_by_role("link", name="Export").count() == 0
            # mallory, signed in, sees and exports only her own labels
            browser_sign_in(second, "mallory")
            _shown_id(second)
            second.get_by_role("link", name="Review").click()
            second.get_by_text("Only items you have labeled are shown").wait_for()
            assert "ALICE-NOTE" not in second.content()
            second.get_by_role("button", name="Sign out").click()
            second.get_by_role("button", name="Sign in").wait_for()
            assert _labels(store, "alice") == {"t005": 2.0, a_item: 4.0}
            assert _labels(store, "mallory") == {}
            # with her password the second browser is alice: her label saved under her name
            browser_sign_in(second, "alice")
            b_item = _shown_id(second)
            second.get_by_text("Annotator: alice").wait_for()
            second.get_by_role("heading", name="Final answer").click()
            second.keyboard.press("5")
            _wait(lambda: _labels(store, "alice").get(b_item) == 5.0, 120, "the second session")
            # both sessions work, and one item labeled in both is one label (the last kept)
            first.get_by_role("heading", name="Final answer").click()
            first.keyboard.press("2")
            _wait(lambda: _labels(store, "alice").get(a_item) == 2.0, 120, "the first session")
            frame = store.labels_frame(DATASET)
            assert not frame.duplicated(["trajectory_id", "annotator"]).any()
            # disabled mid-session: the next click saves nothing and says why
            before = _labels(store, "alice")
            store.set_account_disabled("alice", True)
            second.get_by_role("heading", name="Final answer").click()
            second.keyboard.press("1")
            second.get_by_text("Your session ended (account disabled)", exact=False).wait_for()
            # Streamlit draws the message before the form below it: wait for the whole run
            second.get_by_role("button", name="Sign in").wait_for()
            _idle(second)
            assert second.get_by_role("button", name="Sign in").count() == 1
            assert _labels(store, "alice") == before
            events = [(e["name"], e["event"]) for e in store.sign_in_log()]
            assert ("alice", "session ended") in events
            assert sum(e == ("alice", "failed") for e in events) == 3
        finally:
            browser.close()


def test_fifty_wrong_passwords_are_throttled_and_logged(tmp_path: Path, db_url: str) -> None:
    from playwright.sync_api import sync_playwright

    store = _store_with_accounts(db_url, "alice")
    with running_app(tmp_path, db_url) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(base, wait_until="domcontentloaded")
            for i in range(50):
                browser_sign_in(page, "alice", f"guess number {i}")
                # each attempt is one line of the log: wait for it, then for the page
                _wait(lambda n=i: len(store.sign_in_log()) >= n + 1, 120, f"attempt {i + 1}")
                _idle(page)
            # on a loaded machine the 50 can end just as a wait runs out: guess on (after each
            # wait) until the name waits 30 s or more (each failure doubles it), so that the right
            # password below surely comes while it waits
            keys = ("account:alice", "client:loopback")
            tries = 50
            while store.throttle_until(keys) - time.time() < 30.0:
                assert tries < 70, "the wait never reached 30 s"
                # a guess while the name waits changes nothing: let the short wait lapse
                _wait(lambda: store.throttle_until(keys) <= time.time(), 120, "the wait")
                browser_sign_in(page, "alice", f"guess number {tries}")
                _wait(lambda n=tries: len(store.sign_in_log()) >= n + 1, 120, f"attempt {tries}")
                _idle(page)
                tries += 1
            # the right password now: refused unchecked while the name waits
            browser_sign_in(page, "alice")
            _wait(lambda: len(store.sign_in_log()) >= tries + 1, 120, "the right password")
            page.get_by_text("Too many failed sign-ins", exact=False).wait_for()
            _idle(page)
            assert page.get_by_text("Annotator: alice").count() == 0
        finally:
            browser.close()
    events = [e["event"] for e in store.sign_in_log()]
    # by hand (account_wait_s): three free failures, the fourth asks for 2 s, then 4, 8, ...;
    # the attempts, within far less than 2+4+8+16+32+64+... s, can fail at most 10 times
    assert len(events) == tries + 1 and set(events) == {"failed", "throttled"}
    assert 4 <= events.count("failed") <= 10 and events[0] == "throttled"
    assert all(e["name"] == "alice" and e["client"] == "loopback" for e in store.sign_in_log())


def _upgrade(port: int, host: str, origin: str) -> str:
    """A WebSocket upgrade of the app's stream by hand; the server's status line."""
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Protocol: streamlit\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(request.encode())
        return s.recv(4096).decode("latin-1").split("\r\n")[0]


def _get(port: int, host: str) -> tuple[int, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/_stcore/health", headers={"Host": host, "Origin": f"http://{host}"})
    r = conn.getresponse()
    headers = {k.lower(): v for k, v in r.getheaders()}
    r.read()
    conn.close()
    return r.status, headers


def test_a_foreign_host_is_refused_and_cors_xsrf_stay_on(tmp_path: Path, db_url: str) -> None:
    from playwright.sync_api import sync_playwright

    _store_with_accounts(db_url, "alice")
    # a project folder whose Streamlit config, and an environment, switch CORS and XSRF off
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "config.toml").write_text(
        "[server]\nenableCORS = false\nenableXsrfProtection = false\n"
    )
    env = {"STREAMLIT_SERVER_ENABLE_CORS": "false", "STREAMLIT_SERVER_ENABLE_XSRF_PROTECTION": "0"}
    with running_app(tmp_path, db_url, cwd=tmp_path, env=env) as base:
        port = int(base.rsplit(":", 1)[1])
        ok, headers = _get(port, f"127.0.0.1:{port}")
        assert ok == 200
        # XSRF on: the cookie is set; CORS on: no "any origin may read" header
        assert "_streamlit_xsrf=" in headers.get("set-cookie", "")
        assert headers.get("access-control-allow-origin") != "*"
        assert _get(port, f"{FOREIGN}:{port}")[0] == 403
        # the stream: refused with a foreign Host and Origin, or a foreign Origin alone
        assert _upgrade(port, f"{FOREIGN}:{port}", f"http://{FOREIGN}:{port}").split()[1] == "403"
        assert _upgrade(port, f"127.0.0.1:{port}", f"http://{FOREIGN}:{port}").split()[1] == "403"
        assert _upgrade(port, f"127.0.0.1:{port}", base).split()[1] == "101"
        # a page of a rebinding name, in Chromium: its name resolves to this machine, and the
        # server refuses it before any of the app is served
        with sync_playwright() as p:
            rules = f"--host-resolver-rules=MAP {FOREIGN} 127.0.0.1"
            browser = p.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=[*ARGS, rules]
            )
            try:
                page = browser.new_page()
                response = page.goto(f"http://{FOREIGN}:{port}/", wait_until="domcontentloaded")
                assert response is not None and response.status == 403
                assert "does not answer to that host name" in page.inner_text("body")
                page.goto(base, wait_until="domcontentloaded")
                page.get_by_role("button", name="Sign in").wait_for(timeout=TIMEOUT_MS)
            finally:
                browser.close()


def test_the_sign_in_page_and_the_leads_page(tmp_path: Path, db_url: str) -> None:
    """The sign-in page names nobody; a lead who signs in has the Lead page, with every
    account's progress, the agreement so far and the sign-in log (the README's screenshots
    are this test's signin.png and lead.png)."""
    from playwright.sync_api import sync_playwright

    store = _store_with_accounts(db_url, "ann", "bea", "cho")
    store.set_account_role("cho", "lead")
    rubric = "trajectory_reasonableness"
    ids = [f"t00{i}" for i in range(1, 6)]
    for tid, a, b in zip(ids, [1, 2, 3, 4, 5], [1, 2, 4, 4, 5], strict=True):
        store.save_label(DATASET, tid, rubric, "ann", float(a))
        store.save_label(DATASET, tid, rubric, "bea", float(b))
    with running_app(tmp_path, db_url) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 1500}).new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(base, wait_until="domcontentloaded")
            page.get_by_role("button", name="Sign in").wait_for()
            _idle(page)
            body = page.inner_text("body")
            assert not any(n in body for n in ("ann", "bea", "cho"))
            page.screenshot(path=str(tmp_path / "signin.png"))
            browser_sign_in(page, "cho")
            page.get_by_role("link", name="Lead").click()
            page.get_by_role("heading", name="Accounts and progress").wait_for()
            page.get_by_role("heading", name="Label queue").wait_for()
            page.get_by_role("heading", name="Agreement between annotators").wait_for()
            page.get_by_role("heading", name="Sign-in log").wait_for()
            _idle(page)
            # the tables drawn (their grids' accessible text), each account in the first
            page.wait_for_function(
                """() => { const d = [...document.querySelectorAll("[data-testid='stDataFrame']")];
                  return d.length >= 3 && d.every(x => x.querySelector("canvas"))
                    && ["ann", "bea", "cho"].every(n => d[0].textContent.includes(n)); }""",
                timeout=TIMEOUT_MS,
                polling=200,
            )
            body = page.inner_text("body")
            assert "Only a lead sees this page." not in body
            page.screenshot(path=str(tmp_path / "lead.png"), full_page=True)
        finally:
            browser.close()
    events = [(e["name"], e["event"]) for e in store.sign_in_log()]
    assert ("cho", "signed in") in events
