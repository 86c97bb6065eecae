"""Single sign-on end to end: the real `trajudge label` command with an ``sso:`` block, a real
OpenID Connect provider on loopback (the npm package oidc-provider, tests/_oidc.py), and Debian
chromium driven by Playwright through the provider's own sign-in and consent pages.

Alice (verified e-mail, the e-mail of the store's account ``alice``, made with `trajudge
annotators add alice --email alice@example.test`) signs in and labels: the label is stored
under ``alice`` and the sign-in is in the sign-in log. Bob's e-mail is an account's too but his
provider has not verified it, Carol's verified e-mail has no account, and Dave's account is
disabled: all three are refused, with the app's message (logged), and none can reach the label
page.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from labeling_helpers import DATASET, add_accounts, browser_sign_in, make_trajectories

from _oidc import OidcProvider, OidcUser, provider_script, run_provider
from trajudge.labeling_app.auth import NO_ACCOUNT, UNVERIFIED
from trajudge.store import Store

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CHROMIUM = Path("/usr/bin/chromium")
TIMEOUT_MS = 180_000  # a rerun of the page can take tens of seconds on a loaded 2-core machine
CLIENT_ID = "trajudge-labels"
# made up for this test run; it must never appear in the server's output
CLIENT_SECRET = "test-client-secret-7f3a9c1e5b2d4a6f8e0c"
USERS = [
    OidcUser("alice", "alice-pw-1", "Alice@Example.test", True, "Alice A."),
    OidcUser("bob", "bob-pw-2", "bob@example.test", False, "Bob B."),
    OidcUser("carol", "carol-pw-3", "carol@example.test", True, "Carol C."),
    OidcUser("dave", "dave-pw-4", "dave@example.test", True, "Dave D."),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(cond: Callable[[], object], timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


OTHER = "other-runs"  # a second dataset, so that choosing one after sign-in is a choice


@pytest.fixture
def only() -> bool:
    """``sso.only``: the provider's button alone (a test may parametrize it to False)."""
    return True


