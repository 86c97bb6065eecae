"""Start-up time of ``import trajudge`` and ``trajudge --help`` against ``import pandas``.

Each measure is a fresh interpreter run to the end (wall time, interpreter start included on
every side alike); the measures are interleaved round by round, in a new random order each
round, so machine load falls on all of them, and the medians are compared. The goal is a ratio
of at most 1.0 to ``import pandas``.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/startup_time.py [--rounds 15]
        [--before /path/to/other/checkout/src]

``--before SRC`` runs the two trajudge measures a second time with ``SRC`` (e.g. the main
branch's ``src``) first on the path, in the same rounds, for a before/after comparison.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELP = "import sys; from trajudge.cli import main; sys.argv = ['trajudge', '--help']; main()"


def run_once(code: str, src: Path) -> float:
    """Wall seconds of ``python -c code`` with ``src`` first on the path."""
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "COLUMNS": "120",
    }
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, stdout=subprocess.DEVNULL, cwd=ROOT
    )
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--before", type=Path, default=None, help="another checkout's src")
    args = parser.parse_args()
    src = ROOT / "src"
    measures: dict[str, tuple[str, Path]] = {
        "import pandas": ("import pandas", src),
        "import trajudge": ("import trajudge", src),
        "trajudge --help": (HELP, src),
    }
    if args.before is not None:
        measures["import trajudge (before)"] = ("import trajudge", args.before)
        measures["trajudge --help (before)"] = (HELP, args.before)
    times: dict[str, list[float]] = {name: [] for name in measures}
    for code, path in measures.values():  # warm the file cache, not timed
        run_once(code, path)
    rng = random.Random(0)
    for _ in range(args.rounds):
        order = list(measures)
        rng.shuffle(order)
        for name in order:
            code, path = measures[name]
            times[name].append(run_once(code, path))
    base = statistics.median(times["import pandas"])
    print(f"start-up, median of {args.rounds} interleaved rounds (fresh interpreter each run)")
    print(f"{'measure':28}{'median s':>10}{'/ import pandas':>17}")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:28}{med:10.3f}{med / base:17.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
