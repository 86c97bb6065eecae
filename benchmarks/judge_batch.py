"""Judging overhead: trajudge's batch runner vs a bare litellm loop, then re-runs.

The measurement of issue 12 (rows 1 and 2). A fake OpenAI-compatible server on 127.0.0.1
answers every request at once (``tests/judges/fake_llm.py``, run in a process of its own so
that it shares no GIL with the measured side). 400 pointwise calls on τ-bench trajectories
(the project's MIT copy in ``examples/``; 200 runs, each shown twice with a marked task text
so that all 400 prompts differ), at concurrency 4:

- ``plain``: a bare asyncio loop of ``litellm.acompletion`` under an ``asyncio.Semaphore(4)``,
  sending the very messages trajudge renders (rendered beforehand, not timed), the same
  ``response_format`` (json_schema), ``temperature`` and ``max_tokens``; it parses each
  answer with ``json.loads`` and nothing else;
- ``trajudge``: ``score_dataset`` on a stored dataset with a response cache, as ``trajudge
  judge`` runs it (store read, gates, plan, prompts, cache, calls, verdict validation, store
  writes), timed around the call;
- ``frozen`` (with ``--frozen``): the same bare loop, with the objects that exist before the
  timed runs left out of the garbage collector's scans (``gc.freeze``), as trajudge's batch
  runner does. A first big batch in a process with litellm loaded pays one full collection
  (about 0.2-0.3 s here) that later batches do not; trajudge avoids it, the plain loop does
  not, so the ratio against ``plain`` is what a ``trajudge judge`` run gives against the loop
  as one would write it, and the ratio against ``frozen`` is the per-call overhead alone;
- the same trajudge run again on the same store (``stored``: every judgment is stored, 0
  calls), and on a copy of the dataset with the same cache (``cached``: every call is a cache
  hit, 0 calls).

Each side runs in a fresh subprocess (``--side``), warmed up first with 8 calls of other
prompts so that imports and client set-up are not timed. Rounds interleave the sides in a
rotating order so that load drift on shared CPUs hits them alike; the script prints medians
over rounds: the throughput ratio trajudge/plain (goal >= 0.95) and the re-run ratios
re-run/first run (goal <= 1/50 = 0.02). It checks that every side sent the same 400 prompts
(the server's SHA-256 of each request's messages) and that the re-runs made no call.

``--repeat K`` runs each side's first run K times in its process (trajudge: each time into a
fresh store and cache) and prints, beside the ratio of single runs, the ratio of each
process's best run: on a machine whose speed for the same work swings by tens of percent
from one run to the next (seen here: 1.6-2.9 s for the same 400 calls), the best of K is
what the code costs with the least interference, as ``timeit`` takes it.

``--latency S`` makes the fake server answer each request after S seconds (issue 29: 0.2 s,
2,000 calls at concurrency 64 and 4,000 at 256), so that the client side, not the server, is
what limits the throughput at high concurrency.

``--processes`` adds a side ``processes``: the trajudge run with ``--engine processes``
(:class:`trajudge.judges.ProcessEngine`, one worker process per CPU), its workers started by
the warm-up run (the ``warm-up`` time printed includes their start: spawning a Python process
that imports litellm) and kept for the timed runs, as the other sides' imports and clients
are; its CPU seconds include its workers'.

``--before REF`` adds the code of a git ref (``git archive REF src`` into a temporary folder)
as a third side, ``before``, so that old and new code are measured in the same rounds.
``--profile`` then runs each trajudge side once more under cProfile and prints the top entries
of the first run and the cached re-run.

Run: ``LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONPATH=src .venv/bin/python
benchmarks/judge_batch.py --before main --profile`` (about 5 minutes on two loaded cores).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

# the sides' module (this folder, first on sys.path when run as a script)
from _judge_batch_sides import BASELINES, ROOT, serve, server_calls, side_main, write_data


# -- the parent -------------------------------------------------------------------------------
def spawn(
    side: str, src: Path, folder: Path, api_base: str, conc: int, profile: bool, repeat: int = 1
) -> Any:
    cmd = [sys.executable, __file__, "--side", side, "--data", str(folder)]
    cmd += ["--api-base", api_base, "--concurrency", str(conc), "--repeat", str(repeat)]
    if profile:
        cmd.append("--profile")
    env = {**os.environ, "PYTHONPATH": str(src), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"side {side} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def export_ref(ref: str, into: Path) -> Path:
    """The ``src`` folder of git ref ``ref``, extracted under ``into``."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", help="git ref of the code to compare with (e.g. main)")
    parser.add_argument("--repeat", type=int, default=1, help="first runs per side process")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--frozen", action="store_true", help="add the bare loop with gc.freeze as a baseline"
    )
    parser.add_argument(
        "--latency", type=float, default=0.0, help="seconds the fake server waits per answer"
    )
    parser.add_argument(
        "--processes",
        action="store_true",
        help="add trajudge with --engine processes (one worker per CPU) as a side",
    )
    parser.add_argument(
        "--no-local",
        action="store_true",
        help="leave out the trajudge side with the local engine (shorter rounds)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--side", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--api-base", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.latency)
        return 0
    if args.side:
        side_main(args)
        return 0

    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--latency", str(args.latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None and server.stdin is not None
    api_base = server.stdout.readline().strip()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            write_data(folder, args.n, args.concurrency, api_base)
            sides = {"plain": ROOT / "src"}
            if not args.no_local:
                sides["trajudge"] = ROOT / "src"
            if args.frozen:
                sides["frozen"] = ROOT / "src"
            if args.processes:
                sides["processes"] = ROOT / "src"
            if args.before:
                sides["before"] = export_ref(args.before, folder / "before")
            return report(args, sides, folder, api_base)
    finally:
        server.stdin.close()
        server.wait(30)


def median_interval(values: list[float]) -> tuple[float, float, float]:
    """A distribution-free interval of the median of ``values`` and its coverage: the order
    statistics x(k), x(n-k+1) with the largest k that keeps the coverage >= 95% (the number
    of values below the median is Binomial(n, 1/2)); with fewer than 6 values, the range."""
    xs, n = sorted(values), len(values)
    tail = [math.comb(n, i) / 2**n for i in range(n + 1)]
    k = 1
    while k < n // 2 and 2 * sum(tail[: k + 1]) <= 0.05:
        k += 1
    cover = 1 - 2 * sum(tail[:k])
    return xs[k - 1], xs[n - k], cover


def report(args: argparse.Namespace, sides: dict[str, Path], folder: Path, api_base: str) -> int:
    names = list(sides)
    print(
        f"{args.n} pointwise calls, concurrency {args.concurrency}, fake server {api_base} in its "
        f"own process, {args.rounds} rounds, sides {', '.join(names)}"
    )
    results: dict[str, list[dict[str, Any]]] = {s: [] for s in names}
    prompts: dict[str, list[str]] = {}
    for r in range(args.rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for side in order:
            res = spawn(side, sides[side], folder, api_base, args.concurrency, False, args.repeat)
            digests = server_calls(api_base, res["since"])["messages_sha256"][: args.n]
            prompts.setdefault(side, sorted(digests))
            if sorted(digests) != prompts["plain" if "plain" in prompts else side]:
                print(f"  WARNING: {side} sent other prompts than plain")
            results[side].append(res)
            line = f"  round {r + 1} {side:9s} first {res['first_s']:7.3f} s"
            if args.repeat > 1:
                line += f" (best of {args.repeat} {res['best_s']:.3f} s)"
            if side not in BASELINES:
                line += (
                    f"  stored re-run {res['stored_s']:.3f} s"
                    f"  cached re-run {res['cached_s']:.3f} s  (judged {res['first_judged']},"
                    f" errors {res['first_errors']}, re-run calls {res['rerun_calls']},"
                    f" resumed {res['stored_resumed']}, hits {res['cached_hits']};"
                    f" warm-up {res['warm_s']:.1f} s)"
                )
            print(line, flush=True)
    med = {s: statistics.median(x["first_s"] for x in results[s]) for s in names}
    print()
    bases = [b for b in BASELINES if b in names]
    for side in names:
        if side in BASELINES:
            continue
        for base in bases:

            def per_round(field: str, side: str = side, base: str = base) -> list[float]:
                """``base`` / ``side`` of ``field`` in each round (> 1: ``side`` is faster)."""
                return [
                    p[field] / s[field] for p, s in zip(results[base], results[side], strict=True)
                ]

            ratios, cpu = per_round("first_s"), per_round("first_cpu_s")
            lo, hi, cover = median_interval(ratios)
            print(
                f"{side}: throughput / {base} litellm = {statistics.median(ratios):.3f} "
                f"[{lo:.2f}, {hi:.2f}] ({cover:.0%} interval of the median) "
                f"(median of rounds {', '.join(f'{r:.2f}' for r in ratios)}; medians "
                f"{med[base]:.3f} s {base} vs {med[side]:.3f} s; goal >= 0.95); CPU seconds "
                f"{base} / {side} = {statistics.median(cpu):.3f}"
            )
            if args.repeat > 1:
                best = per_round("best_s")
                print(
                    f"{side}: throughput / {base} litellm, best of {args.repeat} runs per "
                    f"process = {statistics.median(best):.3f} (median of rounds "
                    f"{', '.join(f'{b:.2f}' for b in best)}); CPU seconds = "
                    f"{statistics.median(per_round('best_cpu_s')):.3f}"
                )
        stored = [x["stored_s"] / x["first_s"] for x in results[side]]
        cached = [x["cached_s"] / x["first_s"] for x in results[side]]
        print(
            f"{side}: re-run / first run: all stored {statistics.median(stored):.4f} "
            f"(1/{1 / statistics.median(stored):.0f}), all cached into a new dataset "
            f"{statistics.median(cached):.4f} "
            f"(1/{1 / statistics.median(cached):.0f}) (goal <= 0.02 = 1/50)"
        )
    if args.profile:
        for side in names:
            res = spawn(side, sides[side], folder, api_base, args.concurrency, True)
            phases = ("first",) if side in BASELINES else ("first", "cached", "stored")
            for phase in phases:
                print(f"\n===== profile: {side}, {phase} run ({res[f'{phase}_s']:.3f} s) =====")
                print(res["profiles"][phase])
    return 0


if __name__ == "__main__":
    sys.exit(main())
