"""The labeling app in a real browser: click "Next" until the next item is fully shown.

A store of 100,000 trajectories (the 200 τ-bench airline runs of ``examples/tau_airline``
cloned under new ids, each with the rule checks' stored result, and 20,000 labels by four
other annotators), the real ``trajudge label`` server, Debian chromium driven by Playwright.
Each click: give the item a label (the value button, not timed: "Next" refuses an unlabeled
item), then time "Next" from the click event to the new item's id on screen with the app
idle (script finished, no stale element left). Beside it, in the same run, the same click on
a bare Streamlit app (one button, one line of text): the floor any Streamlit page pays.

With ``--baseline SRC`` the app is also run from another source tree (e.g. an export of main),
so before and after are measured side by side. The variants take turns, ``--chunk`` clicks
each, so that load drifting on the shared CPUs hits them alike. It prints per variant the
median and p95, and the ratios. Goal: the app's median <= 150 ms.

With ``--profile DIR`` each app server is sampled by py-spy during the timed clicks
(``DIR/<variant>.txt``: the top functions by own and by total time of the script thread).

    PYTHONPATH=src .venv/bin/python benchmarks/labeling_browser.py \\
        [--n 100000] [--db PATH] [--clicks 100] [--baseline /tmp/main-src] [--profile DIR]

``--db PATH`` keeps the store between runs (building it takes a few minutes).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

# the store and the servers (this folder, first on sys.path when run as a script)
from _labeling_browser_servers import (
    DATASET,
    PASSWORD,
    ROOT,
    RUBRIC,
    Variant,
    fill_store,
    profiling,
    running,
)

from trajudge.store import Store

CHROMIUM = "/usr/bin/chromium"
LABEL_BUTTON, SAVED = "4 · reasonable", "Saved: 4 · reasonable"

# The page is idle (connected, script finished, no stale element) and shows an item's id line
# ("id X · task Y"): returns X, else null.
SHOWN_ID = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.dataset.testConnectionState !== "CONNECTED"
      || app.dataset.testScriptState !== "notRunning") return null;
  if (document.querySelector("[data-stale='true']")) return null;
  const line = [...document.querySelectorAll("[data-testid='stText']")]
    .map((e) => e.innerText).find((t) => t.startsWith("id ") && t.includes(" · task "));
  return line === undefined ? null : line.split(" · ")[0].slice(3);
}"""

# Arm a timer: t0 at the next click event (capture phase, before Streamlit sees it), done when
# the condition holds after it: ["new", oldId] (another item shown) or ["text", s] (s shown).
ARM = (
    """([kind, arg]) => {
  const shownId = """
    + SHOWN_ID
    + """;
  const ready = () => {
    const id = shownId();
    if (id === null) return false;
    return kind === "new" ? id !== arg : document.body.innerText.includes(arg);
  };
  const b = { t0: null };
  window.__bench = b;
  b.done = new Promise((resolve, reject) => {
    let obs = null, iv = null, to = null;
    const stop = () => { obs.disconnect(); clearInterval(iv); clearTimeout(to); };
    const check = () => {
      if (b.t0 !== null && ready()) { stop(); resolve(performance.now() - b.t0); }
    };
    obs = new MutationObserver(check);
    obs.observe(document.body,
      { subtree: true, childList: true, attributes: true, characterData: true });
    iv = setInterval(check, 25);
    to = setTimeout(() => { stop(); reject(new Error("no answer in 300 s")); }, 300000);
  });
  document.addEventListener("click", () => { if (b.t0 === null) b.t0 = performance.now(); },
    { capture: true, once: true });
}"""
)


# -- the browser -----------------------------------------------------------------------------------

TIMEOUT_MS = 300_000
ELEMENTS = "() => document.querySelectorAll(\"[data-testid='stElementContainer']\").length"


def shown_id(page: Any, not_: str | None = None) -> str:
    handle = page.wait_for_function(
        f"(old) => {{ const id = ({SHOWN_ID})(); return id !== null && id !== old ? id : null; }}",
        arg=not_,
        timeout=TIMEOUT_MS,
        polling=50,
    )
    return str(handle.json_value())


def timed_click(page: Any, button: str, kind: str, arg: str) -> float:
    page.evaluate(ARM, [kind, arg])
    page.get_by_role("button", name=button).click()
    return float(page.evaluate("() => window.__bench.done"))


def task_seconds(v: Variant) -> float:
    """Chromium's ``TaskDuration``: seconds its main thread has worked for the page so far."""
    metrics = v.cdp.send("Performance.getMetrics")["metrics"]
    return float(next(m["value"] for m in metrics if m["name"] == "TaskDuration"))


def open_page(browser: Any, v: Variant) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(v.base, wait_until="domcontentloaded")
    if v.kind == "app":
        page.get_by_role("textbox", name="Name").fill(v.annotator)
        page.get_by_role("textbox", name="Password or invite").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
    v.page = page
    v.cdp = page.context.new_cdp_session(page)
    v.cdp.send("Performance.enable")
    v.shown = shown_id(page)


