"""Converters from the public judge-evaluation datasets in ../shared/data to trajudge tables.

Test helpers only: the tables are written under a test's tmp_path and never copied into the
project (Auto-J, JudgeBench and FairEval have no stated licence).

Pairwise verdicts are mapped onto one 3-level scale, in canonical orientation (verdicts given
in the swapped order are mapped back): 2 = the first-listed response is better, 1 = tie,
0 = the second is better. A verdict the source could not parse becomes an errored judgment.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

LLMBAR_SETS = (
    "LLMBar/Natural",
    "LLMBar/Adversarial/Neighbor",
    "LLMBar/Adversarial/GPTInst",
    "LLMBar/Adversarial/GPTOut",
    "LLMBar/Adversarial/Manual",
    "Processed/FairEval",
    "Processed/LLMEval^2",
    "Processed/MT-Bench",
)
JUDGEBENCH_FILES = {
    "o1-mini": "dataset=judgebench,response_model=gpt-4o-2024-05-13,judge_name=arena_hard,"
    "judge_model=o1-mini-2024-09-12.jsonl",
    "claude-3-haiku": "dataset=judgebench,response_model=claude-3-5-sonnet-20240620,"
    "judge_name=arena_hard,judge_model=claude-3-haiku-20240307.jsonl",
}


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _judgment(item: str, judge: str, order: str, score: float | None, **extra: Any) -> dict:
    row = {"item": item, "judge": judge, "order": order, "sample": 0, "score": score}
    if score is None:
        row["error"] = "unparsed verdict"
    return {**row, **extra}


def llmbar_evaluators(set_dir: Path) -> list[Path]:
    """The ``evaluators/<model>/<strategy>`` folders holding a result.json."""
    return sorted(p.parent for p in set_dir.glob("evaluators/*/*/result.json"))


def llmbar_tables(set_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Judgments (one judge per evaluator/strategy) and gold labels of one LLMBar set.

    ``winner`` "1" is a pass (output_1 better), "2" a fail, null an errored judgment; in
    ``swap = True`` the winner is already mapped back (evaluate.py), so both orders are
    canonical. The gold label 1 is a pass.
    """
    rows, labels = [], None
    for ev in llmbar_evaluators(set_dir):
        judge = f"{ev.parent.name}/{ev.name}"
        records = _load(ev / "result.json")
        if labels is None:
            labels = pd.DataFrame(
                {
                    "item": [f"i{i}" for i in range(len(records))],
                    "annotator": "gold",
                    "label": [1 if r["label"] == 1 else 0 for r in records],
                }
            )
        for i, rec in enumerate(records):
            res = rec["results"][-1]
            for order, key in (("ab", "swap = False"), ("ba", "swap = True")):
                w = res[key]["winner"]
                verdict = None if w is None else (1 if w == "1" else 0)
                rows.append(_judgment(f"i{i}", judge, order, verdict, judge_model=ev.parent.name))
    assert labels is not None
    return pd.DataFrame(rows), labels


_AUTOJ = {0: 2, 1: 0, 2: 1}  # label / output: 0 first better, 1 second better, 2 tie
_AUTOJ_SWAPPED = {0: 0, 1: 2, 2: 1}  # swapped output: 0 = the originally second is better


def autoj_tables(root: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Auto-J's verdicts in both orders and the human labels (with ties), on the 3-level scale."""
    test = _jsonl(root / "data/test/testdata_pairwise.jsonl")
    orig = _jsonl(root / "data/outputs/pairwise_example_output.jsonl")
    swap = _jsonl(root / "data/outputs/pairwise_exchange_example_output.jsonl")
    rows = []
    for i, (o, s) in enumerate(zip(orig, swap, strict=True)):
        rows.append(_judgment(f"p{i}", "auto-j", "ab", _AUTOJ[o["output"]]))
        rows.append(_judgment(f"p{i}", "auto-j", "ba", _AUTOJ_SWAPPED[s["output"]]))
    labels = pd.DataFrame(
        {
            "item": [f"p{i}" for i in range(len(test))],
            "annotator": "human",
            "label": [_AUTOJ[r["label"]] for r in test],
        }
    )
    return pd.DataFrame(rows), labels


_PANDA = {1: 2, 2: 0, 0: 1}  # annotator / pandalm: 1 first better, 2 second better, 0 tie
_PANDA_GPT = {"1": 2, "2": 0, "Tie": 1}


def pandalm_tables(root: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """GPT-3.5 and PandaLM-7B verdicts (one order) and three annotators' labels."""
    test = _load(root / "data/testset-v1.json")
    gpt = {r["idx"]: r["gpt_result"] for r in _load(root / "data/gpt-3.5-turbo-testset-v1.json")}
    panda = {r["idx"]: r["pandalm_result"] for r in _load(root / "data/pandalm-7b-testset-v1.json")}
    rows, labels = [], []
    for rec in test:
        item = f"x{rec['idx']}"
        rows.append(_judgment(item, "gpt-3.5-turbo", "ab", _PANDA_GPT.get(gpt[rec["idx"]])))
        rows.append(_judgment(item, "pandalm-7b", "ab", _PANDA[panda[rec["idx"]]]))
        for a in ("annotator1", "annotator2", "annotator3"):
            labels.append({"item": item, "annotator": a, "label": _PANDA[rec[a]]})
    return pd.DataFrame(rows), pd.DataFrame(labels)


_JB = {"A>B": 2, "A=B": 1, "B>A": 0}
_JB_SWAPPED = {"A>B": 0, "A=B": 1, "B>A": 2}  # judgments[1] showed B first, not mapped back


def judgebench_tables(root: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both Arena-Hard judges' verdicts in both orders, and the objective labels."""
    rows, labels = [], []
    for judge, name in JUDGEBENCH_FILES.items():
        for rec in _jsonl(root / "outputs" / name):
            item = f"{judge}:{rec['pair_id']}"
            first, second = (j["decision"] for j in rec["judgments"])
            meta = {"agent_model": rec["response_model"], "judge_model": judge}
            rows.append(_judgment(item, judge, "ab", _JB.get(first), **meta))
            rows.append(_judgment(item, judge, "ba", _JB_SWAPPED.get(second), **meta))
            labels.append({"item": item, "annotator": "objective", "label": _JB[rec["label"]]})
    return pd.DataFrame(rows), pd.DataFrame(labels)
