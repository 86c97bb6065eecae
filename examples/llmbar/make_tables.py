"""Write this folder's tables from LLMBar's evaluator files (MIT, see LICENSE.llmbar).

    python examples/llmbar/make_tables.py ../shared/data/llmbar/Dataset

reads ``LLMBar/{Natural,Adversarial/*}/evaluators/MODEL/STRATEGY/result.json`` and writes, in
the plain tables ``trajudge calibrate`` reads:

* ``judgments.csv``: ``item, judge, order, sample, verdict``; one row per evaluator file,
  instance and order. ``item`` is ``SET/INDEX`` (the instance's index in the set's
  ``dataset.json``), ``judge`` is ``MODEL/STRATEGY``; ``verdict`` A (output_1 better) or B
  (output_2), empty when the evaluator's answer was not parsed (``winner: null``; trajudge
  reads an empty verdict as a failed call). Verdicts of order ``ba`` (``swap = True``) are
  already mapped back to the original numbering upstream (``--ba-mapped``).
* ``labels.csv``: ``item, annotator, label``; the gold label of each instance (annotator
  ``gold``).
* ``statistics/SET/MODEL/STRATEGY.json``: each file's published ``statistics.json``, copied
  byte for byte.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

SETS = [
    "LLMBar/Natural",
    "LLMBar/Adversarial/Neighbor",
    "LLMBar/Adversarial/GPTInst",
    "LLMBar/Adversarial/GPTOut",
    "LLMBar/Adversarial/Manual",
]
WINNER = {"1": "A", "2": "B"}
HERE = Path(__file__).resolve().parent


def short(set_name: str) -> str:
    """``LLMBar/Adversarial/Neighbor`` -> ``Neighbor``."""
    return set_name.rsplit("/", 1)[-1]


def tables(dataset: Path) -> tuple[list[list[str]], list[list[str]], dict[str, Path]]:
    """The judgments and labels rows, and the statistics files by their name here."""
    judgments, labels, stats = [], [], {}
    for set_name in SETS:
        folder = dataset / set_name
        gold = json.loads((folder / "dataset.json").read_text(encoding="utf-8"))
        labels += [[f"{short(set_name)}/{i}", "gold", WINNER[str(r["label"])]]
                   for i, r in enumerate(gold)]  # fmt: skip
        for result in sorted(folder.glob("evaluators/*/*/result.json")):
            model, strategy = result.parent.parent.name, result.parent.name
            records = json.loads(result.read_text(encoding="utf-8"))
            assert len(records) == len(gold), result
            for i, (rec, g) in enumerate(zip(records, gold, strict=True)):
                assert rec["label"] == g["label"], result  # the same instance, in order
                res = rec["results"][-1]
                for order, key in (("ab", "swap = False"), ("ba", "swap = True")):
                    verdict = WINNER.get(str(res[key]["winner"]), "")
                    judgments.append(
                        [f"{short(set_name)}/{i}", f"{model}/{strategy}", order, "0", verdict]
                    )
            name = f"{short(set_name)}/{model}/{strategy}.json"
            stats[name] = result.parent / "statistics.json"
    return judgments, labels, stats


def write(dataset: Path, out: Path = HERE) -> None:
    judgments, labels, stats = tables(dataset)
    for name, header, rows in (
        ("judgments.csv", ["item", "judge", "order", "sample", "verdict"], judgments),
        ("labels.csv", ["item", "annotator", "label"], labels),
    ):
        with (out / name).open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
    for name, src in stats.items():
        dest = out / "statistics" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)


if __name__ == "__main__":
    write(Path(sys.argv[1]))
