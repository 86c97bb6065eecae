"""``trajudge label --strategy active`` in a real browser (Debian chromium, Playwright): an
annotator labels every drawn item through the app, the page shows the stopping status, and
the report's weighted estimates equal a hand computation from the probabilities stored with
the design."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from labeling_helpers import DATASET, add_accounts, browser_sign_in, make_trajectories
from test_app_active import RUBRIC, _seed_judgments, hand_estimates, hand_pass_hat
from test_app_browser import CHROMIUM, TIMEOUT_MS, _free_port, _shown_id, _wait, _wait_idle_with

from trajudge.report import build_report
from trajudge.store import Store

pytestmark = [pytest.mark.browser, pytest.mark.slow]
NAMES = {5: "ideal", 2: "mostly wrong"}
STOP_WHEN = "tpr>=0.5@90%"  # not the default rule: the page must show the one configured


@pytest.fixture
def active_server(tmp_path: Path, db_url: str) -> Iterator[tuple[str, str, dict[str, float]]]:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium (/usr/bin/chromium) is not installed")
    store = Store(db_url)
    store.import_dataset(DATASET, make_trajectories(12))
    verdicts = _seed_judgments(store)
    store.close()
    add_accounts(db_url, "ann")
    port = _free_port()
    exe = shutil.which("trajudge", path=str(Path(sys.executable).parent)) or "trajudge"
    cmd = [exe, "label", "--db", db_url, "--dataset", DATASET, "--port", str(port),
           "--strategy", "active", "--budget", "6", "--overlap", "1.0",
           "--stop-when", STOP_WHEN]  # fmt: skip
    env = dict(os.environ)
    log_path = tmp_path / "server.log"
    log = log_path.open("w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
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
        first = log_path.read_text().splitlines()[0]
        assert first.startswith("active design: ") and " of 12 items drawn" in first
        yield base, db_url, verdicts
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_label_the_drawn_items_and_the_report_weights_them(
    active_server: tuple[str, str, dict[str, float]], tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    base, url, verdicts = active_server
    store = Store(url)
    design = store.label_draws(DATASET, RUBRIC)
    drawn = design.loc[design["drawn"].astype(bool), "trajectory_id"].tolist()
    assert 3 <= len(drawn) < 12
    seen: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run"],
        )  # fmt: skip
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(base, wait_until="domcontentloaded")
            browser_sign_in(page, "ann")
            tid = _shown_id(page)
            # before any label: the stopping rule says there is nothing to go on yet
            _wait_idle_with(page, "Stopping rule: j: no drawn item labelled yet")
            for k in range(len(drawn)):
                seen.append(tid)
                value = 5 if k % 3 else 2
                page.get_by_role("heading", name="Final answer").click()
                page.keyboard.press(str(value))
                _wait_idle_with(page, f"Saved: {value} · {NAMES[value]}")
                page.get_by_role("heading", name="Final answer").click()
                page.keyboard.press("n")
                if k + 1 < len(drawn):
                    tid = _shown_id(page, not_=tid)
            page.get_by_text("Your queue is done. Thank you!").wait_for(timeout=TIMEOUT_MS)
            status = page.get_by_text("Stopping rule: j: ", exact=False)
            status.first.wait_for(timeout=TIMEOUT_MS)
            shown_status = status.first.inner_text()
        except Exception:
            page.screenshot(path=str(tmp_path / "stuck.png"), full_page=True)
            raise
        finally:
            browser.close()
    # the queue was the design's draws, in its order
    assert seen == drawn
    labels = store.labels_frame(DATASET, rubric_id=RUBRIC)
    given = dict(zip(labels["trajectory_id"], labels["value"], strict=True))
    assert given == {t: (5.0 if k % 3 else 2.0) for k, t in enumerate(drawn)}
    hand = hand_estimates(design, {t: float(v >= 4) for t, v in given.items()}, verdicts)
    assert hand["n"] == 12 and hand["labels"] == len(drawn)  # every item considered
    report = build_report(store, DATASET, n_boot=50, stop_when=STOP_WHEN).to_dict()
    part = report["labels_drawn"][0]
    est = part["judges"]["j"]["estimates"]
    assert est["pass_rate"]["value"] == pytest.approx(hand["pass_rate"])
    assert est["tpr"]["value"] == pytest.approx(hand["tpr"], nan_ok=True)
    assert est["kappa"]["value"] == pytest.approx(hand["kappa"], nan_ok=True)
    tasks = {t.id: t.task_id for t in store.trajectories(DATASET)}
    pass_2 = part["judges"]["j"]["pass_k"]["estimates"]["2"]["value"]
    hand_labels = {t: float(v >= 4) for t, v in given.items()}
    assert pass_2 == pytest.approx(hand_pass_hat(design, hand_labels, verdicts, tasks, 2))
    # the page showed the same stopping status the report computes, under the rule configured
    stop = part["judges"]["j"]["stop"]
    assert (stop["statistic"], stop["level"]) == ("tpr", 0.9)
    assert shown_status == f"Stopping rule: j: {stop['message']}"
