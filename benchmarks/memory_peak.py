"""Peak memory of ``trajudge import``, ``check`` and ``report`` on 100,000 τ-bench trajectories.

The gpt-4o airline file (200 runs, 50 tasks x 4 trials) is cloned with shifted trial numbers
(so every id, ``{task_id}-{trial}``, is new) into one JSON array of N records, written to a
temporary folder (about 2 GB for 100,000), never into the repository. Each command then runs
in its own process, as a user runs it, on a temporary SQLite store:

    trajudge import FILE --dataset tau
    trajudge check tau
    trajudge report tau

and its peak resident set size (``ru_maxrss`` of that process, from ``os.wait4``) and wall
time are printed, next to the same figure for a bare ``python -c "import pandas"``. The goal
is below 1 GB for each command.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/memory_peak.py [--n 100000] [--keep DIR]
        [--before /path/to/other/checkout/src]

``--keep DIR`` writes the file and the store into DIR and leaves them there (to profile one
command again, e.g. under memray). ``--before SRC`` runs the three commands a second time with
``SRC`` (e.g. the main branch's ``src``) first on the path, on a store of its own, command by
command beside this tree's, for a before/after comparison on the same file.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TAU_FILE = ROOT / "examples" / "tau_airline" / "gpt-4o-airline.json"
GOAL_MB = 1024.0
CLI = "import sys; from trajudge.cli import main; sys.argv[0] = 'trajudge'; sys.exit(main())"


def write_clones(path: Path, n: int) -> int:
    """Write N clones of the τ-bench records as one JSON array; return the bytes written.

    Each record is serialised once without its trial; a clone is that text with a new
    ``"trial"`` member in front, so writing 2 GB takes seconds and little memory.
    """
    records = json.loads(TAU_FILE.read_text(encoding="utf-8"))
    n_trials = 1 + max(r["trial"] for r in records)
    bodies = [
        (r["trial"], json.dumps({k: v for k, v in r.items() if k != "trial"})) for r in records
    ]
    written = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[")
        for i in range(n):
            copy, (trial, body) = divmod(i, len(bodies))[0], bodies[i % len(bodies)]
            text = ("," if i else "") + f'{{"trial": {trial + copy * n_trials}, ' + body[1:]
            written += fh.write(text)
        fh.write("]\n")
    return written + 2


def run(args: list[str], cwd: Path, src: Path) -> tuple[float, float, int]:
    """Run ``python <args>`` to the end with ``src`` first on the path: (peak RSS in MB, wall
    seconds, exit code).

    The child is reaped with ``os.wait4``, whose resource usage is that child's alone.
    """
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "COLUMNS": "120",
    }
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *args], cwd=cwd, env=env, stdout=log, stderr=log)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):  # 1 is a report's failed gate; anything else is a failure
            log.seek(0)
            sys.stderr.write(log.read().decode(errors="replace")[-3000:])
    return usage.ru_maxrss / 1024, wall, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="trajectories")
    parser.add_argument("--keep", type=Path, default=None, help="folder to keep the files in")
    parser.add_argument("--before", type=Path, default=None, help="another checkout's src")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trajudge-mem-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        data = folder / "tau.json"
        sides = [("", ROOT / "src", folder / "store.db")]
        if args.before is not None:
            sides.append((" (before)", args.before, folder / "store-before.db"))
        for _, _, db in sides:
            for stale in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
                stale.unlink(missing_ok=True)
        t0 = time.perf_counter()
        size = write_clones(data, args.n)
        print(
            f"{args.n:,} τ-bench trajectories, {size / 1e9:.2f} GB of JSON "
            f"(written in {time.perf_counter() - t0:.0f} s)"
        )
        steps: list[tuple[str, list[str], Path]] = [
            ("python -c 'import pandas'", ["-c", "import pandas"], ROOT / "src")
        ]
        for command in ("import", "check", "report"):
            for suffix, src, db in sides:
                url = f"sqlite:///{db}"
                argv = {
                    "import": [str(data), "--dataset", "tau"],
                    "check": ["tau"],
                    "report": [
                        "tau",
                        "--out",
                        str(folder / ("report-before" if suffix else "report")),
                    ],
                }[command]
                steps.append(
                    (f"trajudge {command}{suffix}", ["-c", CLI, command, *argv, "--db", url], src)
                )
        print(f"{'command':28}{'peak RSS MB':>12}{'wall s':>9}{'exit':>6}  goal < {GOAL_MB:.0f} MB")
        worst = 0.0
        for label, argv, src in steps:
            peak, wall, code = run(argv, folder, src)
            if label.startswith("trajudge") and not label.endswith("(before)"):
                worst = max(worst, peak)
            print(f"{label:28}{peak:12.0f}{wall:9.1f}{code:6d}", flush=True)
        print(f"largest peak: {worst:.0f} MB ({'met' if worst < GOAL_MB else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
