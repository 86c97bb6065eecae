"""The store's judgments and labels as the report's tables: one configuration per judge,
categorical verdicts of pairwise and nominal rubrics apart, labels resolved to one current label
per annotator and item, pair labels matched to the judged order."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from trajudge.core import InputError
from trajudge.report.inputs._aligned_rows import aligned_rows
from trajudge.rubrics._kinds import pairwise_verdict
from trajudge.store import Store
from trajudge.trajectories import Trajectory


def _none(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


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
