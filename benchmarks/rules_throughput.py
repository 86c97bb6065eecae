"""Rule-check throughput on τ-bench replicated to 100,000 trajectories.

The gpt-4o airline file (200 runs) is copied with shifted trial numbers until it holds N
trajectories, as JSON text in chunks (so the run fits in memory). For each chunk, measured side
by side in one run:

* parse:  ``json.loads`` of the chunk's text (the floor: any reader must at least parse);
* import: ``from_tau_bench`` on the chunk written to a temporary file (reads, parses,
  validates and builds the Trajectory objects and task specs);
* rules:  ``check_dataset`` on the imported trajectories with the stored-style specs
  (reference from the expected actions, in_order), i.e. every check that applies.

It prints wall and CPU seconds for each, and the ratios rules/parse and (import+rules)/parse.
The target is rules/parse <= 1.5. Run: ``.venv/bin/python benchmarks/rules_throughput.py``
(``--n`` and ``--chunk`` to change the size).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from trajudge.rules import check_dataset
from trajudge.trajectories import from_tau_bench

ROOT = Path(__file__).resolve().parents[1]
TAU = ROOT.parent / "shared" / "data" / "tau_bench" / "historical_trajectories"
TAU_FILE = TAU / "gpt-4o-airline.json"


class Clock:
    """Accumulated wall and CPU seconds."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0
        self._w = self._c = 0.0

    def __enter__(self) -> Clock:
        self._w, self._c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter() - self._w
        self.cpu += time.process_time() - self._c


def chunk_text(records: list[dict[str, Any]], copy_from: int, copies: int) -> str:
    """``copies`` copies of the records, trial numbers shifted so every (task, trial) is new."""
    n_trials = 1 + max(r["trial"] for r in records)
    out = []
    for k in range(copy_from, copy_from + copies):
        for r in records:
            out.append({**r, "trial": r["trial"] + k * n_trials})
    return json.dumps(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="trajectories in total")
    parser.add_argument("--chunk", type=int, default=10_000, help="trajectories per chunk")
    args = parser.parse_args()
    if not TAU_FILE.exists():
        print(f"missing {TAU_FILE}", file=sys.stderr)
        return 2
    records = json.loads(TAU_FILE.read_text(encoding="utf-8"))
    per_copy = len(records)
    copies_total = max(1, args.n // per_copy)
    copies_chunk = max(1, args.chunk // per_copy)
    parse, imp, rules = Clock(), Clock(), Clock()
    n_traj = n_results = n_bytes = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tau.json"
        done = 0
        while done < copies_total:
            k = min(copies_chunk, copies_total - done)
            text = chunk_text(records, done, k)
            n_bytes += len(text.encode())
            path.write_text(text, encoding="utf-8")
            with parse:
                parsed = json.loads(text)
            del parsed, text
            with imp:
                trajs, specs = from_tau_bench(path)
            with rules:
                reports = check_dataset(trajs, specs)
            n_traj += len(trajs)
            n_results += sum(len(r.results) for r in reports)
            del trajs, reports
            done += k
    print(f"{n_traj:,} trajectories ({n_bytes / 1e9:.2f} GB of JSON), {n_results:,} check results")
    print(f"{'':8}{'wall s':>10}{'cpu s':>10}{'us/traj (cpu)':>16}")
    for name, c in (("parse", parse), ("import", imp), ("rules", rules)):
        print(f"{name:8}{c.wall:10.2f}{c.cpu:10.2f}{c.cpu / n_traj * 1e6:16.1f}")
    for label, num in (("rules/parse", rules), ("(import+rules)/parse", None)):
        if num is None:
            wall = (imp.wall + rules.wall) / parse.wall
            cpu = (imp.cpu + rules.cpu) / parse.cpu
        else:
            wall, cpu = num.wall / parse.wall, num.cpu / parse.cpu
        print(f"{label:22} wall {wall:5.2f}   cpu {cpu:5.2f}")
    print("target: rules/parse <= 1.5")
    return 0


if __name__ == "__main__":
    sys.exit(main())
