"""The sides of ``judge_batch.py``, each run in its own process: the fake server, the data
they read, a bare litellm loop and trajudge's ``score_dataset``."""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import os
import pstats
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
TAU = ROOT / "examples" / "tau_airline" / "gpt-4o-airline.json"
SPEC = {"name": "bench", "model": "openai/fake", "rubric": "trajectory_reasonableness"}
WARM = 8
#: the sides that are bare litellm loops (the others run trajudge)
BASELINES = ("plain", "frozen")


# -- the fake server, in its own process ------------------------------------------------------
def serve(latency: float) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "judges"))
    from fake_llm import FakeLLM  # type: ignore[import-not-found]  # tests/judges

    server = FakeLLM()
    if latency > 0:
        # a provider's answer takes time: at high concurrency the client, not the server,
        # must be what limits the throughput
        server.default = f"delay:{latency}"
    server.start()
    print(server.api_base, flush=True)
    sys.stdin.read()  # until the parent closes the pipe
    server.stop()


def server_calls(api_base: str, since: int | None = None) -> dict[str, Any]:
    url = api_base.removesuffix("/v1") + "/calls" + (f"?since={since}" if since is not None else "")
    with urllib.request.urlopen(url, timeout=30) as resp:
        out: dict[str, Any] = json.loads(resp.read())
    return out


