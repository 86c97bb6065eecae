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
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from trajudge.core import now_iso
from trajudge.rules import check_stored_dataset
from trajudge.store import Store
from trajudge.store._schema import labels
from trajudge.trajectories import from_tau_bench

ROOT = Path(__file__).resolve().parents[1]
TAU = ROOT / "examples/tau_airline/gpt-4o-airline.json"
CHROMIUM = "/usr/bin/chromium"
DATASET = "tau100k"
SEED = "tau-seed"
RUBRIC = "trajectory_reasonableness"
OTHERS = 4
OTHER_LABELS = 20_000
LABEL_BUTTON, SAVED = "4 · reasonable", "Saved: 4 · reasonable"

BARE_APP = """
import streamlit as st

if "n" not in st.session_state:
    st.session_state.n = 0


def _next() -> None:
    st.session_state.n += 1


st.button("Next", on_click=_next)
st.text(f"id item-{st.session_state.n} · task bare")
"""

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


# -- the store -------------------------------------------------------------------------------------


def fill_store(url: str, n: int) -> None:
    """``n`` τ-bench trajectories (clones of the 200 runs), their rule results, other labels."""
    store = Store(url)
    if store.has_dataset(DATASET) and store.count_trajectories(DATASET) >= n:
        return
    t0 = time.perf_counter()
    originals, specs = from_tau_bench(TAU)
    if not store.has_dataset(SEED):
        store.import_dataset(SEED, originals, specs)
        check_stored_dataset(store, SEED)  # the real rule checks, stored as `trajudge check` does
    rules = store.rule_results(SEED)
    chunk = 5000
    for start in range(0, n, chunk):
        batch, rule_rows = [], []
        for i in range(start, min(n, start + chunk)):
            src, k = originals[i % len(originals)], i // len(originals)
            clone = src.model_copy(update={"id": f"{src.id}~{k}", "task_id": f"{src.task_id}~{k}"})
            batch.append(clone)
            rule_rows.append({**rules[src.id], "trajectory_id": clone.id})
        store.import_dataset(DATASET, batch)
        store.save_rule_results(DATASET, rule_rows)
        print(f"  stored {start + len(batch):,} / {n:,}", end="\r", flush=True)
    # earlier work: other annotators' labels on a spread of the items
    rng = random.Random(3)
    ids = [t for t, _ in store.trajectory_keys(DATASET)]
    ts = now_iso()
    rows = [
        {
            "dataset": DATASET,
            "trajectory_id": ids[rng.randrange(len(ids))] if j % 5 else ids[j % len(ids)],
            "rubric_id": RUBRIC,
            "annotator": f"other-{j % OTHERS}",
            "value": float(rng.randint(1, 5)),
            "unsure": False,
            "skipped": False,
            "source": "human",
            "adjudication": False,
            "created_at": ts,
            "updated_at": ts,
        }
        for j in range(OTHER_LABELS)
    ]
    unique = {(r["trajectory_id"], r["annotator"]): r for r in rows}
    with store.sql_write_engine.begin() as conn:
        conn.execute(insert(labels), list(unique.values()))
    store.close()
    print(f"store filled in {time.perf_counter() - t0:.0f} s" + " " * 20)


# -- servers ---------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Variant:
    name: str
    kind: str  # "app" or "bare"
    src: Path | None = None  # PYTHONPATH for an app variant
    annotator: str = ""
    base: str = ""
    proc: subprocess.Popen[bytes] | None = None
    page: Any = None
    shown: str = ""
    next_ms: list[float] = field(default_factory=list)
    save_ms: list[float] = field(default_factory=list)
    elements: list[int] = field(default_factory=list)
    browser_ms: list[float] = field(default_factory=list)  # the page's main-thread work
    cdp: Any = None


STREAMLIT_FLAGS = [
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
]


