"""Scale: rule checks on a million trajectories, and judging throughput, local vs Ray.

Two measurements of issue 14, each side in a fresh subprocess, side by side in one run:

1. **rules**: ``--n`` generated trajectories (default 1,000,000; varied tools, loops, errors,
   nine task specs with gates, budgets and references) written with ``write_parquet`` (row
   groups of 10,000), then checked with :func:`trajudge.rules.check_parquet` on the local
   engine and on Ray (a local cluster of ``--cpus`` CPUs started by the side, not timed).
   Printed: seconds per 100k trajectories, and peak RSS: of the process for the local side;
   for Ray, of the driver and of the driver plus every process of the cluster together
   (sampled every 0.2 s from /proc via psutil; shared pages are counted once per process, so
   the sum overstates). Goal: peak RSS under 2 GB on the 1M file. The two summaries must be
   equal (checked).
2. **judging**: ``--calls`` pointwise calls against the fake OpenAI-compatible server of the
   tests (``tests/judges/fake_llm.py``, in a process of its own; it answers at once), all at
   the same total concurrency ``--concurrency``: a bare ``litellm.acompletion`` loop under a
   semaphore (``plain``), ``score_dataset`` on the local engine (``local``) and on the Ray
   engine (``ray``: a local cluster of ``--cpus`` CPUs, one worker per CPU). Every side warms
   up first (8 calls of other prompts; for Ray the same engine with ``keep_workers`` so its
   workers' start-up is not timed, and is printed apart). Rounds rotate the order; medians
   are printed with the ratios ray/local (goal >= 0.9) and local/plain.

Run: ``LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONPATH=src .venv/bin/python benchmarks/scale.py``
(``--n 200000`` for a shorter run).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))

from _judge_batch_sides import plain_loop, server_calls  # noqa: E402

TOOLS = ("search", "lookup", "book", "cancel", "refund", "delete_account", "email", "pay")
SPEC_YAML = """
defaults:
  high_risk_tools: [cancel, refund]
  max_failure_rate: 0.5
  budgets: {max_steps: 12}
tasks:
  t0: {forbidden_tools: [delete_account]}
  t1: {required_tools: [book], pass_threshold: 0.5}
  t2: {reference: [{tool: search, args: {q: 0}}, {tool: book}]}
  t3: {forbidden_tools: [pay], loop_threshold: 3}
  t4: {approval_tools: [refund]}
