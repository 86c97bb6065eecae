"""``trajudge label`` with the active strategy in a real browser (Debian chromium, Playwright):
the server starts with --strategy random; the lead switches the queue to active on the lead's
page, and the annotator's next item comes from the active design; she labels the uniform
learning phase, then the items drawn with the fitted probabilities; the page shows the stopping
status, and the report's weighted estimates equal a hand computation from the probabilities
stored with the design (the item labelled under the random queue left out unless drawn)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from labeling_helpers import DATASET, PASSWORD, add_accounts, browser_sign_in, make_trajectories
from test_app_active import RUBRIC, _seed_judgments, hand_estimates, hand_pass_hat
from test_app_browser import CHROMIUM, TIMEOUT_MS, _free_port, _shown_id, _wait, _wait_idle_with

from trajudge.labeling_app import build_queue
from trajudge.labeling_app.auth._manage import add_account
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
    add_account(store, "cho", "lead", password=PASSWORD)
    store.close()
    add_accounts(db_url, "ann")
    port = _free_port()
    exe = shutil.which("trajudge", path=str(Path(sys.executable).parent)) or "trajudge"
    cmd = [exe, "label", "--db", db_url, "--dataset", DATASET, "--port", str(port),
           "--strategy", "random", "--overlap", "1.0",
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
        yield base, db_url, verdicts
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _switch_to_active(browser, base: str) -> None:  # type: ignore[no-untyped-def]
    """The lead picks active (budget 6, a learning phase of 2 labels) on the lead's page."""
    lead = browser.new_page(viewport={"width": 1400, "height": 1000})
    lead.set_default_timeout(TIMEOUT_MS)
    lead.goto(base, wait_until="domcontentloaded")
    browser_sign_in(lead, "cho")
    lead.get_by_role("link", name="Lead").click()
    lead.get_by_text("Queue order in force: random (from trajudge label --strategy)").wait_for()
    lead.get_by_test_id("stSelectbox").filter(has_text="Queue order").click()
    lead.get_by_role("option", name="active").click()
    lead.get_by_label("Budget (active: expected labels)").fill("6")
    lead.get_by_label("Budget (active: expected labels)").press("Enter")
    lead.get_by_label("Learning phase (active: uniform labels first)").fill("2")
    lead.get_by_label("Learning phase (active: uniform labels first)").press("Enter")
    lead.get_by_role("button", name="Save queue order").click()
    lead.get_by_text("Saved: the queue order is active for everyone's next item.").wait_for()
    lead.get_by_text("Queue order in force: active (chosen by cho at ", exact=False).wait_for()
    lead.close()


def _next_expected(store: Store, mine: set[str]) -> str | None:
    """The first item the stored design drew (in its order) that ann has not labelled."""
    design = store.label_draws(DATASET, RUBRIC)
    drawn = design.loc[design["drawn"].astype(bool), "trajectory_id"]
    return next((t for t in drawn if t not in mine), None)


def test_the_lead_switches_to_active_and_the_report_weights_the_draws(
    active_server: tuple[str, str, dict[str, float]], tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    base, url, verdicts = active_server
    store = Store(url)
    random_first = build_queue(store.trajectory_keys(DATASET), "ann", strategy="random",
                               overlap=1.0, pool=["ann"]).ids[0]  # fmt: skip
    given: dict[str, float] = {}
    seen: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run"],
        )  # fmt: skip
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(base, wait_until="domcontentloaded")
            browser_sign_in(page, "ann")
            tid = _shown_id(page)
            assert tid == random_first  # the random queue, as --strategy started it
            page.get_by_text("Queue order: random").wait_for()

            def label(value: int) -> None:
                page.get_by_role("heading", name="Final answer").click()
                page.keyboard.press(str(value))
                _wait_idle_with(page, f"Saved: {value} · {NAMES[value]}")
                given[tid] = float(value)

            label(5)
            _switch_to_active(browser, base)
            # from her next item on, ann's queue is the active design's draws
            k = 0
            while True:
                expected = _next_expected(store, set(given))
                page.get_by_role("heading", name="Final answer").click()
                page.keyboard.press("n")
                if expected is None:
                    break
                tid = _shown_id(page, not_=tid)
                assert tid == expected
                page.get_by_text("Queue order: active").wait_for()
                if k == 0:  # nothing labelled under the design yet
                    _wait_idle_with(page, "Stopping rule: j: no drawn item labelled yet")
                seen.append(tid)
                label(5 if k % 3 else 2)
                k += 1
            page.get_by_text("Your queue is done. Thank you!").wait_for(timeout=TIMEOUT_MS)
            status = page.get_by_text("Stopping rule: j: ", exact=False)
            status.first.wait_for(timeout=TIMEOUT_MS)
            shown_status = status.first.inner_text()
        except Exception:
            page.screenshot(path=str(tmp_path / "stuck.png"), full_page=True)
            raise
        finally:
            browser.close()
    design = store.label_draws(DATASET, RUBRIC)
    # both phases were drawn: 2 uniform learning draws, then the fitted ones
    assert store.draw_phases(DATASET, RUBRIC) == (1, 2) and len(design) == 12
    one = design[design["phase"] == 1]
    assert int(one["drawn"].sum()) == 2 and set(one["probability"]) == {6 / 12}
    drawn = design.loc[design["drawn"].astype(bool), "trajectory_id"].tolist()
    assert seen == [t for t in drawn if t != random_first]
    labels = store.labels_frame(DATASET, rubric_id=RUBRIC)
    assert dict(zip(labels["trajectory_id"], labels["value"], strict=True)) == given
    hand = hand_estimates(design, {t: float(v >= 4) for t, v in given.items()}, verdicts)
    assert hand["n"] == 12 and hand["labels"] == len(drawn)  # every item considered
    report = build_report(store, DATASET, n_boot=50, stop_when=STOP_WHEN).to_dict()
    part = report["labels_drawn"][0]
    est = part["judges"]["j"]["estimates"]
    assert est["pass_rate"]["value"] == pytest.approx(hand["pass_rate"])
    assert est["tpr"]["value"] == pytest.approx(hand["tpr"], nan_ok=True)
    assert est["kappa"]["value"] == pytest.approx(hand["kappa"], nan_ok=True)
    # the label given under the random queue counts only if the design drew its item
    assert part["excluded"]["not_drawn"] == (0 if random_first in drawn else 1)
    tasks = {t.id: t.task_id for t in store.trajectories(DATASET)}
    pass_2 = part["judges"]["j"]["pass_k"]["estimates"]["2"]["value"]
    hand_labels = {t: float(v >= 4) for t, v in given.items()}
    assert pass_2 == pytest.approx(hand_pass_hat(design, hand_labels, verdicts, tasks, 2))
    # the page showed the same stopping status the report computes, under the rule configured
    stop = part["judges"]["j"]["stop"]
    assert (stop["statistic"], stop["level"]) == ("tpr", 0.9)
    assert shown_status == f"Stopping rule: j: {stop['message']}"
    log = store.label_strategy_log(DATASET, RUBRIC)
    assert [(r["name"], r["previous"], r["strategy"], r["budget"], r["learn"]) for r in log] == [
        ("cho", "random", "active", 6, 2)
    ]
