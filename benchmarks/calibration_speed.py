"""Calibration speed: 10,000 items x 2 orders x 3 samples, 10,000 bootstrap resamples.

Prints our time (the clustered bootstrap of kappa alone, and the whole ``analyze``), then runs
judgekit's audit (PyPI ``judgekit``, in a separate venv created here if missing, in a
subprocess, on the same verdicts written to JSONL files) and prints the time ratio measured in
this run, and both tools' numbers where they compute the same statistic.

judgekit's ``run_audit`` uses a fixed 1,000 resamples per interval; our figures are given both
at 1,000 (like for like) and at 10,000 resamples.

    .venv/bin/python benchmarks/calibration_speed.py [--items 10000] [--boot 10000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from trajudge.calibration import (
    Estimate,
    SyntheticJudge,
    analyze,
    bootstrap_kappa,
    synthetic_judgments,
    synthetic_labels,
    synthetic_world,
)

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".bench-venvs" / "judgekit"
JUDGEKIT_BOOT = 1000  # fixed inside judgekit.run_audit

WORKER = r"""
import json, sys, time
from judgekit import load_verdicts, run_audit
out = {}
for kind in ("binary", "pairwise"):
    judge = load_verdicts(sys.argv[1] + f".{kind}.judge.jsonl")
    human = load_verdicts(sys.argv[1] + f".{kind}.human.jsonl")
    t = time.perf_counter()
    audit = run_audit(judge, human, seed=0)
    out[kind] = {"seconds": time.perf_counter() - t,
                 "results": {r.name: {"value": r.value, "ci": list(r.ci)} for r in audit.results}}
json.dump(out, open(sys.argv[2], "w"))
"""


def ensure_judgekit() -> Path | None:
    python = VENV / "bin" / "python"
    if python.exists():
        return python
    try:
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "judgekit"], check=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"judgekit could not be installed ({exc}); no comparison")
        return None
    return python


def make_data(n_items: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    world = synthetic_world(n_items, seed=0)
    judge = SyntheticJudge("judge", noise=0.7, position=0.1)
    judgments = synthetic_judgments(world, [judge], samples=3, seed=1)
    judgments["verdict"] = (judgments["score"] >= 4).astype(int)
    judgments = judgments[["item", "judge", "order", "sample", "verdict"]]
    labels = synthetic_labels(world, annotators=1, seed=2)
    labels["label"] = (labels["label"] >= 4).astype(int)
    return judgments, labels


def write_judgekit_files(judgments: pd.DataFrame, labels: pd.DataFrame, stem: str) -> None:
    """The same verdicts as judgekit records: binary (kappa) and pairwise (position probes).

    Pairwise: a pass means the first-listed (canonical) side wins, choice "a"; ``swapped`` is
    order ``ba``; choices are canonical in both orders, as in our tables.
    """
    human = dict(zip(labels["item"], labels["label"], strict=True))
    j, h = judgments.to_dict("records"), list(human.items())
    files = {
        "binary.judge": [{"kind": "binary", "item_id": r["item"], "label": bool(r["verdict"]),
                          "sample_index": r["sample"] + 3 * (r["order"] == "ba")} for r in j],
        "binary.human": [{"kind": "binary", "item_id": i, "judge_id": "human",
                          "label": bool(v)} for i, v in h],
        "pairwise.judge": [{"kind": "pairwise", "item_id": r["item"],
                            "choice": "a" if r["verdict"] else "b", "swapped": r["order"] == "ba",
                            "sample_index": r["sample"]} for r in j],
        "pairwise.human": [{"kind": "pairwise", "item_id": i, "judge_id": "human",
                            "choice": "a" if v else "b"} for i, v in h],
    }  # fmt: skip
    for name, records in files.items():
        with open(f"{stem}.{name}.jsonl", "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in records)


@dataclass
class Ours:
    """trajudge's timings and figures on the benchmark data."""

    kappa_seconds: float
    analyze_seconds: float
    numbers: dict[str, Estimate]
    kappa_alone: Estimate