"""


# -- data -------------------------------------------------------------------------------------
def trajectories(n: int) -> Iterator[Any]:
    from trajudge.trajectories import Step, Trajectory

    for i in range(n):
        k = 1 + (i * 7919) % 9
        tools = [TOOLS[(i + j * j) % len(TOOLS)] for j in range(k)]
        if i % 11 == 0:
            tools += [tools[-1]] * 3
        yield Trajectory(
            id=f"r{i}",
            task_id=f"t{i % 97}",
            trial=i // 97,
            input=f"request {i % 1000}",
            steps=[
                Step(
                    tool=t,
                    args={"q": i % 5, "n": j},
                    output=f"result {i % 13}",
                    error="timeout" if (i + j) % 17 == 0 else None,
                )
                for j, t in enumerate(tools)
            ],
            final_answer="done",
            outcome=i % 3 == 0,
        )


# -- rules side -------------------------------------------------------------------------------
class PeakRSS:
    """Peak RSS of this process, and of this process plus its descendants (sampled)."""

    def __init__(self, tree: bool) -> None:
        import psutil  # type: ignore[import-untyped]

        self.proc = psutil.Process()
        self.tree = tree
        self.own = 0
        self.total = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        import psutil

        own = self.proc.memory_info().rss
        total = own
        if self.tree:
            for child in self.proc.children(recursive=True):
                with contextlib.suppress(psutil.Error):  # a process that just ended
                    total += child.memory_info().rss
        self.own, self.total = max(self.own, own), max(self.total, total)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self._sample()

    def __enter__(self) -> PeakRSS:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def rules_side(engine: str, data: Path, cpus: int) -> dict[str, Any]:
    from trajudge.rules import check_parquet, load_specs, resolve_specs

    tasks, defaults = resolve_specs({}, load_specs(data / "spec.yaml"))
    if engine == "ray":
        import ray

        ray.init(num_cpus=cpus, include_dashboard=False, logging_level=logging.WARNING)
        ray.get(ray.remote(lambda: 0).remote())  # the cluster is up (not timed)
    with PeakRSS(tree=engine == "ray") as rss:
        t0 = time.perf_counter()
        summary = check_parquet(
            data / "runs.parquet",
            tasks,
            defaults,
            engine="ray" if engine == "ray" else "local",
        )
        elapsed = time.perf_counter() - t0
    return {
        "elapsed_s": elapsed,
        "rss_own": rss.own,
        "rss_tree": rss.total,
        "summary": summary.to_dict(),
    }


# -- judging sides ----------------------------------------------------------------------------
def write_judge_data(folder: Path, calls: int, api_base: str) -> None:
    from trajudge.judges import Judge, JudgeSpec, build_prompt, response_schema
    from trajudge.judges.prompts._prompt import Shown

    items = list(trajectories(calls + 8))
    bench, warm = items[:calls], items[calls:]
    judge = Judge(JudgeSpec(**judge_spec(api_base, 1)))
    for name, group in (("bench", bench), ("warm", warm)):
        (folder / f"{name}.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in group))
        prompts = [
            build_prompt(judge.rubric, [Shown(t)], budget_tokens=judge._budget) for t in group
        ]
        (folder / f"{name}-messages.json").write_text(json.dumps([p.messages for p in prompts]))
    schema = response_schema(judge.verdict_model)
    fmt = {
        "type": "json_schema",
        "json_schema": {"name": judge.verdict_model.__name__, "schema": schema},
    }
    (folder / "response_format.json").write_text(json.dumps(fmt))


def judge_spec(api_base: str, concurrency: int) -> dict[str, Any]:
    return {
        "name": "bench",
        "model": "openai/fake",
        "rubric": "trajectory_reasonableness",
        "api_base": api_base,
        "concurrency": concurrency,
    }


def judge_side(side: str, data: Path, api_base: str, conc: int, cpus: int) -> dict[str, Any]:
    if side == "plain":
        fmt = json.loads((data / "response_format.json").read_text())
        warm = json.loads((data / "warm-messages.json").read_text())
        bench = json.loads((data / "bench-messages.json").read_text())
        asyncio.run(plain_loop(warm, fmt, api_base, conc))
        t0 = time.perf_counter()
        ok = asyncio.run(plain_loop(bench, fmt, api_base, conc))
        return {"elapsed_s": time.perf_counter() - t0, "ok": ok}

    from trajudge.judges import Judge, JudgeSpec, LocalEngine, RayEngine, score_dataset
    from trajudge.store import Store
    from trajudge.trajectories import read_jsonl

    store = Store(f"sqlite:///{data / f'{side}-{os.getpid()}.db'}")
    store.import_dataset("warm", read_jsonl(data / "warm.jsonl"))
    store.import_dataset("bench", read_jsonl(data / "bench.jsonl"))
    out: dict[str, Any] = {}
    engine: Any
    if side == "ray":
        import ray

        ray.init(num_cpus=cpus, include_dashboard=False, logging_level=logging.WARNING)
        engine = RayEngine(conc, keep_workers=True)
    else:
        engine = LocalEngine(conc)
    judge = Judge(JudgeSpec(**judge_spec(api_base, conc)))
    t0 = time.perf_counter()
    score_dataset(store, "warm", [judge], engine=engine)
    out["warm_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    summary = score_dataset(store, "bench", [judge], engine=engine)
    out["elapsed_s"] = time.perf_counter() - t0
    out["ok"] = summary.judged
    if isinstance(engine, RayEngine):
        engine.close()
    return out


# -- driver -----------------------------------------------------------------------------------
def spawn(args: list[str]) -> dict[str, Any]:
    cmd = [sys.executable, __file__, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"side {args} failed:\n{proc.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def serve() -> None:
    sys.path.insert(0, str(ROOT / "tests" / "judges"))
    from fake_llm import FakeLLM  # type: ignore[import-not-found]  # tests/judges

    server = FakeLLM().start()
    print(server.api_base, flush=True)
    sys.stdin.read()
    server.stop()


def run_rules(args: argparse.Namespace, folder: Path) -> None:
    from trajudge.trajectories import write_parquet

    (folder / "spec.yaml").write_text(SPEC_YAML)
    t0 = time.perf_counter()
    write_parquet(folder / "runs.parquet", trajectories(args.n))
    size = (folder / "runs.parquet").stat().st_size
    print(
        f"rules: {args.n:,} trajectories written in {time.perf_counter() - t0:.0f} s "
        f"({size / 1e6:.0f} MB Parquet)",
        flush=True,
    )
    res = {}
    for engine in ("local", "ray"):
        res[engine] = spawn(
            ["--rules-side", engine, "--data", str(folder), "--cpus", str(args.cpus)]
        )
        r = res[engine]
        per = r["elapsed_s"] / args.n * 100_000
        rss = f"peak RSS {r['rss_own'] / 2**20:.0f} MiB"
        if engine == "ray":
            rss += f" (driver), {r['rss_tree'] / 2**20:.0f} MiB (driver + cluster processes)"
        print(f"rules {engine:5}: {r['elapsed_s']:.1f} s, {per:.2f} s per 100k, {rss}", flush=True)
    same = res["local"]["summary"] == res["ray"]["summary"]
    s = res["local"]["summary"]
    print(
        f"rules: summaries identical: {same}; {s['trajectories']:,} checked, "
        f"{s['gate_failures']:,} with a failed gate; time ray/local = "
        f"{res['ray']['elapsed_s'] / res['local']['elapsed_s']:.2f}",
        flush=True,
    )


def run_judging(args: argparse.Namespace, folder: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None and server.stdin is not None
    api_base = server.stdout.readline().strip()
    try:
        write_judge_data(folder, args.calls, api_base)
        sides = ["plain", "local", "ray"]
        rates: dict[str, list[float]] = {s: [] for s in sides}
        warm: list[float] = []
        for rnd in range(args.rounds):
            order = sides[rnd % 3 :] + sides[: rnd % 3]
            for side in order:
                before = server_calls(api_base)["calls"]
                r = spawn(
                    [
                        "--judge-side",
                        side,
                        "--data",
                        str(folder),
                        "--api-base",
                        api_base,
                        "--concurrency",
                        str(args.concurrency),
                        "--cpus",
                        str(args.cpus),
                    ]
                )
                made = server_calls(api_base)["calls"] - before
                assert r["ok"] == args.calls and made == args.calls + 8, (side, r, made)
                rates[side].append(args.calls / r["elapsed_s"])
                if side == "ray":
                    warm.append(r["warm_s"])
            print(
                f"judging round {rnd + 1}: "
                + ", ".join(f"{s} {rates[s][-1]:.0f} calls/s" for s in sides),
                flush=True,
            )
        med = {s: statistics.median(v) for s, v in rates.items()}
        print(
            f"judging ({args.calls} calls, concurrency {args.concurrency}, medians of "
            f"{args.rounds}): plain {med['plain']:.0f}/s, local {med['local']:.0f}/s, "
            f"ray {med['ray']:.0f}/s; ray/local = {med['ray'] / med['local']:.2f} "
            f"(goal >= 0.9), local/plain = {med['local'] / med['plain']:.2f}, "
            f"ray/plain = {med['ray'] / med['plain']:.2f}; Ray workers' start-up (8 warm-up "
            f"calls, not timed above) {statistics.median(warm):.1f} s",
            flush=True,
        )
    finally:
        server.stdin.close()
        server.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="trajectories for the rules")
    parser.add_argument("--calls", type=int, default=2000, help="judge calls per side")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--skip", choices=("rules", "judging"))
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rules-side", help=argparse.SUPPRESS)
    parser.add_argument("--judge-side", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--api-base", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0
    if args.rules_side:
        print(json.dumps(rules_side(args.rules_side, Path(args.data), args.cpus)))
        return 0
    if args.judge_side:
        out = judge_side(
            args.judge_side, Path(args.data), args.api_base, args.concurrency, args.cpus
        )
        print(json.dumps(out))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        if args.skip != "judging":
            run_judging(args, Path(tmp))
        if args.skip != "rules":
            run_rules(args, Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