def step(v: Variant, *, record: bool) -> None:
    """Label the item on screen (app only), then click Next and wait for the next item."""
    if v.kind == "app":
        ms = timed_click(v.page, LABEL_BUTTON, "text", SAVED)
        if record:
            v.save_ms.append(ms)
    busy = task_seconds(v)
    ms = timed_click(v.page, "Next", "new", v.shown)
    busy = task_seconds(v) - busy
    v.shown = shown_id(v.page)
    if record:
        v.next_ms.append(ms)
        v.browser_ms.append(busy * 1000)
        v.elements.append(int(v.page.evaluate(ELEMENTS)))


# -- main ------------------------------------------------------------------------------------------


def summary(ms: list[float]) -> tuple[float, float]:
    s = sorted(ms)
    return statistics.median(s), s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="trajectories in the store")
    ap.add_argument("--db", type=Path, default=None, help="keep (or reuse) the store here")
    ap.add_argument("--clicks", type=int, default=100, help="timed clicks per variant")
    ap.add_argument("--chunk", type=int, default=10, help="clicks per turn")
    ap.add_argument("--warmup", type=int, default=3, help="untimed clicks per variant first")
    ap.add_argument("--baseline", type=Path, default=None, help="another src/ to compare")
    ap.add_argument("--profile", type=Path, default=None, help="write py-spy profiles here")
    ap.add_argument("--py-spy", default=shutil.which("py-spy"), help="py-spy executable")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="labeling_browser-"))
    db = args.db or work / "store.db"
    url = f"sqlite:///{db}"
    fill_store(url, args.n)
    store = Store(url)
    n_items = store.count_trajectories(DATASET)
    stamp = time.strftime("%H%M%S")
    variants = [Variant("app", "app", ROOT / "src")]
    if args.baseline is not None:
        variants.insert(0, Variant("baseline", "app", args.baseline.resolve()))
    variants.append(Variant("bare streamlit", "bare"))
    first = store.trajectory_keys(DATASET)[0][0]
    for v in variants:
        if v.kind == "app":  # in the pool from the start: no queue rebuilt mid-run
            v.annotator = f"bench-{v.name}-{stamp}"
            store.save_label(DATASET, first, RUBRIC, v.annotator, None, skipped=True)
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    print(f"store: {n_items:,} trajectories ({db.stat().st_size / 1e6:,.0f} MB), {db}")

    with ExitStack() as stack:
        for v in variants:
            stack.enter_context(running(v, url, work))
        p = stack.enter_context(sync_playwright())
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
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
        stack.callback(browser.close)
        for v in variants:
            open_page(browser, v)
            for _ in range(args.warmup):
                step(v, record=False)
        for v in variants:
            stack.enter_context(profiling(v, args.profile, args.py_spy))
        while any(len(v.next_ms) < args.clicks for v in variants):
            for v in variants:
                for _ in range(min(args.chunk, args.clicks - len(v.next_ms))):
                    step(v, record=True)
            done = min(len(v.next_ms) for v in variants)
            print(f"  {done} / {args.clicks} clicks each", end="\r", flush=True)
    print(" " * 40)

    print(f'click "Next" -> next item fully shown, real browser, {n_items:,} trajectories')
    head = f"{'variant':<16} {'median ms':>10} {'p95 ms':>8} {'browser ms':>11} {'elements':>9}"
    print(head + "   label click median")
    bare = next(v for v in variants if v.kind == "bare")
    for v in variants:
        med, p95 = summary(v.next_ms)
        save = f"{statistics.median(v.save_ms):7.0f} ms" if v.save_ms else ""
        elements, browser_ms = statistics.median(v.elements), statistics.median(v.browser_ms)
        print(
            f"{v.name:<16} {med:>10.0f} {p95:>8.0f} {browser_ms:>11.0f} {elements:>9.0f}   {save}"
        )
    print("browser ms: the page's main-thread work per Next (Chromium's TaskDuration), median")
    print("elements: element containers on the page after Next, median")
    bare_med = summary(bare.next_ms)[0]
    for v in variants:
        if v.kind == "app":
            print(f"ratio {v.name} / bare streamlit: {summary(v.next_ms)[0] / bare_med:.2f}")
    if args.baseline is not None:
        ratio = summary(variants[1].next_ms)[0] / summary(variants[0].next_ms)[0]
        print(f"ratio app / baseline: {ratio:.2f}")
    app_med = summary(variants[-2].next_ms)[0]
    verdict = "met" if app_med <= 150 else "NOT met"
    print(f"goal: app median <= 150 ms: {verdict} ({app_med:.0f} ms)")
    if args.profile is not None:
        print(f"profiles: {args.profile}/<variant>.txt")


if __name__ == "__main__":
    main()