@contextmanager
def running(v: Variant, url: str, workdir: Path) -> Iterator[None]:
    port = _free_port()
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "0"}
    if v.kind == "app":
        assert v.src is not None
        env["PYTHONPATH"] = str(v.src)
        main = "import sys; from trajudge.cli import main; sys.exit(main())"
        # the annotator's account (sign-in is on, as for a team); taken on a second run
        add = [sys.executable, "-c", main, "annotators", "add", v.annotator, "--password"]
        subprocess.run(
            [*add, "--db", url], input=PASSWORD + "\n", text=True, env=env, capture_output=True
        )
        cmd = [sys.executable, "-c", main, "label", "--db", url, "--dataset", DATASET]
        cmd += ["--port", str(port)]
    else:
        script = workdir / "bare_app.py"
        script.write_text(BARE_APP)
        cmd = [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port)]
        cmd += ["--server.address", "127.0.0.1", *STREAMLIT_FLAGS]
    log = (workdir / f"{v.name}.log").open("w")
    v.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    v.base = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + 300
        while True:
            if v.proc.poll() is not None:
                raise RuntimeError(f"{v.name} stopped: {(workdir / f'{v.name}.log').read_text()}")
            try:
                with urllib.request.urlopen(f"{v.base}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > end:
                raise RuntimeError(f"{v.name}: no server after 300 s")
            time.sleep(0.3)
        yield
    finally:
        v.proc.terminate()
        try:
            v.proc.wait(60)
        except subprocess.TimeoutExpired:
            v.proc.kill()
            v.proc.wait()
        log.close()


def streamlit_pid(v: Variant) -> int:
    """The process running the scripts: ``trajudge label`` starts Streamlit as its child."""
    assert v.proc is not None
    if v.kind == "bare":
        return v.proc.pid
    children = Path(f"/proc/{v.proc.pid}/task/{v.proc.pid}/children").read_text().split()
    return int(children[0])


# -- the browser -----------------------------------------------------------------------------------

TIMEOUT_MS = 300_000
PASSWORD = "benchmark password"  # the benchmark's own throwaway store
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


# -- profiles --------------------------------------------------------------------------------------


def _frame(f: str) -> str:
    """``func (path/file.py:12)`` -> ``func (file.py)``."""
    name, _, where = f.partition(" (")
    return f"{name} ({where.split(':')[0].split('/')[-1]}" + (")" if where else "")


def top_functions(raw: Path, k: int = 25) -> str:
    """Samples per thread, then own and total samples per function of the script thread, from
    py-spy's collapsed stacks (``--threads``: the first frame names the thread)."""
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        c = int(count)
        head, *frames = stack.split(";")
        threads[head.partition(": ")[2] or head] += c
        if "ScriptRunner.scriptThread" not in head or not frames:
            continue
        names = [_frame(f) for f in frames]
        own[names[-1]] += c
        for f in set(names):
            total[f] += c
    n = sum(own.values()) or 1
    out = ["samples per thread (200 per second while busy):"]
    out += [f"{c:7d}   {t}" for t, c in threads.most_common(8)]
    out += ["", f"script thread: {n} samples", "own %   function"]
    out += [f"{100 * c / n:5.1f}   {f}" for f, c in own.most_common(k)]
    out += ["", "total % function"]
    out += [f"{100 * c / n:5.1f}   {f}" for f, c in total.most_common(k)]
    return "\n".join(out)


@contextmanager
def profiling(v: Variant, out: Path | None, py_spy: str | None) -> Iterator[None]:
    if out is None or v.kind != "app" or py_spy is None:
        yield
        return
    raw = out / f"{v.name}.raw"
    cmd = [py_spy, "record", "--pid", str(streamlit_pid(v)), "--format", "raw", "--threads"]
    cmd += ["--rate", "200", "--output", str(raw), "--nonblocking"]
    prof = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        prof.send_signal(2)  # py-spy writes its file on SIGINT
        prof.wait(120)
        if raw.exists():
            (out / f"{v.name}.txt").write_text(top_functions(raw) + "\n")


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
