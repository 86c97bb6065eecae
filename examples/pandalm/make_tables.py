"""Write this folder's tables from PandaLM's human-annotated test set (Apache-2.0, see
LICENSE.pandalm).

    python examples/pandalm/make_tables.py ../shared/data/pandalm/data

reads ``testset-v1.json`` (999 pairs of responses, three human annotators),
``gpt-3.5-turbo-testset-v1.json`` and ``pandalm-7b-testset-v1.json`` (each judge's verdict on
every pair, one presentation order) and writes, in the plain tables ``trajudge calibrate``
reads:

* ``judgments.csv``: ``item, judge, order, sample, verdict``; ``item`` is ``pandalm/IDX``,
  ``verdict`` A (response1 better), B (response2) or tie; GPT-3.5's unparsed answers
  (``garbage``) are left empty, which trajudge reads as a failed call.
* ``labels.csv``: ``item, annotator, label``; the three annotators' labels, 0 -> tie,
  1 -> A, 2 -> B.

The instructions and responses themselves are not copied.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

HUMAN = {0: "tie", 1: "A", 2: "B"}
GPT = {"1": "A", "2": "B", "Tie": "tie", "garbage": ""}


def main(data: Path, out: Path) -> None:
    pairs = json.loads((data / "testset-v1.json").read_text(encoding="utf-8"))
    gpt = json.loads((data / "gpt-3.5-turbo-testset-v1.json").read_text(encoding="utf-8"))
    panda = json.loads((data / "pandalm-7b-testset-v1.json").read_text(encoding="utf-8"))
    with (out / "labels.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["item", "annotator", "label"])
        for p in pairs:
            for a in ("annotator1", "annotator2", "annotator3"):
                w.writerow([f"pandalm/{p['idx']}", a, HUMAN[p[a]]])
    with (out / "judgments.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["item", "judge", "order", "sample", "verdict"])
        for g in gpt:
            w.writerow([f"pandalm/{g['idx']}", "gpt-3.5-turbo", "ab", 0, GPT[g["gpt_result"]]])
        for p in panda:
            w.writerow([f"pandalm/{p['idx']}", "pandalm-7b", "ab", 0, HUMAN[p["pandalm_result"]]])


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(__file__).parent)
