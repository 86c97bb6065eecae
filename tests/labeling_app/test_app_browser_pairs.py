"""Pair labeling in a real browser: the real `trajudge label --rubric trajectory_preference` on
real τ-bench trials (several trials of each task), a pairwise judge's judgments in the store,
three pairs labeled with the keys a, b and t only, and the labels checked in the store in the
original numbering against the layout each pair was shown in."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labeling_helpers import IMG, LINK, SCRIPT, add_accounts, browser_sign_in
from test_app_browser import _ENTER_READY, CHROMIUM, TIMEOUT_MS, _check_inert, _free_port, _wait

from trajudge.judges import task_pairs
from trajudge.labeling_app import build_pair_queue, left_id, pair_of
from trajudge.store import Store
from trajudge.trajectories import Trajectory, from_tau_bench

pytestmark = [pytest.mark.browser, pytest.mark.slow]
DATASET = "tau_pairs"
RUBRIC = "trajectory_preference"
JUDGE_NAME = "pairjudge-SECRET"  # must not reach the page before the annotator's label
REASONING = "SECRET-REASONING"
XSS_ID = "0-3"  # the fourth trial of task 0 carries HTML and script payloads


def _with_payloads(t: Trajectory) -> Trajectory:
    """A τ-bench trial whose user turn and final answer carry the payloads."""
    messages = list(t.messages)
    first_user = next(i for i, m in enumerate(messages) if m.role == "user")
    m = messages[first_user]
    messages[first_user] = m.model_copy(update={"content": f"{m.content} {SCRIPT}"})
    return t.model_copy(
        update={"messages": messages, "final_answer": f"Done {LINK} {IMG} {SCRIPT}"}
    )


def _seed(url: str, tau_bench_file: Path) -> list[tuple[str, str]]:
    """Tasks 0-2 of the τ-bench file (4 trials each) and a pairwise judge with ``max_pairs``
    2 (the judges' own pairing): both orders of each of its pairs. Returns its pairs."""
    trajectories, specs = from_tau_bench(tau_bench_file)
    chosen = [t for t in trajectories if t.task_id in ("0", "1", "2")]
    chosen = [_with_payloads(t) if t.id == XSS_ID else t for t in chosen]
    assert XSS_ID in {t.id for t in chosen}
    store = Store(url)
    store.import_dataset(DATASET, chosen, {k: v for k, v in specs.items() if k in ("0", "1", "2")})
    pairs: list[tuple[str, str]] = []
    for task in ("0", "1", "2"):
        group = [t for t in chosen if t.task_id == task]
        pairs += [(a.id, b.id) for a, b in task_pairs(group, task, cap=2, seed=0)]
    base = {"judge": JUDGE_NAME, "rubric_id": RUBRIC, "rubric_version": "v", "model": "m"}
    for a, b in pairs:
        for order, verdict in (("ab", "A"), ("ba", "B")):  # a flip: A first, then B
            row = {**base, "mode": "pairwise", "trajectory_id": a, "other_id": b}
            store.add_judgment(
                DATASET,
                {**row, "order": order, "sample": 0, "verdict": verdict, "reasoning": REASONING},
            )
    store.close()
    return pairs


def _annotator(url: str, pairs: list[tuple[str, str]]) -> str:
    """A name whose first three pairs (the app's own queue) show the XSS trial and are shown
    in both layouts (as the original order and swapped)."""
    store = Store(url)
    intents = dict(store.trajectory_keys(DATASET))
    store.close()
    for k in range(500):
        name = f"ann{k}"
        first = [pair_of(x) for x in build_pair_queue(pairs, intents, name, overlap=1.0).ids[:3]]
        layouts = {left_id(name, a, b) == a for a, b in first}
        if any(XSS_ID in p for p in first) and layouts == {True, False}:
            return name
    raise AssertionError("no such name")


@pytest.fixture
def pair_server(
    tmp_path: Path, db_url: str, tau_bench_file: Path
) -> Iterator[tuple[str, str, list[tuple[str, str]]]]:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium (/usr/bin/chromium) is not installed")
    pairs = _seed(db_url, tau_bench_file)
    port = _free_port()
    exe = shutil.which("trajudge", path=str(Path(sys.executable).parent)) or "trajudge"
    cmd = [exe, "label", "--db", db_url, "--dataset", DATASET, "--rubric", RUBRIC]
    env = dict(os.environ)
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(
        [*cmd, "--port", str(port), "--overlap", "1.0"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
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
        assert proc.poll() is None, (tmp_path / "server.log").read_text()
        yield base, db_url, pairs
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


# the page is idle and shows a pair: the id lines of its two trajectories, left first
_SHOWN_PAIR = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.dataset.testConnectionState !== "CONNECTED"
      || app.dataset.testScriptState !== "notRunning") return null;
  const ids = [...document.querySelectorAll("[data-testid='stText']")]
    .map((e) => e.innerText).filter((t) => t.startsWith("id ") && t.includes(" · task "))
    .map((t) => t.split(" · ")[0].slice(3));
  return ids.length === 2 ? ids.join("\\n") : null;
}"""


def _shown_pair(page: Any, *, not_: str | None = None) -> tuple[str, str]:
    """Wait until the page is idle and shows a pair (other than ``not_``): (left, right)."""
    handle = page.wait_for_function(
        f"(old) => {{ const p = ({_SHOWN_PAIR})(); return p !== null && p !== old ? p : null; }}",
        arg=not_,
        timeout=TIMEOUT_MS,
        polling=100,
    )
    left, right = str(handle.json_value()).split("\n")
    return left, right


def _wait_text(page: Any, text: str) -> None:
    """Wait until the page is idle and shows ``text`` somewhere in its body."""
    page.wait_for_function(
        f"(t) => ({_SHOWN_PAIR})() !== null && document.body.innerText.includes(t)",
        arg=text,
        timeout=TIMEOUT_MS,
        polling=100,
    )


_IDLE = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  return !!app && app.dataset.testConnectionState === "CONNECTED"
    && app.dataset.testScriptState === "notRunning";
}"""


def _review_page(page: Any, until: str) -> str:
    """Open the Review page from the navigation (the session kept) and wait until it is idle
    and shows its heading and ``until``; the page's visible text."""
    page.get_by_role("link", name="Review").click()
    handle = page.wait_for_function(
        f"""(t) => {{
          const body = document.body.innerText;
          return ({_IDLE})() && body.includes("Review disagreements") && body.includes(t)
            ? body : null;
        }}""",
        arg=until,
        timeout=TIMEOUT_MS,
        polling=100,
    )
    return str(handle.json_value())


def _back_to_pairs(page: Any) -> None:
    page.get_by_role("link", name="Label pairs").click()


def _everything(page: Any) -> str:
    """The markup of the page and of every frame in it (hidden parts included)."""
    return "\n".join(f.content() for f in page.frames)


def test_label_three_pairs_by_keyboard(
    pair_server: tuple[str, str, list[tuple[str, str]]], tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    base, url, judged = pair_server
    name = _annotator(url, judged)
    store = Store(url)
    dialogs: list[str] = []
    keys = ["a", "b", "t"]
    saved = {"a": "A · left better", "b": "B · right better", "t": "tie"}
    shown: list[tuple[str, str]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(TIMEOUT_MS)
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(base, wait_until="domcontentloaded")
            add_accounts(url, name)
            browser_sign_in(page, name)
            left, right = _shown_pair(page)
            try:
                # Review before any label of hers: nothing listed, nothing of the judge (not
                # even hidden in the markup of the other tab)
                body = _review_page(page, "Nothing to review.")
                assert "Only pairs you have labeled are shown" in body
                markup = _everything(page)
                assert JUDGE_NAME not in markup and REASONING not in markup
                _back_to_pairs(page)
                assert _shown_pair(page) == (left, right)  # the same pair, still open
                for n, key in enumerate(keys, start=1):
                    shown.append((left, right))
                    if XSS_ID in (left, right):
                        _check_inert(page, tmp_path)
                    # blind: nothing of the judge on the page (nor hidden in its markup)
                    # before this annotator's own label
                    _wait_text(page, "Rubric: trajectory_preference")
                    markup = _everything(page)
                    assert JUDGE_NAME not in markup and REASONING not in markup
                    page.wait_for_function(_ENTER_READY, timeout=TIMEOUT_MS, polling=100)
                    page.get_by_role("heading", name="A · left").click()
                    page.keyboard.press(key)
                    _wait_text(page, f"Saved: {saved[key]}")
                    _wait_text(page, f"You: {n} / 6 labeled")
                    # once labeled, the judges' verdicts come (the blind check could fail)
                    _wait_text(page, f"judge {JUDGE_NAME} (ab, sample 0)")
                    assert _shown_pair(page) == (left, right)
                    page.screenshot(path=str(tmp_path / f"pair{n}.png"))
                    page.get_by_role("heading", name="A · left").click()
                    page.keyboard.press("n")
                    if n < len(keys):
                        left, right = _shown_pair(page, not_=f"{left}\n{right}")
                _wait_text(page, "You: 3 / 6 labeled")
                # Review after her labels: the judge flipped on every pair (A, then B: a
                # split), so each pair she labeled is a disagreement, shown with the verdicts
                body = _review_page(page, f"judge {JUDGE_NAME} (ab, sample 0)")
                assert REASONING in body
                # the pair picked for review, named by its verdict lines (the judge said A
                # in order ab and B in order ba): one of the three she labeled
                a = re.search(rf"{JUDGE_NAME} \(ab, sample 0\): A \((.+?)\) better", body)
                b = re.search(rf"{JUDGE_NAME} \(ba, sample 0\): B \((.+?)\) better", body)
                assert a is not None and b is not None, body
                reviewed = (a.group(1), b.group(1))
                assert reviewed in judged and {*reviewed} in [{*pair} for pair in shown]
                assert f"{name}: " in body  # her own label beside the verdicts
                page.screenshot(path=str(tmp_path / "review.png"))
            except Exception:
                page.screenshot(path=str(tmp_path / "stuck.png"), full_page=True)
                raise
        finally:
            browser.close()
    assert dialogs == []  # no alert() ever ran
    rows = store.pair_labels_frame(DATASET).to_dict(orient="records")
    assert len(rows) == 3
    by_pair = {(r["trajectory_id"], r["other_id"]): r for r in rows}
    for (left, right), key in zip(shown, keys, strict=True):
        # the row of the pair shown, in its original numbering (the judge's: lower trial A)
        pair = (left, right) if (left, right) in by_pair else (right, left)
        assert pair in judged  # only pairs the pairwise judge compared are offered
        row = by_pair[pair]
        assert row["annotator"] == name and not row["skipped"]
        assert row["left_id"] == left  # the layout recorded is the one on the screen
        # the key names a side of the screen; the store names the original trajectory
        better = {"a": left, "b": right, "t": None}[key]
        expected = "tie" if better is None else ("A" if better == pair[0] else "B")
        assert row["category"] == expected, (row, left, right, key)
    # both layouts were shown: a pair in its original order and a pair swapped
    assert {r["left_id"] == r["trajectory_id"] for r in rows} == {True, False}
    assert any(XSS_ID in s for s in shown)
