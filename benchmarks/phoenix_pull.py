"""Pulling N traces from a Phoenix server, beside exporting the same from Phoenix to a file and
importing that: wall time and peak memory of each step.

A Phoenix server is started in a temporary working directory (SQLite) from the servers' venv
(``.venv-servers/phoenix``, built as the tests build it: ``make servers``), and N traces are
traced into it by the scripted agent run of the tests (``tests/fixtures/traces/
gen_phoenix_run.py``: N/2 conversations of two turns, seven spans each). Then, each in its own
process on a temporary SQLite store:

    pull:    trajudge import phoenix+http://127.0.0.1:PORT/bench
    dump:    Phoenix's own OTLP export of the project (GET /v1/projects/bench/spans/otlpv1,
             a page of 1000 spans at a time) written to an OTLP JSON file
    import:  trajudge import DUMP --format otel

and its wall time and peak resident set size (``ru_maxrss`` of that process, from
``os.wait4``) are printed. Both stores must hold the same trajectories (same ids, same
content hashes): it is checked.

    PYTHONPATH=$PWD/src:$PWD/tests .venv/bin/python benchmarks/phoenix_pull.py [--n 10000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from trajudge.store import Store

ROOT = Path(__file__).resolve().parents[1]
# each child says its own peak at exit: VmHWM of its memory map, which exec starts afresh
# (ru_maxrss, from getrusage or os.wait4, keeps the forking parent's size as a floor)
PEAK = (
    "import atexit, sys; atexit.register(lambda: print('PEAK_KB', next(l.split()[1] for l in "
    "open('/proc/self/status') if l.startswith('VmHWM')), file=sys.stderr));"
)
CLI = PEAK + "from trajudge.cli import main; sys.argv[0] = 'trajudge'; sys.exit(main())"
DUMP = (
    PEAK
    + """
import json, httpx
base, out = sys.argv[1], sys.argv[2]
with open(out, "w") as fh, httpx.Client(timeout=300) as http:
    cursor = None
    while True:
        params = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
        body = http.get(base + "/v1/projects/bench/spans/otlpv1", params=params).json()
        scope = {"scope": {"name": "phoenix"}, "spans": body["data"]}
        fh.write(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [scope]}]}) + "\\n")
        cursor = body.get("next_cursor")
        if not cursor:
            break
"""
)


def run(args: list[str]) -> tuple[float, float]:
    """Run ``python <args>`` to the end: (peak RSS in MB, wall seconds); exits on a failure."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        code = subprocess.run([sys.executable, *args], env=env, stdout=log, stderr=log).returncode
        wall = time.perf_counter() - t0
        log.seek(0)
        lines = log.read().decode(errors="replace").strip().splitlines()
        if code != 0:
            sys.exit(f"failed: {args}\n" + "\n".join(lines[-30:]))
    said = [line for line in lines if not line.startswith("PEAK_KB")]
    print(f"    {said[-1][:160] if said else ''}")
    peak = next(int(line.split()[1]) for line in lines if line.startswith("PEAK_KB"))
    return peak / 1024, wall


def _same(a: Store, b: Store) -> tuple[bool, int]:
    """Whether both stores hold the same trajectories (Phoenix's OTLP export gives times in
    nanoseconds, its span API in microseconds: latency is compared to 2 µs), and how many."""

    def rows(s: Store) -> dict[str, dict[str, Any]]:
        out = {}
        for t in s.iter_trajectories("bench"):
            d = t.model_dump(mode="json")
            d["latency"] = d["usage"].pop("latency_s")
            out[t.id] = d
        s.close()
        return out

    ra, rb = rows(a), rows(b)
    for k in sorted(ra):
        if k in rb and abs(ra[k]["latency"] - rb[k]["latency"]) <= 2e-6:
            rb[k]["latency"] = ra[k]["latency"]
        if ra[k] != rb.get(k):
            diff = [f for f in ra[k] if ra[k][f] != (rb.get(k) or {}).get(f)]
            print(f"first difference: {k}: {diff}")
            break
    return ra == rb, len(ra)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="traces (two per conversation)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from _phoenix import Phoenix, ensure_venv  # type: ignore[import-not-found]

    tmp = Path(tempfile.mkdtemp(prefix="trajudge-bench-phoenix-"))
    (tmp / "phoenix").mkdir()
    server = Phoenix(ensure_venv(), tmp / "phoenix")
    try:
        t0 = time.perf_counter()
        spans = server.trace_run("bench", tmp / "traced.jsonl", n=args.n // 2)
        print(f"traced {args.n // 2 * 2} traces ({spans} spans) into Phoenix in "
              f"{time.perf_counter() - t0:.0f} s")  # fmt: skip
        pull_db, file_db = f"sqlite:///{tmp / 'pull.db'}", f"sqlite:///{tmp / 'file.db'}"
        rows = []
        print("pull:")
        pull = ["-c", CLI, "import", f"phoenix+{server.url}/bench", "--db", pull_db]
        rows.append(("pull (trajudge import phoenix+http://...)", *run(pull)))
        dump = tmp / "dump.jsonl"
        print("dump:")
        rows.append(
            ("dump (Phoenix /spans/otlpv1 to a file)", *run(["-c", DUMP, server.url, str(dump)]))
        )
        print("import:")
        rows.append(("import the file (trajudge import FILE)",
                     *run(["-c", CLI, "import", str(dump), "--format", "otel", "--dataset", "bench",
                           "--db", file_db])))  # fmt: skip
    finally:
        server.stop()
    same, n = _same(Store(pull_db), Store(file_db))
    print(f"\n{n} trajectories from {args.n} traces; the pull and the file give the same "
          f"trajectories: {same}; dump file {dump.stat().st_size / 1e6:.0f} MB")  # fmt: skip
    print(f"{'step':<45} {'wall s':>8} {'peak MB':>9}")
    for name, rss, wall in rows:
        print(f"{name:<45} {wall:>8.1f} {rss:>9.0f}")
    pull_total = rows[0][2]
    file_total = rows[1][2] + rows[2][2]
    print(f"{'pull vs dump + import':<45} {pull_total:>8.1f} vs {file_total:.1f}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
