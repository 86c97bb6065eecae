"""Rule checks on a million Parquet trajectories: today's path against the fast one (issue 29).

The data are those of ``scale.py``: ``--n`` generated trajectories (default 1,000,000; varied
tools, loops, errors, nine task specs with gates, budgets and a reference) written with
``write_parquet`` in row groups of 10,000. Each side checks the file with
:func:`trajudge.rules.check_parquet` in a fresh process, one after the other:

- ``before``: the code of ``--before REF`` (``git archive REF src`` into a temporary folder;
  default: the tree before this work), one process reading pydantic models;
- ``one``: this tree, ``workers=1``: lean rows, one process;
- ``all``: this tree, ``workers=None``: lean rows, one spawned process per CPU.

Printed per side: seconds, seconds per 100k, CPU seconds of the process tree, and peak RSS of
the process tree (the side's process plus its workers, sampled every 0.2 s from /proc via
psutil; shared pages are counted once per process, so the sum overstates). Then the ratios
against ``before`` and whether every summary is identical (floats included; checked, as the
report files are with ``--reports``, which also writes and times them). Goals: ``all`` under
60 s on 1M on a 2-core machine, peak RSS under 1 GB.

Run (about 10 minutes on a quiet 2-core machine, most of it the ``before`` side and writing
the file): ``PYTHONPATH=src .venv/bin/python benchmarks/rules_million.py``; ``--n 200000``
for a shorter run, ``--sides one,all`` to leave out the old code, ``--keep DIR`` to write the
file once into DIR and reuse it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from judge_batch import export_ref
from scale import SPEC_YAML, PeakRSS, trajectories

# the last commit before the fast path (lean rows, worker processes)
BEFORE = "4aa61e3c23b386a549cf02b00aa051298771ed29"
SIDES = ("before", "one", "all")


def side(name: str, data: Path, reports: bool) -> dict[str, Any]:
    """Check the file as side ``name`` in this process (and its workers)."""
    from trajudge.rules import check_parquet, load_specs, resolve_specs

    tasks, defaults = resolve_specs({}, load_specs(data / "spec.yaml"))
    kw: dict[str, Any] = {}
    if name != "before":  # the old check_parquet has no ``workers``
        kw["workers"] = 1 if name == "one" else None
    if reports:
        kw["out"] = data / f"reports-{name}.parquet"
    with PeakRSS(tree=True) as rss:
        t0 = time.perf_counter()
        summary = check_parquet(data / "runs.parquet", tasks, defaults, **kw)
        elapsed = time.perf_counter() - t0
    cpu = sum(
        getattr(resource.getrusage(who), part)
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        for part in ("ru_utime", "ru_stime")
    )
    return {"elapsed_s": elapsed, "cpu_s": cpu, "rss_tree": rss.total, "summary": summary.to_dict()}


def run_side(name: str, data: Path, src: Path, reports: bool) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--side", name, "--data", str(data)]
    if reports:
        cmd.append("--reports")
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"side {name} failed:\n{proc.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def write_data(folder: Path, n: int) -> None:
    from trajudge.trajectories import parquet_blocks, write_parquet

    runs = folder / "runs.parquet"
    (folder / "spec.yaml").write_text(SPEC_YAML)
    if runs.exists() and sum(b[2] for b in parquet_blocks(runs)) == n:
        print(f"{n:,} trajectories: reusing {runs}", flush=True)
        return
    t0 = time.perf_counter()
    write_parquet(runs, trajectories(n))
    print(
        f"{n:,} trajectories written in {time.perf_counter() - t0:.0f} s "
        f"({runs.stat().st_size / 1e6:.0f} MB Parquet, row groups of 10,000)",
        flush=True,
    )


def measure(args: argparse.Namespace, folder: Path) -> None:
    import pyarrow.parquet as pq

    write_data(folder, args.n)
    here = Path(__file__).resolve().parents[1] / "src"
    sides = [s for s in SIDES if s in args.sides.split(",")]
    res: dict[str, dict[str, Any]] = {}
    for name in sides:
        src = export_ref(args.before, folder / "before") if name == "before" else here
        res[name] = r = run_side(name, folder, src, args.reports)
        print(
            f"{name:6}: {r['elapsed_s']:6.1f} s, {r['elapsed_s'] / args.n * 1e5:5.2f} s per 100k, "
            f"CPU {r['cpu_s']:6.1f} s, peak RSS {r['rss_tree'] / 2**20:5.0f} MiB (process tree)",
            flush=True,
        )
    if "before" in res:
        base = res["before"]["elapsed_s"]
        print(
            "ratio before/side: "
            + ", ".join(f"{s} {base / res[s]['elapsed_s']:.1f}x" for s in sides if s != "before"),
            flush=True,
        )
    first = res[sides[0]]["summary"]
    same = all(r["summary"] == first for r in res.values())
    line = f"summaries identical: {same}"
    if args.reports:
        tables = [pq.read_table(folder / f"reports-{s}.parquet") for s in sides]
        line += f"; report files identical: {all(t.equals(tables[0]) for t in tables)}"
    print(
        f"{line}; {first['trajectories']:,} checked, {first['gate_failures']:,} with a "
        f"failed gate; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end",
        flush=True,
    )
    if not same:
        raise SystemExit(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="trajectories")
    parser.add_argument("--sides", default=",".join(SIDES), help="of before, one, all")
    parser.add_argument("--before", default=BEFORE, help="git ref of today's path")
    parser.add_argument("--reports", action="store_true", help="also write report files")
    parser.add_argument("--keep", help="folder for the data file, reused when it holds --n")
    parser.add_argument("--side", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        print(json.dumps(side(args.side, Path(args.data), args.reports)))
        return 0
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        measure(args, Path(args.keep))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        measure(args, Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
