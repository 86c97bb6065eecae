"""The whole app in a real browser: the real `trajudge label` command, Debian chromium driven
by Playwright, labels given with the keyboard and the mouse, and the XSS sample kept inert."""

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
from labeling_helpers import (
    DATASET,
    IMG,
    LINK,
    SCRIPT,
    add_accounts,
    browser_sign_in,
    make_trajectories,
)

from trajudge.labeling_app import build_queue
from trajudge.store import Store

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CHROMIUM = Path("/usr/bin/chromium")
RUBRIC = "trajectory_reasonableness"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(cond: Callable[[], object], timeout: float = 30.0, what: str = "condition") -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _annotator_with_xss_early(store: Store) -> str:
    """A name whose queue (the app's own queue function) shows the XSS sample among the first
    three items, so labeling three items passes through it."""
    items = store.trajectory_keys(DATASET)
    for k in range(500):
        name = f"ann{k}"
        if "xss" in build_queue(items, name, overlap=1.0, pool=[name]).ids[:3]:
            return name
    raise AssertionError("no such name")


@pytest.fixture
def server(tmp_path: Path, db_url: str) -> Iterator[tuple[str, str]]:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium (/usr/bin/chromium) is not installed")
    url = db_url
    Store(url).import_dataset(DATASET, make_trajectories(6))
    port = _free_port()
    exe = shutil.which("trajudge", path=str(Path(sys.executable).parent)) or "trajudge"
    cmd = [exe, "label", "--db", url, "--dataset", DATASET, "--port", str(port)]
    env = dict(os.environ)
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(
        [*cmd, "--overlap", "1.0"], stdout=log, stderr=subprocess.STDOUT, env=env
    )
    base = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                return r.status == 200
        except OSError:
            return proc.poll() is not None  # stop waiting if it died

    try:
        _wait(healthy, 180, "the streamlit server")
        assert proc.poll() is None, (tmp_path / "server.log").read_text()
        # the address it prints is the one it listens on (as the README shows it)
        first = (tmp_path / "server.log").read_text().splitlines()[0]
        assert first == f"trajudge labels: {base}  (Ctrl-C stops it)"
        yield base, url
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