def ours(judgments: pd.DataFrame, labels: pd.DataFrame, n_boot: int) -> Ours:
    merged = judgments.merge(labels[["item", "label"]], on="item")
    t = time.perf_counter()
    kappa, _ = bootstrap_kappa(merged["label"], merged["verdict"], merged["item"],
                               labels=[0, 1], n_boot=n_boot, seed=0)  # fmt: skip
    t_kappa = time.perf_counter() - t
    t = time.perf_counter()
    report = analyze(judgments, labels, n_boot=n_boot, seed=0).judges["judge"]
    t_all = time.perf_counter() - t
    position = report.probes["position"]
    stability = report.probes["stability"]
    assert position is not None and stability is not None and report.flip_rate is not None
    return Ours(
        kappa_seconds=t_kappa,
        analyze_seconds=t_all,
        numbers={
            "cohen kappa": report.kappa,
            "label accuracy": report.agreement,
            "choice agreement": report.agreement,
            "position preference": position.estimate,
            "swap flip rate": report.flip_rate,
        },
        kappa_alone=kappa,
    )


def _fmt(v: Estimate) -> str:
    return f"{v.value:.6f} [{v.low:.4f}, {v.high:.4f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--boot", type=int, default=10_000)
    args = parser.parse_args()
    judgments, labels = make_data(args.items)
    print(f"data: {args.items} items x 2 orders x 3 samples = {len(judgments)} verdicts")
    big = ours(judgments, labels, args.boot)
    small = ours(judgments, labels, JUDGEKIT_BOOT)
    for n, o in ((args.boot, big), (JUDGEKIT_BOOT, small)):
        print(f"trajudge, {n} resamples: bootstrap kappa {o.kappa_seconds:.2f} s; "
              f"whole analyze (kappa, AC1, rates, 5 bias probes, corrected rate) "
              f"{o.analyze_seconds:.2f} s")  # fmt: skip
    python = ensure_judgekit()
    if python is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        stem = str(Path(tmp) / "verdicts")
        write_judgekit_files(judgments, labels, stem)
        out = Path(tmp) / "judgekit.json"
        t = time.perf_counter()
        subprocess.run([str(python), "-c", WORKER, stem, str(out)], check=True)
        wall = time.perf_counter() - t
        theirs = json.loads(out.read_text())
    audit_s = sum(theirs[k]["seconds"] for k in theirs)
    print(f"judgekit run_audit ({JUDGEKIT_BOOT} resamples, binary + pairwise): {audit_s:.1f} s "
          f"(subprocess wall {wall:.1f} s)")  # fmt: skip
    print(f"ratio judgekit / trajudge at {JUDGEKIT_BOOT} resamples each: "
          f"{audit_s / small.analyze_seconds:.1f}x")  # fmt: skip
    print(f"ratio judgekit ({JUDGEKIT_BOOT}) / trajudge ({args.boot}) resamples: "
          f"{audit_s / big.analyze_seconds:.1f}x")  # fmt: skip
    print(f"\n{'statistic':22s}  {f'trajudge ({args.boot} resamples)':34s}  "
          f"judgekit ({JUDGEKIT_BOOT} resamples)")  # fmt: skip
    results = {**theirs["binary"]["results"], **theirs["pairwise"]["results"]}
    for name, value in big.numbers.items():
        r = results.get(name)
        jk = (
            "not computed"
            if r is None
            else f"{r['value']:.6f} [{r['ci'][0]:.4f}, {r['ci'][1]:.4f}]"
        )
        print(f"{name:22s}  {_fmt(value):34s}  {jk}")
        if r is not None:
            ours_value = value.value
            agree = "equal" if abs(ours_value - r["value"]) < 1e-12 else "DIFFERENT"
            print(
                f"{'':22s}  point estimates {agree} (|diff| = {abs(ours_value - r['value']):.2e})"
            )
    others = sorted(set(results) - set(big.numbers))
    print(f"judgekit-only on these data: {', '.join(others)}")


if __name__ == "__main__":
    main()
