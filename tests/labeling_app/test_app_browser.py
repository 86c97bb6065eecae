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

import pytest
from labeling_helpers import DATASET, IMG, LINK, SCRIPT, make_trajectories

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
    env = {**os.environ, "TRAJUDGE_LABEL_PASSWORD": ""}
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
        _wait(healthy, 90, "the streamlit server")
        assert proc.poll() is None, (tmp_path / "server.log").read_text()
        yield base, url
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


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
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(base, wait_until="domcontentloaded")
            page.get_by_role("textbox", name="New name").fill(name)
            page.get_by_role("button", name="Start labeling").click()
            page.get_by_role("button", name="Next").wait_for(timeout=60_000)

            def current_id() -> str:
                loc = page.get_by_test_id("stText").filter(has_text=" · task ")
                text = loc.first.inner_text(timeout=30_000)
                return text.split(" · ")[0].removeprefix("id ")

            def focus_page() -> None:
                page.get_by_role("heading", name="Final answer").click()

            seen: list[str] = []
            actions = ["keyboard-digit-n", "mouse", "keyboard-digit-enter"]
            values = [4.0, 2.0, 5.0]
            for action, value in zip(actions, values, strict=True):
                tid = current_id()
                seen.append(tid)
                if tid == "xss":
                    _check_inert(page, tmp_path)
                if action == "mouse":
                    page.get_by_role("button", name="2 · mostly wrong").click()
                else:
                    focus_page()
                    page.keyboard.press(str(int(value)))
                _wait(lambda t=tid, v=value: my_labels().get(t) == v, what=f"label on {tid}")
                if action == "mouse":
                    page.get_by_role("button", name="Next").click()
                else:
                    focus_page()
                    page.keyboard.press("n" if action.endswith("-n") else "Enter")
                try:
                    _wait(lambda t=tid: current_id() != t, what="the next item")
                except AssertionError:
                    page.screenshot(path=str(tmp_path / "stuck.png"), full_page=True)
                    raise
            assert "xss" in seen, seen
            assert my_labels() == dict(zip(seen, values, strict=True))
            assert len(set(seen)) == 3
            # the fourth item is on screen, with no label of this annotator yet
            page.wait_for_timeout(1500)
            fourth = current_id()
            assert fourth not in seen
            assert page.get_by_text("Saved:").count() == 0
            page.screenshot(path=str(tmp_path / "after.png"), full_page=False)
        finally:
            browser.close()
    assert dialogs == []  # no alert() ever ran
    rows = store.labels_frame(DATASET)
    assert len(rows) == 3 and not rows.duplicated(["trajectory_id", "annotator"]).any()


def _check_inert(page: object, tmp_path: Path) -> None:
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    # the payloads are on the page as text ...
    # code blocks render asynchronously: wait for the input, two steps' args and the answer
    _wait(lambda: page.get_by_test_id("stCode").count() >= 5, what="the code blocks")
    page.wait_for_timeout(500)
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
