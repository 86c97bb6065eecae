"""The ``fewshot`` method: dev disagreements become worked examples; the holdout is re-scored.

Only labelled DEV items are ever candidates (:func:`select_examples` reads nothing else), so
no holdout item can become an example. The new rubric (a new version) makes a new judge
configuration; its calls on the holdout go through the normal batch runner (gates, cache,
resume, every judgment stored as it completes) under the aligned judge's name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from trajudge.alignment._compare import VerdictComparison, compare_verdicts
from trajudge.alignment._items import JudgeItems, target_score
from trajudge.calibration import item_means
from trajudge.judges import (
    BatchProgress,
    BatchSummary,
    Example,
    Judge,
    JudgeSpec,
    ResponseCache,
    estimate_tokens,
    example_text,
    score_dataset,
    with_examples,
    write_rubric,
)
from trajudge.store import Store
from trajudge.trajectories import TaskSpec


def select_examples(items: pd.DataFrame, *, max_examples: int) -> pd.DataFrame:
    """The labelled DEV items whose verdict (as it stands) disagrees with the label.

    Judged-pass label-fails and judged-fail label-passes alternate (the kind with more
    items first), each kind from the most confidently wrong (largest ``|vote_share -
    label|``: the share of the judge's calls that contradicted the label) down; ties by item
    id. At most ``max_examples``. Nothing but labelled dev rows is read.
    """
    dev = items[(items["split"] == "dev") & items["label"].notna()]
    wrong = dev[dev["verdict"] != dev["label"]].copy()
    wrong["miss"] = (wrong["vote_share"] - wrong["label"]).abs()
    wrong = wrong.sort_values(["miss", "item"], ascending=[False, True], kind="stable")
    kinds = [wrong[wrong["label"] == 0], wrong[wrong["label"] == 1]]
    kinds.sort(key=len, reverse=True)
    picked: list[Any] = []
    for i in range(max(len(k) for k in kinds) if len(wrong) else 0):
        for k in kinds:
            if i < len(k) and len(picked) < max_examples:
                picked.append(k.index[i])
    return wrong.loc[picked].drop(columns="miss")


@dataclass
class FewshotResult:
    """The few-shot rubric, its calls on the holdout and the comparison with the judge."""

    rubric_path: Path
    rubric_version: str
    config_sha256: str
    examples: list[str]  # dev item ids
    tasks: list[str]  # holdout tasks re-scored
    batch: BatchSummary
    after: pd.Series  # item -> 0/1 verdict of the few-shot judge
    scores: pd.Series  # item -> its order-balanced mean score
    comparison: VerdictComparison | None
    n_items: int
    n_calls: int = 0  # its stored calls on those tasks (this run's or an earlier one's)
    n_errors: int = 0  # of which errored (never scored)


def _notes(
    store: Store, dataset: str, rubric_id: str, source: str, ids: list[str]
) -> dict[str, str]:
    frame = store.labels_frame(dataset, rubric_id=rubric_id, source=source)
    frame = frame[frame["trajectory_id"].isin(ids) & frame["note"].notna()]
    out: dict[str, str] = {}
    for tid, group in frame.groupby("trajectory_id"):
        notes = [str(n).strip() for n in group["note"] if str(n).strip()]
        out[str(tid)] = "; ".join(dict.fromkeys(notes))
    return out


def holdout_tasks(items: pd.DataFrame, cap: int | None) -> list[str]:
    """Labelled holdout tasks, in a fixed pseudo-random order (SHA-256 of the task id), at
    most ``cap`` of them."""
    hold = items[(items["split"] == "holdout") & items["label"].notna()]
    tasks = sorted(
        {str(t) for t in hold["task_id"]}, key=lambda t: hashlib.sha256(t.encode()).hexdigest()
    )
    return tasks if cap is None else tasks[:cap]


def run_fewshot(
    store: Store,
    dataset: str,
    data: JudgeItems,
    spec: JudgeSpec,
    *,
    name: str,
    label_source: str,
    max_examples: int,
    example_chars: int,
    max_holdout_tasks: int | None,
    rubric_out: Path,
    specs: Mapping[str, TaskSpec] | None,
    spec_defaults: TaskSpec | None,
    gates: Collection[str],
    cache: ResponseCache | None,
    progress: Callable[[BatchProgress], None] | None,
    n_boot: int,
    seed: int,
) -> FewshotResult:
    """Build the few-shot rubric from dev disagreements, score the (capped) labelled holdout
    tasks with it, and compare its verdicts with the judge's on the items both have.

    The few-shot judge is ``spec`` under ``name`` with the new rubric; a spec with a fixed
    ``prompt_budget`` gets the examples' estimated tokens added to it, so that the shown
    trajectory keeps the room it had (outputs are not elided further to make way for them).
    """
    items = data.items
    chosen = select_examples(items, max_examples=max_examples)
    if chosen.empty:
        raise ValueError("the judge agrees with every labelled dev item: no example to add")
    ids = [str(i) for i in chosen["item"]]
    notes = _notes(store, dataset, data.label_rubric, label_source, ids)
    trajs = {t.id: t for t in store.trajectories(dataset, ids=ids)}
    examples = []
    for _, row in chosen.iterrows():
        tid = str(row["item"])
        passed = float(row["label"])
        examples.append(
            Example(
                input=example_text(trajs[tid], note=notes.get(tid), max_chars=example_chars),
                score=target_score(data.rubric, passed, float(row["label_scale"])),
                reasoning=f"Labelled {'pass' if passed else 'fail'} ({label_source} label).",
            )
        )
    rubric = with_examples(data.rubric, examples, source=f"few-shot rubric of {name}")
    path = write_rubric(rubric, rubric_out)
    update: dict[str, Any] = {"name": name, "rubric": str(path)}
    if spec.prompt_budget is not None:  # the examples must not eat the trajectory's room
        added = sum(estimate_tokens(f"{e.input}{e.reasoning}") + 16 for e in examples)
        update["prompt_budget"] = spec.prompt_budget + added
    judge = Judge(spec.model_copy(update=update), rubric=rubric, cache=cache)
    tasks = holdout_tasks(items, max_holdout_tasks)
    batch = score_dataset(
        store,
        dataset,
        [judge],
        specs=specs,
        spec_defaults=spec_defaults,
        gates=gates,
        tasks=tasks,
        progress=progress,
    )
    every = store.judgments_frame(dataset, name)
    every = every[every["config_sha256"] == judge.config_sha256]
    rows = every[every["error"].isna()]
    calls = pd.DataFrame(
        {
            "item": rows["trajectory_id"],
            "order": rows["order"],
            "score": rows["score"].astype(float),
        }
    )
    scores = item_means(calls, ordinal=True)
    after = data.verdicts(scores)
    hold = items[(items["split"] == "holdout") & items["label"].notna()]
    both = hold[hold["item"].isin(after.index)]
    comparison = None
    if len(both):
        comparison = compare_verdicts(
            both["label"],
            both["verdict"],
            after.reindex(both["item"]).to_numpy(),
            both["task_id"],
            n_boot=n_boot,
            seed=seed,
        )
    return FewshotResult(
        rubric_path=path,
        rubric_version=rubric.version,
        config_sha256=judge.config_sha256,
        examples=ids,
        tasks=tasks,
        batch=batch,
        after=after,
        scores=scores,
        comparison=comparison,
        n_items=len(both),
        n_calls=len(every),
        n_errors=int(every["error"].notna().sum()),
    )
