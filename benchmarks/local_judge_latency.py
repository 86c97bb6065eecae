"""Latency of the embedded judge (gemma-3-270m via xllamacpp) on τ-bench, on a loaded machine.

What sets the local model's default ``timeout`` and ``max_tokens`` (see
``trajudge.judges.calls._spec.LOCAL_DEFAULTS``): reference-mode calls on the demo's trajectories
(examples/tau_airline: tasks 0, 1, 13, 37, 38, reference = the task spec's expected calls),
with the demo's rubric, at the local judge's default concurrency of 2 (two server slots), while
``--busy`` processes spin on the CPU (``python -c "while True: pass"``) to load the machine.

Every call runs with a one-hour timeout and no retries, so the figures are the real time a call
takes, not a cut-off. Each configuration prints one line per call (prompt and completion tokens,
seconds, whether the verdict parsed) and a summary (median, max, tokens per second).

Run: ``LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/python benchmarks/local_judge_latency.py``
(``--configs demo,default,legacy``: the demo's own settings, the JudgeSpec defaults of a local
judge, the defaults before they were measured; ``--max-tokens`` / ``--budget`` /
``--reasoning`` / ``--threads`` to try others). Process CPU seconds are printed beside wall
seconds: the server runs in-process, so they are the model's work whatever else the machine
runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from trajudge.judges import Judge, JudgeSpec, shared_local_server, stop_shared_servers
from trajudge.judges.prompts._render import spec_reference
from trajudge.trajectories import from_tau_bench

ROOT = Path(__file__).resolve().parents[1]
TAU = ROOT / "examples" / "tau_airline" / "gpt-4o-airline.json"
DEMO_TASKS = ["0", "1", "13", "37", "38"]


def spec_for(config: str, args: argparse.Namespace) -> JudgeSpec:
    fields: dict[str, Any] = {
        "name": "bench",
        "model": "local/gemma-3-270m",
        "rubric": "trajectory_reasonableness_reference",
        "reference": "spec",
        "timeout": 3600.0,
        "max_retries": 0,
        "concurrency": args.concurrency,
    }
    if config == "demo":  # examples/tau_airline/trajudge.yaml
        fields.update(max_tokens=160, max_reasoning_chars=200, prompt_budget=2000)
    elif config == "legacy":  # the JudgeSpec defaults before they were measured
        fields.update(max_tokens=512, max_reasoning_chars=800)
    if args.max_tokens is not None:
        fields["max_tokens"] = args.max_tokens
    if args.budget is not None:
        fields["prompt_budget"] = args.budget
    if args.reasoning is not None:
        fields["max_reasoning_chars"] = args.reasoning
    return JudgeSpec.model_validate(fields)


async def measure(judge: Judge, n: int) -> list[dict[str, Any]]:
    trajectories, specs = from_tau_bench(TAU)
    chosen = [t for t in trajectories if t.task_id in DEMO_TASKS]
    chosen.sort(key=lambda t: (DEMO_TASKS.index(t.task_id), t.trial))
    # spread over tasks: trial 0 of every task, then trial 1, ...
    chosen.sort(key=lambda t: t.trial)
    rows: list[dict[str, Any]] = []
    sem = asyncio.Semaphore(judge.spec.concurrency)

    async def one(i: int) -> None:
        t = chosen[i // 2 % len(chosen)]
        expected = specs[t.task_id].reference
        assert expected is not None  # every demo task expects at least one action
        ref = spec_reference(t.task_id, list(expected), t.input)
        order: Literal["ab", "ba"] = "ab" if i % 2 == 0 else "ba"
        async with sem:
            t0 = time.perf_counter()
            j = await judge.ajudge_one(t, other=ref, other_expected=True, order=order)
            wall = time.perf_counter() - t0
        rows.append(
            {
                "id": f"{t.id}/{order}",
                "prompt": j.prompt_tokens,
                "completion": j.completion_tokens,
                "seconds": wall,
                "ok": j.error is None,
                "error": j.error,
            }
        )
        print(
            f"  {t.id:>6}/{order}  prompt {j.prompt_tokens!s:>5}  completion "
            f"{j.completion_tokens!s:>4}  {wall:7.1f} s  {'ok' if j.error is None else j.error}",
            flush=True,
        )

    await asyncio.gather(*(one(i) for i in range(n)))
    return rows


def run_config(name: str, args: argparse.Namespace, server: Any) -> None:
    judge = Judge(spec_for(name, args))
    judge.client()
    s = judge.spec
    print(
        f"config {name}: max_tokens {s.max_tokens}, reasoning cap {judge.reasoning_chars} chars, "
        f"prompt budget {judge._budget} tokens, concurrency {s.concurrency} over "
        f"{server.n_parallel} slots, {args.busy} busy process(es), load average "
        f"{os.getloadavg()[0]:.1f}",
        flush=True,
    )
    t0, cpu0 = time.perf_counter(), time.process_time()
    rows = asyncio.run(measure(judge, args.n))
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    secs = [r["seconds"] for r in rows]
    comp = [r["completion"] or 0 for r in rows]
    prompt = [r["prompt"] or 0 for r in rows]
    print(
        f"config {name}: {len(rows)} calls in {elapsed:.0f} s wall, {cpu:.0f} s CPU "
        f"({cpu / len(rows):.0f} CPU s per call); per call median {statistics.median(secs):.0f} "
        f"s, max {max(secs):.0f} s; prompt tokens median {statistics.median(prompt):.0f} max "
        f"{max(prompt)}; completion tokens median {statistics.median(comp):.0f} max "
        f"{max(comp)}; parsed {sum(r['ok'] for r in rows)}/{len(rows)}; load average now "
        f"{os.getloadavg()[0]:.1f}",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="demo,default", help="demo, default, legacy")
    parser.add_argument("--n", type=int, default=4, help="calls per config (candidate x order)")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--busy", type=int, default=1, help="CPU-spinning processes")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: its own)")
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument("--budget", type=int)
    parser.add_argument("--reasoning", type=int)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # run the finally: stop the spinners
    spin = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        server = shared_local_server("gemma-3-270m", n_threads=args.threads)
        for name in args.configs.split(","):
            run_config(name, args, server)
    finally:
        for p in spin:
            p.kill()
            p.wait()
        stop_shared_servers()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
