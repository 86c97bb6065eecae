"""Server-side latency of the labeling app on a store of 100,000 trajectories.

Measures what one click costs on the server, calling the functions the label page calls:

* queue build (cold, once per annotator and pool; then cached by ``st.cache_data``),
* next item: ``next_item`` from the session's queue position, the trajectory, its rule result
  and labels, and the view model (``build_item_view``) — the page's work minus drawing,
* the whole label page run under ``AppTest`` (drawing included), warm caches,
* saving a label (``Store.save_label``, one transaction).

Trajectories are generated with τ-bench-like sizes (airline tools, 2-14 steps, JSON outputs of
100-1,500 characters: about 5 KB each). The goal (next item <= 150 ms median) is measured
end to end in a real browser by ``labeling_browser.py``; this script splits the server's part.

    .venv/bin/python benchmarks/labeling_latency.py [--n 100000] [--db PATH] [--repeat 200]
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from trajudge.core import now_iso
from trajudge.judges import load_rubric
from trajudge.labeling_app import (
    AppConfig,
    Strategy,
    build_item_view,
    build_queue,
    disagreement_scores,
    next_item,
    progress,
)
from trajudge.labeling_app import _state as S
from trajudge.store import Store
from trajudge.store._schema import judgments
from trajudge.trajectories import Step, Trajectory, Usage

DATASET = "bench"
RUBRIC = "trajectory_reasonableness"
TOOLS = [
    "get_user_details",
    "get_reservation_details",
    "search_direct_flight",
    "search_onestop_flight",
    "book_reservation",
    "update_reservation_flights",
    "cancel_reservation",
    "calculate",
    "transfer_to_human_agents",
]
INTENTS = ["book", "cancel", "change", "baggage", "refund", "info"]


def _output(rng: random.Random) -> str:
    n = rng.randint(100, 1500)
    rec = {
        "reservation_id": f"R{rng.randrange(10**6):06d}",
        "flights": [
            {"flight_number": f"HAT{rng.randrange(300):03d}", "date": "2024-05-1" + str(i)}
            for i in range(3)
        ],
    }
    text = json.dumps(rec)
    return (text + " " + "lorem ipsum dolor sit amet " * (n // 27 + 1))[:n]


def make(i: int, rng: random.Random) -> Trajectory:
    steps = [
        Step(
            tool=rng.choice(TOOLS),
            args={"user_id": f"user_{rng.randrange(5000)}", "reservation_id": f"R{i:06d}"},
            ok=rng.random() > 0.05,
            output=_output(rng),
            tokens=rng.randint(50, 600),
            latency_ms=rng.uniform(50, 3000),
        )
        for _ in range(rng.randint(2, 14))
    ]
    return Trajectory(
        id=f"traj-{i:06d}",
        task_id=f"task-{i // 4}",
        trial=i % 4,
        input="I want to change my flight. " * rng.randint(3, 20),
        steps=steps,
        final_answer="Your reservation has been updated. " * rng.randint(1, 6),
        outcome=rng.random() > 0.4,
        usage=Usage(prompt_tokens=rng.randint(2000, 20000), completion_tokens=500, turns=8),
        intent=rng.choice(INTENTS),
    )


def populate(store: Store, n: int) -> None:
    rng = random.Random(7)
    t0 = time.perf_counter()
    for start in range(0, n, 10_000):
        batch = [make(i, rng) for i in range(start, min(n, start + 10_000))]
        store.import_dataset(DATASET, batch)
    # judgments for a fifth of the items (two judges)
    rows = []
    ts = now_iso()
    for i in range(0, n, 5):
        for judge in ("judge-a", "judge-b"):
            rows.append(
                {
                    "dataset": DATASET,
                    "trajectory_id": f"traj-{i:06d}",
                    "other_id": None,
                    "judge": judge,
                    "rubric_id": RUBRIC,
                    "rubric_version": "v1",
                    "model": "m",
                    "mode": "pointwise",
                    "order": "ab",
                    "sample": 0,
                    "score": float(rng.randint(1, 5)),
                    "reasoning": "The agent " * 40,
                    "cache_hit": False,
                    "created_at": ts,
                }
            )
    with store.sql_write_engine.begin() as conn:
        for s in range(0, len(rows), 5000):
            conn.execute(insert(judgments), rows[s : s + 5000])
    took = time.perf_counter() - t0
    print(f"populated {n:,} trajectories + {len(rows):,} judgments in {took:.0f} s")


def stats(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    return f"median {statistics.median(ms):7.1f} ms   p95 {p95:7.1f} ms   (n={len(ms)})"


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--db", type=Path, default=None, help="reuse (or create) this SQLite file")
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    path = args.db or Path(tempfile.mkdtemp()) / "labeling_bench.db"
    url = f"sqlite:///{path}"
    store = Store(url)
    if store.count_trajectories(DATASET) < args.n:
        populate(store, args.n)
    size_mb = path.stat().st_size / 1e6
    print(f"store: {store.count_trajectories(DATASET):,} trajectories, {size_mb:,.0f} MB")

    # earlier work by other annotators: 20,000 labels
    rng = random.Random(3)
    keys_t, items = timed(lambda: store.trajectory_keys(DATASET))
    for k in range(4):
        name = f"other-{k}"
        if store.label_counts(DATASET, RUBRIC, annotator=name)["labeled"]:
            continue
        for tid, _ in items[k:20_000:4]:
            store.save_label(DATASET, tid, RUBRIC, name, float(rng.randint(1, 5)))
    pool = store.label_annotators(DATASET, RUBRIC)
    me = f"bench-{int(time.time())}"

    print("\nqueue build (cold: once per annotator and pool, then cached)")
    print(f"  trajectory_keys            {keys_t * 1000:8.1f} ms")
    rubric = load_rubric(RUBRIC)
    t, dis = timed(lambda: disagreement_scores(store.judgments_frame(DATASET), rubric))
    print(f"  judgments_frame + disagreement_scores {t * 1000:8.1f} ms ({len(dis):,} scored)")
    strategies: tuple[Strategy, ...] = ("random", "stratified", "disagreement")
    for strategy in strategies:
        t, q = timed(
            functools.partial(
                build_queue, items, me, strategy=strategy, overlap=0.2, pool=pool, disagreement=dis
            )
        )
        print(f"  build_queue {strategy:<14} {t * 1000:8.1f} ms  ({len(q):,} items for {me})")
    queue = build_queue(items, me, strategy="random", overlap=0.2, pool=pool)
    n_items = store.count_trajectories(DATASET)

    fetch: list[float] = []
    save: list[float] = []
    view_only: list[float] = []
    cursor = 0
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        found = next_item(store, DATASET, RUBRIC, queue, start=cursor)
        assert found is not None
        cursor, tid = found
        traj = store.trajectory(DATASET, tid)
        assert traj is not None
        t1 = time.perf_counter()
        view = build_item_view(
            traj,
            rule_result=store.item_rule_result(DATASET, tid),
            judgments=(),
            rubric_id=RUBRIC,
        )
        store.item_labels(DATASET, tid, RUBRIC)
        progress(store, DATASET, RUBRIC, queue, n_items)
        t2 = time.perf_counter()
        fetch.append(t2 - t0)
        view_only.append(t2 - t1)
        assert view.steps
        t, _ = timed(functools.partial(store.save_label, DATASET, tid, RUBRIC, me, 3.0, note="ok"))
        save.append(t)

    print("\nper click (server side, warm queue)")
    print(f"  next item + view model     {stats(fetch)}")
    print(f"    of which view + labels   {stats(view_only)}")
    print(f"  save_label                 {stats(save)}")

    # the whole label page under AppTest: queue cached, Next clicked each time
    from streamlit.testing.v1 import AppTest

    script = "from trajudge.labeling_app.pages._page_label import page_label\npage_label()"
    at = AppTest.from_string(script, default_timeout=600)
    at.session_state[S.CONFIG] = AppConfig(db_url=url, dataset=DATASET, rubric=RUBRIC)
    at.session_state[S.ANNOTATOR] = me + "-page"
    t_first, _ = timed(at.run)
    page: list[float] = []
    for _ in range(max(10, args.repeat // 5)):
        at.button(key="value-4").click()
        t, _ = timed(at.run)  # saves the label
        nxt = next(b for b in at.button if b.label == "Next")
        nxt.click()
        t2, _ = timed(at.run)  # fetches and draws the next item
        page.append(t2)
        assert not at.exception
    print("\nlabel page under AppTest (draws every element; AppTest adds its own overhead)")
    print(f"  first run (cold queue)     {t_first * 1000:8.1f} ms")
    print(f"  Next -> page drawn         {stats(page)}")
    med_fetch = statistics.median(fetch)
    med_page = statistics.median(page)
    print(
        f"\nratios: target 150 ms / next-item median = {0.150 / med_fetch:.1f}x headroom; "
        f"AppTest page / next-item = {med_page / med_fetch:.1f}x"
    )


if __name__ == "__main__":
    main()
