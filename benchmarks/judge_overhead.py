"""Judge overhead: trajudge's batch scoring vs plain litellm, then a cached re-run.

Against the embedded local server (llama.cpp via xllamacpp, gemma-3-270m), at the same
concurrency, score N short τ-bench trajectories (pointwise, 1 sample, no swap):

1. trajudge: ``score_dataset`` into a fresh SQLite store with a fresh response cache (gates,
   prompt rendering, instructor parsing, the cache lookup and write, a store write per call);
2. plain: a minimal script sending the very same messages with ``litellm.acompletion`` and the
   same response_format / max_tokens / temperature under an ``asyncio.Semaphore``;
3. trajudge again into a new store with the same cache: every call is a cache hit.

It prints the throughput ratio trajudge / plain (target >= 0.95) and the cached re-run's
speed-up over the first run (target >= 50x) with the number of LLM calls litellm saw during
it, read from the server's own /metrics (target 0). The server's prompt cache is off, so both
sides recompute every prompt. A warm-up call runs first; the sides alternate (plain,
trajudge, trajudge, plain; ``--rounds 1`` for just the first two) so that load drift on
shared CPUs hits both alike, and the throughputs are averaged.

Run: ``LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/python benchmarks/judge_overhead.py``
(needs ../shared/data/tau_bench; about 2-5 minutes on two cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from trajudge.judges import (
    Judge,
    JudgeSpec,
    ResponseCache,
    build_prompt,
    response_schema,
    score_dataset,
    shared_local_server,
    stop_shared_servers,
)
from trajudge.judges.prompts._prompt import Shown
from trajudge.store import Store
from trajudge.trajectories import Trajectory, from_tau_bench

TAU = (
    Path(__file__).resolve().parents[2]
    / "shared/data/tau_bench/historical_trajectories/gpt-4o-airline.json"
)


def server_tokens(base_url: str) -> tuple[int, int]:
    """(prompt tokens, predicted tokens) the llama.cpp server has processed so far."""
    with urllib.request.urlopen(base_url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("llamacpp:") and " " in line:
            name, value = line.split(" ", 1)
            values[name] = float(value)
    return (
        int(values["llamacpp:prompt_tokens_total"]),
        int(values["llamacpp:tokens_predicted_total"]),
    )


def pick(trajectories: list[Trajectory], judge: Judge, n: int) -> list[Trajectory]:
    """The n trajectories with the shortest prompts (at least one tool call each)."""
    sized = []
    for t in trajectories:
        if t.steps:
            p = build_prompt(judge.rubric, [Shown(t)], budget_tokens=judge.spec.prompt_budget or 0)
            sized.append((p.est_tokens, t.id, t))
    return [t for _, _, t in sorted(sized)[:n]]


def run_trajudge(spec: JudgeSpec, items: list[Trajectory], cache_path: Path, tag: str) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/bench-{tag}.db")
        store.import_dataset("bench", items)
        cache = ResponseCache(cache_path)
        t0 = time.perf_counter()
        summary = score_dataset(
            store, "bench", [Judge(spec, cache=cache)], concurrency=spec.concurrency
        )
        elapsed = time.perf_counter() - t0
        cache.close()
        store.close()
    return elapsed, summary


async def run_plain(
    messages: list[list[dict[str, str]]], schema: dict[str, Any], spec: JudgeSpec, base: str
) -> tuple[float, int]:
    import litellm

    sem = asyncio.Semaphore(spec.concurrency)

    async def one(msgs: list[dict[str, str]]) -> bool:
        async with sem:
            resp = await litellm.acompletion(
                model="openai/gemma-3-270m",
                api_base=base,
                api_key="sk-no-key-needed",
                messages=msgs,
                temperature=spec.temperature,
                max_tokens=spec.max_tokens,
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "Verdict", "schema": schema},
                },
            )
        try:
            json.loads(resp.choices[0].message.content)
        except ValueError:
            return False
        return True

    t0 = time.perf_counter()
    ok = await asyncio.gather(*(one(m) for m in messages))
    return time.perf_counter() - t0, sum(ok)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2, help="1 = plain, trajudge; 2 = ABBA")
    args = parser.parse_args()
    if not TAU.exists():
        print(f"skipped: {TAU} is absent")
        return 0
    # the prompt cache is off so that both sides recompute every prompt (llama.cpp would
    # otherwise serve the second side's identical prompts from its RAM prompt cache)
    server = shared_local_server("gemma-3-270m", prompt_cache=False)
    spec = JudgeSpec(
        name="bench",
        model="local/gemma-3-270m",
        rubric="trajectory_reasonableness",
        samples=1,
        swap=False,
        max_tokens=128,
        max_reasoning_chars=60,
        prompt_budget=900,
        concurrency=args.concurrency,
        max_retries=0,
    )
    judge = Judge(spec)
    trajectories, _ = from_tau_bench(TAU)
    items = pick(trajectories, judge, args.n)
    prompts = [build_prompt(judge.rubric, [Shown(t)], budget_tokens=900) for t in items]
    messages = [p.messages for p in prompts]
    schema = response_schema(judge.verdict_model)
    avg = sum(p.est_tokens for p in prompts) / len(prompts)
    print(
        f"{len(items)} τ-bench trajectories, ~{avg:.0f} prompt tokens each (estimate), "
        f"concurrency {args.concurrency}, server slots {server.n_parallel}"
    )

    asyncio.run(run_plain(messages[:1], schema, spec, server.api_base))  # warm-up
    plain_times: list[float] = []
    ours_times: list[float] = []
    first_summary = None
    with tempfile.TemporaryDirectory() as tmp:
        order = ["plain", "trajudge"]
        if args.rounds > 1:
            order += ["trajudge", "plain"]
        for i, side in enumerate(order):
            before = server_tokens(server.base_url)
            if side == "plain":
                elapsed, ok = asyncio.run(run_plain(messages, schema, spec, server.api_base))
                if ok != len(messages):
                    print(f"  (plain: {len(messages) - ok} responses did not parse)")
                plain_times.append(elapsed)
            else:
                elapsed, summary = run_trajudge(spec, items, Path(tmp) / f"cache{i}.db", str(i))
                if summary.errors:
                    print(f"  (trajudge: {summary.errors} judgments ended in an error)")
                ours_times.append(elapsed)
                first_summary = first_summary or (summary, Path(tmp) / f"cache{i}.db")
            after = server_tokens(server.base_url)
            work = f"{after[0] - before[0]} prompt + {after[1] - before[1]} predicted tokens"
            rate = len(items) / elapsed
            print(f"  {side:9s} {elapsed:7.2f} s  {rate:.3f} trajectories/s  (server: {work})")
        assert first_summary is not None
        summary, cache_path = first_summary
        before = server_tokens(server.base_url)
        cached_s, cached = run_trajudge(spec, items, cache_path, "cached")
        after = server_tokens(server.base_url)
        cached_tokens = (after[0] - before[0]) + (after[1] - before[1])
    plain_tp = len(items) / (sum(plain_times) / len(plain_times))
    ours_tp = len(items) / (sum(ours_times) / len(ours_times))
    first_s = ours_times[0]
    print(f"throughput ratio trajudge/plain litellm: {ours_tp / plain_tp:.3f} (target >= 0.95)")
    print(
        f"cached re-run: {cached_s:.3f} s vs {first_s:.2f} s first run = "
        f"{first_s / cached_s:.0f}x faster (target >= 50x); cache hits {cached.cache_hits}/"
        f"{len(items)}, tokens the server processed during it: {cached_tokens} (target 0: no call)"
    )
    stop_shared_servers()
    return 0


if __name__ == "__main__":
    sys.exit(main())
