"""Provider batch request bodies: from a checked template vs litellm's ``return_raw_request``
for every call (how each body was built before the template).

The batch engine sends, for each call, the very body the local engine's call would send:
litellm's request transformation, run by ``return_raw_request`` without the network. For
Anthropic (which moves the system message out of the messages) it costs 20-70 ms a call, so
the engine builds such bodies from a template checked against litellm's own
(:mod:`trajudge.judges.engines.batch._template`). This builds the bodies of the
pointwise calls on the τ-bench trajectories of ``examples/`` for each model both ways,
alternating in rounds, checks that both ways give the same bodies, and prints the medians and
their ratio. Offline: nothing is sent.

Run: ``LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONPATH=src .venv/bin/python
benchmarks/batch_bodies.py [--calls 100] [--rounds 5]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-benchmark")  # never sent: no call is made

ROOT = Path(__file__).resolve().parents[1]
TAU = ROOT / "examples" / "tau_airline" / "gpt-4o-airline.json"
MODELS = ("anthropic/claude-3-5-haiku-20241022", "anthropic/claude-sonnet-4-5")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from trajudge.judges import Judge, JudgeSpec, ProviderBatchEngine
    from trajudge.store import Store
    from trajudge.trajectories import from_tau_bench

    trajectories, _ = from_tau_bench(TAU)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/s.db")
        print(f"{args.calls} pointwise calls per model, {args.rounds} rounds")
        for model in MODELS:
            spec = JudgeSpec(name="j", model=model, rubric="trajectory_reasonableness")
            judge = Judge(spec)
            calls = [judge.prepare(t)[0] for t in trajectories[: args.calls]]
            times: dict[str, list[float]] = {"template": [], "litellm": []}
            for r in range(args.rounds):
                built: dict[str, list[dict[str, object]]] = {}
                for side in ("template", "litellm") if r % 2 == 0 else ("litellm", "template"):
                    engine = ProviderBatchEngine(store, "ds")  # no template carried over
                    t0 = time.perf_counter()
                    if side == "template":
                        built[side] = [engine.body(c) for c in calls]
                    else:
                        built[side] = [engine.request(c)[0] for c in calls]
                    times[side].append(time.perf_counter() - t0)
                if built["template"] != built["litellm"]:
                    raise SystemExit(f"{model}: the template's bodies differ from litellm's")
            per = {s: statistics.median(v) / len(calls) * 1000 for s, v in times.items()}
            print(
                f"{model}: {per['template']:.2f} ms a body from the template (the first built "
                f"and checked by litellm), {per['litellm']:.2f} ms by litellm each; "
                f"litellm / template = {per['litellm'] / per['template']:.1f}"
            )
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
