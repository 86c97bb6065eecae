"""Verdict sources: one table of per-trajectory success for each way of saying "pass".

The report computes pass@k and pass^k side by side for the environment outcome, the rule
gates, each judge and the human labels. This module turns what the store holds into the
plain frame that :func:`trajudge.calibration.reliability` takes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from trajudge.core import InputError
from trajudge.evalset import Fingerprint, detect_boundary_tags, fingerprint
from trajudge.judges import render_trajectory
from trajudge.report._aligned_rows import aligned_rows
from trajudge.rubrics._kinds import pairwise_verdict
from trajudge.store import Store
from trajudge.trajectories import Trajectory

USAGE_COLUMNS = ["steps", "tokens", "cost_usd", "latency_s"]


_COLUMNS = ["trajectory_id", "task_id", "trial", "intent", "outcome", *USAGE_COLUMNS, "turns"]


def _row(t: Trajectory) -> dict[str, Any]:
    return {
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


def trajectory_frame(trajectories: Iterable[Trajectory]) -> pd.DataFrame:
    """One row per trajectory: ids, outcome, intent and usage figures.

    ``trajectories`` is read once, one at a time (e.g. ``Store.iter_trajectories``): only the
    rows are kept, never the trajectories.
    """
    return pd.DataFrame([_row(t) for t in trajectories], columns=_COLUMNS)


def verdict_frame(store: Store, dataset: str, source: str = "outcome") -> pd.DataFrame:
    """Per-trajectory success for a verdict source.

    ``source`` is ``outcome`` (the environment's ground truth) or ``rules`` (every gate
    check passed; needs ``trajudge check`` first). The returned frame has the columns of
    :func:`trajectory_frame` plus ``success`` (True / False / None when unknown).
    """
    store.require_dataset(dataset)
    frame = trajectory_frame(store.iter_trajectories(dataset))
    if source == "outcome":
        frame["success"] = frame["outcome"].astype(object)
    elif source == "rules":
        gates = store.gate_results(dataset)
        if not gates:
            raise InputError(
                store.url,
                field="source",
                reason=f"no rule results for {dataset!r}: run trajudge check",
            )
        frame["success"] = [gates.get(i) for i in frame["trajectory_id"]]
    else:
        raise InputError(
            store.url, field="source", reason=f"unknown source {source!r} (outcome or rules)"
        )
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
    ``notes`` says what was set aside and why (nothing is dropped without a note).
    ``pair_judgments`` / ``pair_labels`` hold the pairwise judges' calls and the pair labels
    (``item`` a pair of trajectories, :func:`pair_item`; verdicts A/B/tie in the original
    numbering), ``category_judgments`` / ``category_labels`` those of nominal rubrics;
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
    pair_judgments: pd.DataFrame = field(default_factory=pd.DataFrame)
    pair_labels: pd.DataFrame = field(default_factory=pd.DataFrame)
    category_judgments: pd.DataFrame = field(default_factory=pd.DataFrame)
    category_labels: pd.DataFrame = field(default_factory=pd.DataFrame)
    aligned: list[dict[str, Any]] = field(default_factory=list)  # aligned judges applied


_JUDGMENT_COLUMNS = [
    "item",
    "judge",
    "rubric_id",
    "order",
    "sample",
    "score",
    "expected_score",
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
_CATEGORICAL_COLUMNS = [
    "item", "judge", "rubric_id", "mode", "order", "sample", "verdict", "error",
    "cost_usd", "latency_s", "task_id", "system_a", "system_b", "judge_model",
    "judge_api_base", "judge_config_sha256",
]  # fmt: skip


def pair_item(trajectory_id: str, other_id: str) -> str:
    """The item name of a pair of trajectories in the report: ``"<first> vs <second>"``."""
    return f"{trajectory_id} vs {other_id}"


def system_of(trajectory: Trajectory) -> str:
    """Which system made a trajectory, for pairwise win rates: ``metadata.system`` when the
    importer recorded one, else its trial (``"trial 2"``)."""
    system = trajectory.metadata.get("system")
    return str(system) if system not in (None, "") else f"trial {trajectory.trial}"


def _categorical(rows: pd.DataFrame) -> pd.Series:
    """Which judgments are categorical: pairwise ones, and those of a (judge, rubric) whose
    successful calls carry a verdict but no score (a nominal scale)."""
    pairwise = rows["mode"] == "pairwise"
    ok = rows["error"].isna()
    named = ok & rows["score"].isna() & rows["verdict"].notna()
    scored = ok & rows["score"].notna()
    groups = rows.assign(named=named, scored=scored).groupby(["judge", "rubric_id"])
    nominal = groups["named"].transform("any") & ~groups["scored"].transform("any")
    return pairwise | (nominal & (rows["mode"] == "pointwise"))


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
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The numeric judgments (one per call, as ``analyze`` takes them) and the categorical
    ones (pairwise and nominal), both under one configuration per judge; the calls of
    ``aligned`` judges are added under their names with their verdict rule."""
    if aligned:
        task_of = trajs.set_index("trajectory_id")["task_id"]
        raw = aligned_rows(raw, aligned, dataset, task_of, notes)
    if raw.empty:
        return pd.DataFrame(columns=_JUDGMENT_COLUMNS), pd.DataFrame(columns=_CATEGORICAL_COLUMNS)
    categorical = _categorical(raw)
    cats = _categorical_rows(raw[categorical], trajs, notes)
    rows = raw[~categorical]
    known = set(trajs["trajectory_id"])
    unknown = rows[~rows["trajectory_id"].isin(known)]
    if len(unknown):
        first = unknown.iloc[0]
        raise InputError(
            store.url,
            record=f"judgment {first['id']}",
            field="trajectory_id",
            reason=f"{first['trajectory_id']!r} is not a trajectory of dataset {dataset!r}",
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
            # from token log-probabilities (judges with ``logprobs``), else NaN
            "expected_score": rows["expected_score"].astype(float),
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
    return out.reset_index(drop=True)[_JUDGMENT_COLUMNS], cats


def _categorical_rows(rows: pd.DataFrame, trajs: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """Pairwise and nominal calls as the categorical analysis takes them: ``item`` the
    trajectory (nominal) or the pair (pairwise), ``verdict`` A/B/tie (stored ``win`` /
    ``loss`` read as A / B) or the category; ``system_a`` / ``system_b`` for win rates."""
    cols = _CATEGORICAL_COLUMNS
    if rows.empty:
        return pd.DataFrame(columns=cols)
    known = set(trajs["trajectory_id"])
    for col in ("trajectory_id", "other_id"):
        bad = rows[rows[col].notna() & ~rows[col].isin(known)]
        if len(bad):
            first = bad.iloc[0]
            raise InputError(
                "judgments",
                record=f"judgment {first['id']}",
                field=col,
                reason=f"{first[col]!r} is not a trajectory of this dataset",
            )
    rows = _one_configuration(rows, notes)
    key = ["trajectory_id", "other_id", "judge", "rubric_id", "order", "sample"]
    rows = rows[~rows.fillna({"other_id": ""}).duplicated(key, keep="last")]
    info = trajs.set_index("trajectory_id")
    pair = rows["mode"] == "pairwise"
    item = [
        pair_item(t, o) if p else t
        for t, o, p in zip(rows["trajectory_id"], rows["other_id"], pair, strict=True)
    ]
    systems = info["system"] if "system" in info else pd.Series(dtype=object)
    out = pd.DataFrame(
        {
            "item": item,
            "judge": rows["judge"].astype(str),
            "rubric_id": rows["rubric_id"].astype(str),
            "mode": rows["mode"],
            "order": rows["order"],
            "sample": rows["sample"],
            "verdict": [
                None if e is not None and not pd.isna(e) else _verdict(v, p)
                for v, e, p in zip(rows["verdict"], rows["error"], pair, strict=True)
            ],
            "error": rows["error"],
            "cost_usd": rows["cost_usd"],
            "latency_s": rows["latency_s"],
            "task_id": rows["trajectory_id"].map(info["task_id"]).to_numpy(),
            "system_a": rows["trajectory_id"].map(systems).where(pair, None).to_numpy(),
            "system_b": rows["other_id"].map(systems).where(pair, None).to_numpy(),
            "judge_model": rows["model"],
            "judge_api_base": [_config(c).get("api_base") for c in rows["judge_config"]],
            "judge_config_sha256": rows["config_sha256"].map(_none),
        }
    )
    return out.reset_index(drop=True)[cols]


def _verdict(value: Any, pairwise: bool) -> str | None:
    if _none(value) is None:
        return None
    if pairwise:
        return pairwise_verdict(value)
    return str(value)


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
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Numeric labels (adjudications resolved), the labellers' own, and the category
    labels of nominal rubrics (resolved the same way)."""
    raw = store.labels_frame(dataset, source=source)
    if raw.empty:
        empty = pd.DataFrame(columns=_LABEL_COLUMNS)
        return empty, empty.copy(), empty.copy()
    unknown = raw[~raw["trajectory_id"].isin(known)]
    if len(unknown):
        first = unknown.iloc[0]
        raise InputError(
            store.url,
            record=f"label {first['id']}",
            field="trajectory_id",
            reason=f"{first['trajectory_id']!r} is not a trajectory of dataset {dataset!r}",
        )
    # a rubric whose labels carry a category is nominal: its labels are categories
    named = raw.groupby("rubric_id")["category"].transform(lambda c: c.notna().any())
    cats = _resolve(raw[named], "category", notes)[0]
    raw = raw[~named]
    if raw.empty:
        empty = pd.DataFrame(columns=_LABEL_COLUMNS)
        return empty, empty.copy(), cats
    resolved, plain = _resolve(raw, "value", notes)
    return resolved, plain, cats


def _resolve(raw: pd.DataFrame, column: str, notes: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Labels with adjudicated items resolved to the adjudication, and the labellers' own
    (``item``: the trajectory, or the pair when the rows name an ``other_id``)."""
    if "other_id" in raw:
        items = [
            pair_item(t, o) for t, o in zip(raw["trajectory_id"], raw["other_id"], strict=True)
        ]
    else:
        items = raw["trajectory_id"].astype(str).tolist()
    frame = pd.DataFrame(
        {
            "item": items,
            "annotator": raw["annotator"].astype(str),
            "label": [
                None if bool(s) else _none(v)
                for v, s in zip(raw[column], raw["skipped"], strict=True)
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
    gates: Collection[str] = ("gate",),
) -> StoreInputs:
    """Read judgments, labels, trajectories and gate results of a dataset for the report.

    ``gates``: the rule severities that gate (:meth:`Store.gate_results`).

    ``aligned``: aligned-judge records to apply (None: every aligned judge in the store); the
    ones judged under their name here, or fitted here on a judge that is here, are.
    """
    store.require_dataset(dataset)
    rows: list[dict[str, Any]] = []

    def each() -> Iterator[Trajectory]:
        # one pass over the store: each trajectory becomes a row, then feeds the fingerprint,
        # so memory holds the rows and one trajectory, never the dataset
        for t in store.iter_trajectories(dataset):
            row = _row(t)
            row["system"] = system_of(t)
            row["length"] = render_length(t)
            row["agent_model"] = _none(t.metadata.get("model"))
            row["tags"] = detect_boundary_tags(t)
            # what the per-slice agreement reads: the tool set and the scalar metadata
            row["tools"] = "+".join(sorted({s.tool for s in t.steps})) or "no tool"
            row["meta"] = {
                k: v for k, v in t.metadata.items() if isinstance(v, str | int | float | bool)
            }
            rows.append(row)
            yield t

    fp = fingerprint(each())
    extra = ["system", "length", "agent_model", "tags", "tools", "meta"]
    trajs = pd.DataFrame(rows, columns=[*_COLUMNS, *extra])
    results = store.gate_results(dataset, gates)
    trajs["gates_passed"] = [results.get(i) for i in trajs["trajectory_id"]]
    notes: list[str] = []
    records = store.aligned_judges() if aligned is None else list(aligned)
    raw = store.judgments_frame(dataset)
    applied = _applicable(raw, records, dataset) if records else []
    judgments, categorical = _judgments(store, dataset, trajs, notes, raw, applied)
    known = set(trajs["trajectory_id"])
    labels, raw_labels, cat_labels = _labels(store, dataset, label_source, known, notes)
    pair_labels = _pair_labels(store, dataset, label_source, categorical, notes)
    if results:
        missing = int(trajs["gates_passed"].isna().sum())
        if missing:
            notes.append(
                f"{missing} trajectories have no rule result (run trajudge check): no gate "
                "is applied to them"
            )
    pairwise = categorical["mode"] == "pairwise"
    return StoreInputs(
        judgments,
        labels,
        raw_labels,
        trajs,
        bool(results),
        fp,
        notes,
        pair_judgments=categorical[pairwise].reset_index(drop=True),
        pair_labels=pair_labels,
        category_judgments=categorical[~pairwise].reset_index(drop=True),
        category_labels=cat_labels,
        aligned=applied,
    )


def _pair_labels(
    store: Store, dataset: str, source: str, judged: pd.DataFrame, notes: list[str]
) -> pd.DataFrame:
    """Pair labels with adjudications resolved, each oriented as its pair was judged: a label
    of (b, a) on a pair judged as (a, b) is read with A and B swapped."""
    raw = store.pair_labels_frame(dataset, source=source)
    if raw.empty:
        return pd.DataFrame(columns=_LABEL_COLUMNS)
    judged_pairs = set(judged.loc[judged["mode"] == "pairwise", "item"])
    swap = {"A": "B", "B": "A", "tie": "tie"}
    flip = [
        pair_item(t, o) not in judged_pairs and pair_item(o, t) in judged_pairs
        for t, o in zip(raw["trajectory_id"], raw["other_id"], strict=True)
    ]
    raw = raw.assign(
        trajectory_id=raw["trajectory_id"].where(
            ~pd.Series(flip, index=raw.index), raw["other_id"]
        ),
        other_id=raw["other_id"].where(~pd.Series(flip, index=raw.index), raw["trajectory_id"]),
        category=[swap.get(c, c) if f else c for c, f in zip(raw["category"], flip, strict=True)],
    )
    return _resolve(raw, "category", notes)[0]