@pytest.fixture
def sso_server(
    tmp_path: Path, db_url: str, given: bool, only: bool
) -> Iterator[tuple[str, str, OidcProvider, Path]]:
    """The provider and `trajudge label --config` with single sign-on on the store; with
    ``given``, the server is started for the dataset (--dataset), else people choose it after
    signing in; with ``only``, the sign-in page has no password form."""
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium (/usr/bin/chromium) is not installed")
    script = provider_script()
    Store(db_url).import_dataset(DATASET, make_trajectories(6))
    Store(db_url).import_dataset(OTHER, make_trajectories(2))
    exe = shutil.which("trajudge", path=str(Path(sys.executable).parent)) or "trajudge"
    for name, email in (("alice", "alice@example.test"), ("bob", "bob@example.test")):
        _cli(exe, "annotators", "add", name, "--email", email, "--db", db_url)
    _cli(exe, "annotators", "add", "dave", "--email", "dave@example.test", "--db", db_url)
    _cli(exe, "annotators", "disable", "dave", "--db", db_url)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with run_provider(
        script,
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        redirect_uri=f"{base}/oauth2callback",
        users=USERS,
        log=tmp_path / "provider.log",
    ) as provider:
        config = tmp_path / "trajudge.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "sso": {
                        "server_metadata_url": provider.metadata_url,
                        "client_id": CLIENT_ID,
                        # the provider's sign-in page every time (it has no account chooser)
                        "prompt": "login",
                        # the provider's button alone, or above the password form
                        "only": only,
                    }
                }
            )
        )
        cmd = [exe, "label", "--db", db_url, "--port", str(port)]
        cmd += ["--dataset", DATASET] if given else []
        env = {**os.environ, "TRAJUDGE_OIDC_CLIENT_SECRET": CLIENT_SECRET}
        log_path = tmp_path / "server.log"
        with log_path.open("w") as log:
            proc = subprocess.Popen(
                [*cmd, "--overlap", "1.0", "--config", str(config)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )

            def healthy() -> bool:
                try:
                    with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                        return r.status == 200
                except OSError:
                    return proc.poll() is not None  # stop waiting if it died

            try:
                _wait(healthy, 180, "the streamlit server")
                assert proc.poll() is None, log_path.read_text()
                yield base, db_url, provider, log_path
            finally:
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def _cli(*args: str) -> None:
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def _launch(p: Any) -> Any:
    return p.chromium.launch(
        executable_path=str(CHROMIUM),
        headless=True,
        args=["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"],
    )


def _sign_in(page: Any, base: str, issuer: str, user: OidcUser) -> None:
    """From the app's sign-in page through the provider's sign-in and consent pages, back to
    the app."""
    page.goto(base, wait_until="domcontentloaded")
    page.get_by_role("button", name="Sign in with SSO").click()
    page.wait_for_url(f"{issuer}/interaction/**")
    page.get_by_placeholder("Enter any login").fill(user.login)
    page.get_by_placeholder("and password").fill(user.password)
    page.get_by_role("button", name="Sign-in").click()
    page.get_by_role("button", name="Continue").click()  # consent: the app may read the e-mail
    page.wait_for_url(f"{base}/**")


@pytest.mark.parametrize("given", [True, False], ids=["dataset-given", "dataset-chosen"])
def test_sso_sign_in_labels_under_the_mapped_account(
    sso_server: tuple[str, str, OidcProvider, Path], tmp_path: Path, given: bool
) -> None:
    from playwright.sync_api import sync_playwright

    base, url, provider, log_path = sso_server
    store = Store(url)
    alice, bob, carol, dave = USERS
    with sync_playwright() as p:
        browser = _launch(p)
        try:
            page = browser.new_context().new_page()
            page.set_default_timeout(TIMEOUT_MS)
            try:
                # a wrong password stops at the provider: the app never hears of it
                # unsigned, the label page does not exist (Streamlit says so and runs the
                # sign-in page), and the sign-in page offers the provider only: no name to
                # type, no list of names
                page.goto(f"{base}/label", wait_until="domcontentloaded")
                page.get_by_text("Page not found").wait_for()
                page.get_by_role("button", name="Sign in with SSO").wait_for()
                assert page.get_by_role("button", name="4 · reasonable").count() == 0
                page.goto(base, wait_until="domcontentloaded")
                page.get_by_role("button", name="Sign in with SSO").wait_for()
                assert page.get_by_role("textbox").count() == 0
                assert page.get_by_role("combobox").count() == 0
                page.screenshot(path=str(tmp_path / "signin.png"))
                page.get_by_role("button", name="Sign in with SSO").click()
                page.wait_for_url(f"{provider.issuer}/interaction/**")
                page.get_by_placeholder("Enter any login").fill(alice.login)
                page.get_by_placeholder("and password").fill("not-her-password")
                page.get_by_role("button", name="Sign-in").click()
                page.get_by_text("wrong login or password").wait_for()

                _sign_in(page, base, provider.issuer, alice)
                if not given:  # signed in; the dataset is chosen next
                    page.get_by_role("combobox").click()
                    page.get_by_role("option", name=DATASET).click()
                    page.get_by_role("button", name="Start labeling").click()
                sidebar = page.get_by_test_id("stSidebar")
                sidebar.get_by_text("Annotator: alice", exact=False).wait_for()
                page.get_by_role("button", name="4 · reasonable").click()
                page.get_by_text("Saved: 4 · reasonable", exact=True).wait_for()
                labels = store.labels_frame(DATASET)
                assert list(labels["annotator"]) == ["alice"]
                assert list(labels["value"]) == [4.0]
                page.screenshot(path=str(tmp_path / "alice.png"))

                # signing out of the app ends the sign-in there and at the provider (its
                # end-session page asks first), and the browser keeps no sign-in cookie:
                # opening the app again shows the provider's button
                sidebar.get_by_role("button", name="Sign out").click()
                page.wait_for_url(f"{provider.issuer}/session/end**")
                page.get_by_role("button", name="Yes, sign me out").click()
                page.wait_for_url(f"{base}/**")
                page.get_by_role("button", name="Sign in with SSO").wait_for()
                cookies = {c["name"] for c in page.context.cookies(base)}
                assert not any(n.startswith("_streamlit_user") for n in cookies), cookies
                page.goto(base, wait_until="domcontentloaded")
                page.get_by_role("button", name="Sign in with SSO").wait_for()
                assert page.get_by_text("Annotator: alice").count() == 0
            except Exception:
                page.screenshot(path=str(tmp_path / "stuck.png"), full_page=True)
                raise

            for user, message in ((bob, UNVERIFIED), (carol, NO_ACCOUNT), (dave, NO_ACCOUNT)):
                page = browser.new_context().new_page()  # a browser of their own
                page.set_default_timeout(TIMEOUT_MS)
                try:
                    _sign_in(page, base, provider.issuer, user)
                    page.get_by_text(message, exact=True).wait_for()
                    page.get_by_role("button", name="Sign out").wait_for()
                    page.screenshot(path=str(tmp_path / f"refused-{user.login}.png"))
                    assert page.get_by_role("button", name="4 · reasonable").count() == 0
                    assert page.get_by_test_id("stSidebar").count() == 0
                    # a refused person signs out too, at the provider as well
                    page.get_by_role("button", name="Sign out").click()
                    page.wait_for_url(f"{provider.issuer}/session/end**")
                    page.get_by_role("button", name="Yes, sign me out").click()
                    page.get_by_role("button", name="Sign in with SSO").wait_for()
                except Exception:
                    page.screenshot(path=str(tmp_path / f"stuck-{user.login}.png"))
                    raise
        finally:
            browser.close()
    # nothing was saved under anyone else, and the secret is in no output of the server
    assert set(store.labels_frame(DATASET)["annotator"]) == {"alice"}
    assert store.labels_frame(OTHER).empty
    assert CLIENT_SECRET not in log_path.read_text()
    # the sign-in log: alice's sign-in through the provider, and the three refusals
    log = store.sign_in_log()
    assert any(e["name"] == "alice" and e["detail"] == "oidc" for e in log), log
    refused = {e["name"] for e in log if e["event"] == "refused"}
    assert refused == {"bob@example.test", "carol@example.test", "dave@example.test"}, log
    assert CLIENT_SECRET not in repr(log)


@pytest.mark.parametrize(("given", "only"), [(True, False)], ids=["beside-passwords"])
def test_sso_beside_the_password_form_each_label_under_its_account(
    sso_server: tuple[str, str, OidcProvider, Path], tmp_path: Path
) -> None:
    """Without ``only`` the sign-in page offers both: pat signs in with a password, alice
    through the provider, each in a browser of their own, and each label is stored under the
    account that gave it."""
    from playwright.sync_api import sync_playwright

    base, url, provider, log_path = sso_server
    add_accounts(url, "pat")  # a password account beside the single sign-on ones
    store = Store(url)
    alice = USERS[0]
    with sync_playwright() as p:
        browser = _launch(p)
        try:
            pat = browser.new_context().new_page()
            pat.set_default_timeout(TIMEOUT_MS)
            pat.goto(base, wait_until="domcontentloaded")
            pat.get_by_role("button", name="Sign in with SSO").wait_for()
            browser_sign_in(pat, "pat")
            pat.get_by_test_id("stSidebar").get_by_text("Annotator: pat").wait_for()
            pat.get_by_role("button", name="2 · mostly wrong").click()
            pat.get_by_text("Saved: 2 · mostly wrong", exact=True).wait_for()

            page = browser.new_context().new_page()
            page.set_default_timeout(TIMEOUT_MS)
            _sign_in(page, base, provider.issuer, alice)
            page.get_by_test_id("stSidebar").get_by_text("Annotator: alice").wait_for()
            page.get_by_role("button", name="5 · ideal").click()
            page.get_by_text("Saved: 5 · ideal", exact=True).wait_for()
        except Exception:
            pat.screenshot(path=str(tmp_path / "stuck-pat.png"), full_page=True)
            raise
        finally:
            browser.close()
    labels = store.labels_frame(DATASET)
    assert sorted(zip(labels["annotator"], labels["value"], strict=True)) == [
        ("alice", 5.0),
        ("pat", 2.0),
    ]
    methods = {(e["name"], e["detail"]) for e in store.sign_in_log() if e["event"] == "signed in"}
    assert methods == {("pat", "password"), ("alice", "oidc")}, store.sign_in_log()
    assert CLIENT_SECRET not in log_path.read_text()
