"""Verdict sources: one table of per-trajectory success for each way of saying "pass".

The report computes pass@k and pass^k side by side for the environment outcome, the rule
gates, each judge and the human labels. This module turns what the store holds into the
plain frame that :func:`trajudge.calibration.reliability` takes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from trajudge.evalset import Fingerprint, detect_boundary_tags, fingerprint
from trajudge.judges import render_trajectory
from trajudge.report._aligned_rows import aligned_rows
from trajudge.store import Store
from trajudge.trajectories import InputError, Trajectory

USAGE_COLUMNS = ["steps", "tokens", "cost_usd", "latency_s"]


def trajectory_frame(trajectories: list[Trajectory]) -> pd.DataFrame:
    """One row per trajectory: ids, outcome, intent and usage figures."""
    rows = [
        {
            "trajectory_id": t.id,
            "task_id": t.task_id,
            "trial": t.trial,
            "intent": t.intent,
            "outcome": t.outcome,
            "steps": len(t.steps),
            "tokens": t.usage.total_tokens,
            "cost_usd": t.usage.cost_usd,
            "latency_s": t.usage.latency_s,
            "turns": t.usage.turns,
        }
        for t in trajectories
    ]
    cols = ["trajectory_id", "task_id", "trial", "intent", "outcome", *USAGE_COLUMNS, "turns"]
    return pd.DataFrame(rows, columns=cols)


def verdict_frame(store: Store, dataset: str, source: str = "outcome") -> pd.DataFrame:
    """Per-trajectory success for a verdict source.

    ``source`` is ``outcome`` (the environment's ground truth) or ``rules`` (every gate
    check passed; needs ``trajudge check`` first). The returned frame has the columns of
    :func:`trajectory_frame` plus ``success`` (True / False / None when unknown).
    """
    store.require_dataset(dataset)
    frame = trajectory_frame(store.trajectories(dataset))
    if source == "outcome":
        frame["success"] = frame["outcome"].astype(object)
    elif source == "rules":
        results = store.rule_results(dataset)
        if not results:
            raise InputError(
                store.url, None, "source", f"no rule results for {dataset!r}: run trajudge check"
            )
        frame["success"] = [
            results[i]["gates_passed"] if i in results else None for i in frame["trajectory_id"]
        ]
    else:
        raise InputError(store.url, None, "source", f"unknown source {source!r} (outcome or rules)")
    return frame


def render_length(trajectory: Trajectory) -> int:
    """Characters of the trajectory as rendered for a judge (:func:`render_trajectory`).

    This is the ``length`` the verbosity probe uses: what the judge actually saw, outputs
    capped as in the judge prompt, not the raw step count.
    """
    return len(render_trajectory(trajectory, label="A"))


def _none(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


@dataclass(frozen=True)
class StoreInputs:
    """What :func:`store_inputs` read from the store, in the shape ``analyze`` takes.

    ``judgments`` has one row per pointwise or reference judge call (``item`` is the
    trajectory id; errored rows kept, with their error); ``labels`` the chosen label source
    with adjudicated items resolved to the adjudication; ``raw_labels`` the labels before
    adjudication (for the human ceiling); ``trajectories`` one row per trajectory
    (:func:`trajectory_frame`) with ``gates_passed`` (None where no rule result is stored);
    ``notes`` says what was set aside and why (nothing is dropped without a note);
    ``aligned`` the aligned judges whose calls are among ``judgments`` (see
    :mod:`trajudge.report._aligned_rows`).
    """

    judgments: pd.DataFrame
    labels: pd.DataFrame
    raw_labels: pd.DataFrame
    trajectories: pd.DataFrame
    has_rules: bool
    fingerprint: Fingerprint
    notes: list[str] = field(default_factory=list)
    aligned: list[dict[str, Any]] = field(default_factory=list)  # aligned judges applied


_JUDGMENT_COLUMNS = [
    "item",
    "judge",
    "rubric_id",
    "order",
    "sample",
    "score",
    "verdict",
    "error",
    "latency_s",
    "cost_usd",
    "prompt_tokens",
    "completion_tokens",
    "length",
    "task_id",
    "trial",
    "agent_model",
    "judge_model",
    "judge_api_base",
    "judge_config_sha256",
]
_LABEL_COLUMNS = ["item", "annotator", "label", "rubric_id"]


def _applicable(raw: pd.DataFrame, records: Sequence[dict[str, Any]], dataset: str) -> list[Any]:
    """The aligned judges that speak about this dataset: judged under their name, or fitted
    here on a judge that is here."""
    names = set(raw["judge"])
    return [
        r
        for r in records
        if r["name"] in names or (r["dataset"] == dataset and r["base_judge"] in names)
    ]


def _judgments(
    store: Store,
    dataset: str,
    trajs: pd.DataFrame,
    notes: list[str],
    raw: pd.DataFrame,
    aligned: list[dict[str, Any]],
) -> pd.DataFrame:
    if aligned:
        task_of = trajs.set_index("trajectory_id")["task_id"]
        raw = aligned_rows(raw, aligned, dataset, task_of, notes)
    if raw.empty:
        return pd.DataFrame(columns=_JUDGMENT_COLUMNS)
    pairwise = raw[raw["mode"] == "pairwise"]
    for judge, n in pairwise.groupby("judge").size().items():
        notes.append(
            f"judge {judge!r}: {n} pairwise judgments are not compared with per-trajectory "
            "labels and have no pass/fail verdict; they are left out of this report"
        )
    rows = raw[raw["mode"] != "pairwise"]
    known = set(trajs["trajectory_id"])
    unknown = rows[~rows["trajectory_id"].isin(known)]
    if len(unknown):
        first = unknown.iloc[0]
        raise InputError(
            store.url,
            f"judgment {first['id']}",
            "trajectory_id",
            f"{first['trajectory_id']!r} is not a trajectory of dataset {dataset!r}",
        )
    rows = _one_configuration(rows, notes)
    key = ["trajectory_id", "judge", "rubric_id", "order", "sample"]
    dup = rows.duplicated(key, keep="last")  # ordered by id: the newest call wins
    if dup.any():
        for judge, n in rows[dup].groupby("judge").size().items():
            notes.append(
                f"judge {judge!r}: {n} older judgments of the same trajectory, order and "
                "sample (an earlier rubric version) were superseded by the newest"
            )
        rows = rows[~dup]
    info = trajs.set_index("trajectory_id")
    out = pd.DataFrame(
        {
            "item": rows["trajectory_id"].astype(str),
            "judge": rows["judge"].astype(str),
            "rubric_id": rows["rubric_id"].astype(str),
            "order": rows["order"],
            "sample": rows["sample"],
            "score": rows["score"],
            "verdict": rows["verdict"].where(rows["error"].isna()),
            "error": rows["error"],
            "latency_s": rows["latency_s"],
            "cost_usd": rows["cost_usd"],
            "prompt_tokens": rows["prompt_tokens"],
            "completion_tokens": rows["completion_tokens"],
            "judge_model": rows["model"],
            "judge_api_base": [_config(c).get("api_base") for c in rows["judge_config"]],
            "judge_config_sha256": rows["config_sha256"].map(_none),
        }
    )
    for col in ("length", "task_id", "trial", "agent_model"):
        out[col] = out["item"].map(info[col]).to_numpy()
    return out.reset_index(drop=True)[_JUDGMENT_COLUMNS]


def _config(text: Any) -> dict[str, Any]:
    return json.loads(text) if isinstance(text, str) else {}


def _one_configuration(rows: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """The judgments of each judge (and rubric) under ONE configuration: the newest.

    A judge name whose model, endpoint or parameters changed holds judgments of several
    configurations; figures mixing them would describe no judge. The configuration of the
    newest judgment is kept, and a note says what was left out (rows stored before
    configurations were recorded count as one configuration, "unrecorded").
    """
    if rows.empty:
        return rows
    config = rows["config_sha256"].map(lambda v: "unrecorded" if _none(v) is None else str(v))
    keep = pd.Series(True, index=rows.index)
    for (judge, rubric), group in rows.groupby(["judge", "rubric_id"], sort=True):
        configs = config.loc[group.index]
        if configs.nunique() < 2:
            continue
        newest = group.loc[group["id"] == group["id"].max()].iloc[0]
        chosen = config.loc[newest.name]
        dropped = configs[configs != chosen]
        keep.loc[dropped.index] = False
        info = _config(newest["judge_config"])
        others = ", ".join(sorted(str(c)[:12] for c in dropped.unique()))
        notes.append(
            f"judge {judge!r} (rubric {rubric}): judgments under {configs.nunique()} "
            f"configurations; this report uses the newest, {chosen[:12]} (model "
            f"{newest['model']}, api_base {info.get('api_base')}), and leaves out "
            f"{len(dropped)} judgments of {others}"
        )
    return rows[keep]


def _labels(
    store: Store, dataset: str, source: str, known: set[str], notes: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    raw = store.labels_frame(dataset, source=source)
    if raw.empty:
        empty = pd.DataFrame(columns=_LABEL_COLUMNS)
        return empty, empty.copy()
    unknown = raw[~raw["trajectory_id"].isin(known)]
    if len(unknown):
        first = unknown.iloc[0]
        raise InputError(
            store.url,
            f"label {first['id']}",
            "trajectory_id",
            f"{first['trajectory_id']!r} is not a trajectory of dataset {dataset!r}",
        )
    frame = pd.DataFrame(
        {
            "item": raw["trajectory_id"].astype(str),
            "annotator": raw["annotator"].astype(str),
            "label": [
                None if bool(s) else _none(v)
                for v, s in zip(raw["value"], raw["skipped"], strict=True)
            ],
            "rubric_id": raw["rubric_id"].astype(str),
            "adjudication": raw["adjudication"].astype(bool),
        }
    )
    plain = frame[~frame["adjudication"]]
    adjudicated = frame[frame["adjudication"] & frame["label"].notna()]
    if adjudicated.empty:
        return plain[_LABEL_COLUMNS].reset_index(drop=True), plain[_LABEL_COLUMNS].copy()
    decided = set(zip(adjudicated["item"], adjudicated["rubric_id"], strict=True))
    keep = [(i, r) not in decided for i, r in zip(plain["item"], plain["rubric_id"], strict=True)]
    resolved = pd.concat(
        [plain[keep], adjudicated.assign(annotator="adjudication:" + adjudicated["annotator"])]
    )
    notes.append(
        f"{len(decided)} adjudicated items: the adjudicated label stands for the consensus; "
        "the ceiling uses the labellers' own labels"
    )
    return resolved[_LABEL_COLUMNS].reset_index(drop=True), plain[_LABEL_COLUMNS].copy()


def store_inputs(
    store: Store,
    dataset: str,
    *,
    label_source: str = "human",
    aligned: Sequence[dict[str, Any]] | None = (),
) -> StoreInputs:
    """Read judgments, labels, trajectories and gate results of a dataset for the report.

    ``aligned``: aligned-judge records to apply (None: every aligned judge in the store); the
    ones judged under their name here, or fitted here on a judge that is here, are.
    """
    store.require_dataset(dataset)
    trajectories = store.trajectories(dataset)
    trajs = trajectory_frame(trajectories)
    trajs["length"] = [render_length(t) for t in trajectories]
    trajs["agent_model"] = [_none(t.metadata.get("model")) for t in trajectories]
    trajs["tags"] = [detect_boundary_tags(t) for t in trajectories]
    results = store.rule_results(dataset)
    trajs["gates_passed"] = [
        results[i]["gates_passed"] if i in results else None for i in trajs["trajectory_id"]
    ]
    notes: list[str] = []
    records = store.aligned_judges() if aligned is None else list(aligned)
    raw = store.judgments_frame(dataset)
    applied = _applicable(raw, records, dataset) if records else []
    judgments = _judgments(store, dataset, trajs, notes, raw, applied)
    labels, raw_labels = _labels(store, dataset, label_source, set(trajs["trajectory_id"]), notes)
    if results:
        missing = int(trajs["gates_passed"].isna().sum())
        if missing:
            notes.append(
                f"{missing} trajectories have no rule result (run trajudge check): no gate "
                "is applied to them"
            )
    fp = fingerprint(trajectories)
    return StoreInputs(judgments, labels, raw_labels, trajs, bool(results), fp, notes, applied)