# -- data (built once by the parent, read by every side) --------------------------------------
def write_data(folder: Path, n: int, concurrency: int, api_base: str) -> None:
    from trajudge.judges import Judge, JudgeSpec, build_prompt, response_schema
    from trajudge.judges.prompts._prompt import Shown
    from trajudge.trajectories import from_tau_bench

    base, _ = from_tau_bench(TAU)
    copies = []
    for k in range(-(-(n + WARM) // len(base))):
        for t in base:
            note = "" if k == 0 else f" (copy {k})"
            copies.append(
                t.model_copy(
                    update={
                        "id": f"{t.id}#{k}",
                        "trial": t.trial + 100 * k,
                        "input": t.input + note,
                    }
                )
            )
    bench, warm = (
        copies[:n],
        [
            t.model_copy(update={"id": f"warm-{t.id}", "input": t.input + " (warm-up)"})
            for t in copies[n : n + WARM]
        ],
    )
    judge = Judge(JudgeSpec(**SPEC, api_base=api_base, concurrency=concurrency))
    budget = judge._budget
    for name, items in (("bench", bench), ("warm", warm)):
        (folder / f"{name}.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in items))
        prompts = [build_prompt(judge.rubric, [Shown(t)], budget_tokens=budget) for t in items]
        (folder / f"{name}-messages.json").write_text(json.dumps([p.messages for p in prompts]))
    schema = response_schema(judge.verdict_model)
    fmt = {
        "type": "json_schema",
        "json_schema": {"name": judge.verdict_model.__name__, "schema": schema},
    }
    (folder / "response_format.json").write_text(json.dumps(fmt))


# -- one side, in a fresh process -------------------------------------------------------------
async def plain_loop(
    messages: list[Any], fmt: dict[str, Any], api_base: str, concurrency: int
) -> int:
    import litellm

    sem = asyncio.Semaphore(concurrency)

    async def one(msgs: list[dict[str, str]]) -> bool:
        async with sem:
            resp = await litellm.acompletion(
                model="openai/fake",
                api_base=api_base,
                api_key="sk-no-key-needed",
                messages=msgs,
                temperature=0.0,
                max_tokens=512,
                response_format=fmt,
            )
        try:
            json.loads(resp.choices[0].message.content)
        except ValueError:
            return False
        return True

    return sum(await asyncio.gather(*(one(m) for m in messages)))


def run_plain(
    folder: Path,
    api_base: str,
    concurrency: int,
    profile: bool = False,
    repeat: int = 1,
    frozen: bool = False,
) -> dict[str, Any]:
    fmt = json.loads((folder / "response_format.json").read_text())
    warm = json.loads((folder / "warm-messages.json").read_text())
    bench = json.loads((folder / "bench-messages.json").read_text())
    asyncio.run(plain_loop(warm, fmt, api_base, concurrency))
    before = server_calls(api_base)["calls"]
    if frozen:
        gc.freeze()  # what trajudge's batch runner does around a batch
    prof = cProfile.Profile() if profile else None
    runs: list[tuple[float, float]] = []
    ok = 0
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        if prof is not None:
            prof.enable()
        ok = asyncio.run(plain_loop(bench, fmt, api_base, concurrency))
        if prof is not None:
            prof.disable()
        runs.append((time.perf_counter() - t0, time.process_time() - c0))
    first, cpu = runs[0]
    out = {"first_s": first, "first_cpu_s": cpu, "parsed": ok, "since": before}
    out["best_s"], out["best_cpu_s"] = min(runs)
    if prof is not None:
        out["profiles"] = {"first": _top(prof)}
    return out


def _top(prof: cProfile.Profile) -> str:
    text = io.StringIO()
    stats = pstats.Stats(prof, stream=text).strip_dirs()
    stats.sort_stats("tottime").print_stats(14)
    stats.sort_stats("cumulative").print_stats(18)
    return text.getvalue()


def run_trajudge(
    folder: Path,
    api_base: str,
    concurrency: int,
    profile: bool = False,
    repeat: int = 1,
    processes: bool = False,
) -> dict[str, Any]:
    from trajudge.judges import Judge, JudgeSpec, ProcessEngine, ResponseCache, score_dataset
    from trajudge.store import Store

    # --engine processes: workers started by the warm-up run and kept for the timed runs
    # (as the other sides' imports and clients are), stopped at the end
    engine = ProcessEngine(concurrency, keep_workers=True) if processes else None

    def cpu_now() -> float:
        """CPU seconds of this process and of the engine's workers (alive, not yet reaped:
        ``process_time`` would miss them)."""
        total = time.process_time()
        for pid in engine.pids() if engine is not None else []:
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
        return total

    from trajudge.trajectories import Trajectory

    def load(name: str) -> list[Trajectory]:
        lines = (folder / f"{name}.jsonl").read_text().splitlines()
        return [Trajectory.model_validate_json(line) for line in lines]

    bench, warm = load("bench"), load("warm")
    spec = JudgeSpec(**SPEC, api_base=api_base, concurrency=concurrency)
    out: dict[str, Any] = {}
    profiles: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/bench.db")
        store.import_dataset("warm", warm)
        store.import_dataset("bench", bench)
        store.import_dataset("copy", bench)
        cache = ResponseCache(Path(tmp) / "cache.db")
        t0 = time.perf_counter()
        score_dataset(
            store, "warm", [Judge(spec, cache=cache)], concurrency=concurrency, engine=engine
        )
        out["warm_s"] = time.perf_counter() - t0

        def timed(phase: str, dataset: str) -> Any:
            judge = Judge(spec, cache=cache)  # a new judge per run, as a new `trajudge judge`
            prof = cProfile.Profile() if profile else None
            t0, c0 = time.perf_counter(), cpu_now()
            if prof is not None:
                prof.enable()
            summary = score_dataset(store, dataset, [judge], concurrency=concurrency, engine=engine)
            if prof is not None:
                prof.disable()
            out[f"{phase}_s"] = time.perf_counter() - t0
            out[f"{phase}_cpu_s"] = cpu_now() - c0
            if prof is not None:
                profiles[phase] = _top(prof)
            return summary

        out["since"] = server_calls(api_base)["calls"]
        runs = []
        for k in range(1, repeat):  # earlier first runs, each into a store and cache of its own
            with tempfile.TemporaryDirectory() as other:
                fresh = Store(f"sqlite:///{other}/bench.db")
                fresh.import_dataset("bench", bench)
                fresh_cache = ResponseCache(Path(other) / "cache.db")
                t0, c0 = time.perf_counter(), cpu_now()
                done = score_dataset(
                    fresh,
                    "bench",
                    [Judge(spec, cache=fresh_cache)],
                    concurrency=concurrency,
                    engine=engine,
                )
                runs.append((time.perf_counter() - t0, cpu_now() - c0))
                assert done.judged == len(bench), f"repeat {k}: {done}"
                fresh.close()
                fresh_cache.close()
        first = timed("first", "bench")
        runs.append((out["first_s"], out["first_cpu_s"]))
        out["best_s"], out["best_cpu_s"] = min(runs)
        mid = server_calls(api_base)["calls"]
        stored = timed("stored", "bench")
        cached = timed("cached", "copy")
        out["rerun_calls"] = server_calls(api_base)["calls"] - mid
        out["first_judged"], out["first_errors"] = first.judged, first.errors
        out["stored_resumed"], out["cached_hits"] = stored.resumed, cached.cache_hits
        store.close()
        cache.close()
    if engine is not None:
        engine.close()
    if profile:
        out["profiles"] = profiles
    return out


def side_main(args: argparse.Namespace) -> None:
    folder = Path(args.data)
    if args.side in ("plain", "frozen"):
        result = run_plain(
            folder,
            args.api_base,
            args.concurrency,
            args.profile,
            args.repeat,
            frozen=args.side == "frozen",
        )
    else:
        result = run_trajudge(
            folder,
            args.api_base,
            args.concurrency,
            args.profile,
            args.repeat,
            processes=args.side == "processes",
        )
    print(json.dumps(result))
