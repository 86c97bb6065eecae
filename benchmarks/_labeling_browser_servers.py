"""What ``labeling_browser.py`` times, outside the browser: the store, the servers, profiles.

The store of 100,000 τ-bench trajectories (:func:`fill_store`), the app and bare-Streamlit
servers each variant runs (:class:`Variant`, :func:`running`) and py-spy's profile of a server
(:func:`profiling`). Apart from the benchmark's script so that the script keeps what a click
is and how it is timed (the page, the timer, the summary), each file under 400 lines.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
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
DATASET = "tau100k"
SEED = "tau-seed"
RUBRIC = "trajectory_reasonableness"
OTHERS = 4
OTHER_LABELS = 20_000
PASSWORD = "benchmark password"  # the benchmark's own throwaway store

BARE_APP = """
import streamlit as st

if "n" not in st.session_state:
    st.session_state.n = 0


def _next() -> None:
    st.session_state.n += 1


st.button("Next", on_click=_next)
st.text(f"id item-{st.session_state.n} · task bare")
"""


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