# Every wait is on the app's state, with room for a loaded 2-core machine, where one rerun
# of the page can take tens of seconds.
TIMEOUT_MS = 180_000
# the page is done: connected, no script running, and an item's id line drawn
_SHOWN_ID = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.dataset.testConnectionState !== "CONNECTED"
      || app.dataset.testScriptState !== "notRunning") return null;
  const line = [...document.querySelectorAll("[data-testid='stText']")]
    .map((e) => e.innerText).find((t) => t.startsWith("id ") && t.includes(" · task "));
  return line === undefined ? null : line.split(" · ")[0].slice(3);
}"""
# the Enter listener is installed by a frame that is still on the page
_ENTER_READY = """() => typeof document.__trajudgeEnter === "function"
  && !!document.__trajudgeEnterFrame && document.__trajudgeEnterFrame.isConnected"""


def _shown_id(page: Any, *, not_: str | None = None) -> str:
    """Wait until the page is idle and shows an item (other than ``not_``); its id."""
    handle = page.wait_for_function(
        f"(old) => {{ const id = ({_SHOWN_ID})(); return id !== null && id !== old ? id : null; }}",
        arg=not_,
        timeout=TIMEOUT_MS,
        polling=100,
    )
    return str(handle.json_value())


def _wait_idle_with(page: Any, text: str) -> None:
    """Wait until the page is idle and shows ``text`` (a message of the app)."""
    page.get_by_text(text, exact=True).wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(f"() => ({_SHOWN_ID})() !== null", timeout=TIMEOUT_MS, polling=100)


def test_label_three_items_keyboard_and_mouse(server: tuple[str, str], tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    base, url = server
    store = Store(url)
    name = _annotator_with_xss_early(store)
    dialogs: list[str] = []

    def my_labels() -> dict[str, float | None]:
        frame = store.labels_frame(DATASET)
        mine = frame[frame["annotator"] == name]
        return dict(zip(mine["trajectory_id"], mine["value"], strict=True))

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(TIMEOUT_MS)
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(base, wait_until="domcontentloaded")
            add_accounts(url, name)
            browser_sign_in(page, name)
            tid = _shown_id(page)
            # open "Your recent labels" first: the list then follows the saves made by the
            # item's own reruns (the fragment), not by counting again
            page.get_by_text("Your recent labels").click()
            _wait_idle_with(page, "None yet.")

            def focus_page() -> None:
                page.get_by_role("heading", name="Final answer").click()

            seen: list[str] = []
            actions = ["keyboard-digit-n", "mouse", "keyboard-digit-enter"]
            values = {"keyboard-digit-n": 4, "mouse": 2, "keyboard-digit-enter": 5}
            names = {4: "reasonable", 2: "mostly wrong", 5: "ideal"}
            try:
                for action in actions:
                    value = values[action]
                    seen.append(tid)
                    if tid == "xss":
                        _check_inert(page, tmp_path)
                    page.wait_for_function(_ENTER_READY, timeout=TIMEOUT_MS, polling=100)
                    enter_frame = page.evaluate_handle("() => document.__trajudgeEnterFrame")
                    if action == "mouse":
                        page.get_by_role("button", name=f"{value} · {names[value]}").click()
                    else:
                        focus_page()
                        page.keyboard.press(str(value))
                    # the app confirms the save on this item; the store holds it
                    _wait_idle_with(page, f"Saved: {value} · {names[value]}")
                    # the progress kept by the page moved on with the save
                    n = len(seen)
                    for text in (f"You: {n} / 6 labeled", f"Everyone: {n} / 6 items have a label"):
                        _wait_idle_with(page, text)
                    assert my_labels().get(tid) == value
                    assert _shown_id(page) == tid
                    # the message did not move the Enter frame (a moved frame is reloaded,
                    # and Enter is lost until its script runs again)
                    assert page.evaluate(
                        "(f) => f === document.__trajudgeEnterFrame && f.isConnected",
                        enter_frame,
                    )
                    if action == "mouse":
                        page.get_by_role("button", name="Next").click()
                    else:
                        focus_page()
                        page.keyboard.press("n" if action.endswith("-n") else "Enter")
                    tid = _shown_id(page, not_=tid)
            except Exception:
                page.screenshot(path=str(tmp_path / "stuck.png"), full_page=True)
                raise
            assert "xss" in seen, seen
            assert my_labels() == dict(zip(seen, values.values(), strict=True))
            assert len(set(seen)) == 3
            # the fourth item is on screen, idle, with no label and no message of another item
            assert tid not in seen and tid not in my_labels()
            assert page.get_by_text("Saved:").count() == 0
            assert page.get_by_text("Your label:").count() == 0
            page.screenshot(path=str(tmp_path / "after.png"), full_page=False)
            # the recent labels, the latest first; opening the first one shows its label
            sidebar = page.get_by_test_id("stSidebar")
            sidebar.get_by_role("combobox").click()
            assert page.get_by_role("option").all_inner_texts() == seen[::-1]
            page.get_by_role("option", name=seen[0], exact=True).click()
            sidebar.get_by_test_id("stButton").get_by_role("button", name="Open").click()
            assert _shown_id(page, not_=tid) == seen[0]
            _wait_idle_with(page, "Your label: 4 · reasonable")
        finally:
            browser.close()
    assert dialogs == []  # no alert() ever ran
    rows = store.labels_frame(DATASET)
    assert len(rows) == 3 and not rows.duplicated(["trajectory_id", "annotator"]).any()


def _check_inert(page: object, tmp_path: Path) -> None:
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    # the payloads are on the page as text ...
    # code blocks render asynchronously: wait for the input, the two steps' arguments, the
    # error, the output and the answer, each holding its text
    page.wait_for_function(
        """(payloads) => {
          const text = document.body.innerText;
          return payloads.every((p) => text.includes(p));
        }""",
        arg=[SCRIPT, IMG, LINK, "Done "],
        timeout=TIMEOUT_MS,
        polling=100,
    )
    text = page.evaluate("() => document.body.innerText")
    for payload in (SCRIPT, IMG, LINK):
        assert payload in text, text
    # ... and nothing from them became markup in the page or its frames
    for frame in page.frames:
        injected = frame.evaluate(
            """() => ({
                scripts: [...document.scripts].filter(s => s.textContent.includes('alert(1)'))
                    .length,
                imgs: document.querySelectorAll('img[onerror], img[src="x"]').length,
                links: [...document.querySelectorAll('a[href]')]
                    .filter(a => a.getAttribute('href').toLowerCase().includes('javascript'))
                    .length,
            })"""
        )
        assert injected == {"scripts": 0, "imgs": 0, "links": 0}, injected
    page.screenshot(path=str(tmp_path / "xss.png"), full_page=True)
