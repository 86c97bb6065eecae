"""From the store to one row per item: the judge's features, the label, the split, the rules.

The judge's calls are read as the report reads them (:func:`trajudge.report.store_inputs`:
one configuration per judge, the newest; errored calls kept and left out of every score), and
its per-item score is the report's order-balanced mean (:func:`trajudge.calibration.
item_means`), so a threshold fitted here means in the report what it meant when it was fitted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from trajudge.alignment._features import item_features
from trajudge.calibration import consensus, item_means, label_threshold
from trajudge.core import InputError
from trajudge.evalset import split_of
from trajudge.judges import Rubric, find_rubric
from trajudge.report import store_inputs
from trajudge.store import Store


@dataclass
class JudgeItems:
    """One judge's items, ready for :func:`trajudge.alignment.align`.

    ``items``: one row per trajectory the judge scored (``item, task_id, split, label`` (0/1,
    NaN unlabelled), ``label_scale`` (ordinal labels: their consensus; else NaN), ``score`` (the
    order-balanced mean), ``verdict`` (as it stands), ``expected_score`` when recorded, the
    spread features and one ``rule:<check>`` column per rule check); ``rows``: the judge's
    successful calls (``item, order, sample, score, expected_score``).
    """

    judge: str
    rubric: Rubric
    threshold: float  # a call / mean passes at score >= threshold (0.5 share: binary)
    binary: bool
    items: pd.DataFrame
    rows: pd.DataFrame
    config_sha256: str | None
    label_rubric: str
    rule_columns: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def verdicts(self, score: pd.Series) -> pd.Series:
        """The judge's verdict as it stands from a mean score (the report's rule)."""
        if self.binary:
            return (score > 0.5).astype(float)
        return (score >= self.threshold).astype(float)


def _labels(
    labels: pd.DataFrame, rubric_id: str, human: bool, notes: list[str]
) -> tuple[pd.DataFrame, str]:
    """The labels of the judge's rubric (reference labels of a single other rubric are
    borrowed, as the report does)."""
    mine = labels[labels["rubric_id"] == rubric_id]
    if len(mine) or human:
        return mine, rubric_id
    others = sorted(set(labels["rubric_id"]))
    if len(others) == 1:
        notes.append(
            f"the judge's rubric {rubric_id} is compared with the reference labels of "
            f"rubric {others[0]}"
        )
        return labels, others[0]
    return mine, rubric_id


def _rule_columns(store: Store, dataset: str, ids: pd.Series) -> pd.DataFrame:
    """One column per rule check: its score (its pass when it has none); a check that did not
    run on a trajectory counts as passed (it could not fail)."""
    results = store.rule_results(dataset)
    table: dict[str, dict[str, float]] = {}
    for tid, res in results.items():
        for r in res["data"].get("results", []):
            value = r.get("score")
            value = float(r.get("passed", True)) if value is None else float(value)
            table.setdefault(f"rule:{r['check']}", {})[tid] = value
    return pd.DataFrame({k: ids.map(v).fillna(1.0).to_numpy() for k, v in sorted(table.items())})


def judge_items(
    store: Store,
    dataset: str,
    judge: str,
    *,
    label_source: str,
    dev_share: float,
    salt: str,
    rubric_dirs: Sequence[str] = (),
) -> JudgeItems:
    """Read the judge's calls, the labels and the rule results of a dataset (module
    docstring); :class:`InputError` when the judge has no judgments or its rubric is unknown."""
    inputs = store_inputs(store, dataset, label_source=label_source)
    notes = list(inputs.notes)
    j = inputs.judgments
    rows = j[j["judge"] == judge]
    if rows.empty:
        for kind, frame in (
            ("pairwise", inputs.pair_judgments),
            ("nominal", inputs.category_judgments),
        ):
            if (frame["judge"] == judge).any():
                raise InputError(
                    store.url,
                    field="judge",
                    reason=f"judge {judge!r} gives {kind} verdicts: alignment fits binary and "
                    "ordinal judges (a pass or a fail against the labels)",
                )
        names = ", ".join(sorted(set(j["judge"]))) or "none"
        raise InputError(
            store.url,
            field="judge",
            reason=f"no judgments of judge {judge!r} in dataset {dataset!r} (known: {names})",
        )
    rubric_ids = sorted(set(rows["rubric_id"]))
    if len(rubric_ids) > 1:
        raise InputError(
            store.url,
            field="judge",
            reason=f"judge {judge!r} has judgments of rubrics {rubric_ids}: align one",
        )
    rubric = find_rubric(rubric_ids[0], rubric_dirs)
    if rubric is None:
        raise InputError(
            rubric_ids[0],
            field="rubric",
            reason="rubric not found: give the folder it is in (rubric_dirs / --rubric-dir)",
        )
    binary = rubric.scale.kind == "binary"
    threshold = float(rubric.scale.pass_threshold or 1.0)
    errors = int(rows["error"].notna().sum())
    if errors:
        notes.append(f"judge {judge!r}: {errors} errored calls left out")
    ok = rows[rows["error"].isna()]
    configs = set(ok["judge_config_sha256"].dropna())
    config = next(iter(configs)) if len(configs) == 1 else None
    calls = pd.DataFrame(
        {
            "item": ok["item"].to_numpy(),
            "order": ok["order"].to_numpy(),
            "sample": ok["sample"].to_numpy(),
            "score": ok["score"].astype(float).to_numpy(),
            "task_id": ok["task_id"].to_numpy(),
        }
    )
    if "expected_score" in ok:
        calls["expected_score"] = ok["expected_score"].astype(float).to_numpy()
    feats = item_features(calls, threshold=0.5 if binary else threshold)
    feats = feats.set_index("item")
    feats["score"] = item_means(calls, ordinal=True).reindex(feats.index)
    if "expected_score" in calls and calls["expected_score"].notna().all():
        ex = calls.rename(columns={"score": "s", "expected_score": "score"})
        feats["expected_score"] = item_means(ex, ordinal=True).reindex(feats.index)
    feats = feats.reset_index()

    chosen: pd.DataFrame
    chosen, label_rubric = _labels(inputs.labels, rubric.id, label_source == "human", notes)
    known: pd.DataFrame = chosen.dropna(subset=["label"])
    label_rubric_obj = find_rubric(label_rubric, rubric_dirs)
    label_rubric_threshold = (
        label_rubric_obj.scale.pass_threshold
        if label_rubric_obj is not None and label_rubric_obj.scale.kind == "ordinal"
        else None
    )
    y = pd.Series(dtype=float)
    scale = pd.Series(dtype=float)
    if len(known):
        labels_at = label_threshold(known["label"], rubric_threshold=label_rubric_threshold)
        pass_labels = (
            known
            if labels_at.value is None
            else known.assign(label=(known["label"] >= labels_at.value).astype(float))
        )
        y = consensus(pass_labels[["item", "annotator", "label"]])["label"].astype(float)
        if labels_at.value is not None:  # ordinal labels: their consensus on the scale too
            scale = consensus(known[["item", "annotator", "label"]])["label"].astype(float)
    items = feats
    items["label"] = items["item"].map(y).astype(float)
    items["label_scale"] = items["item"].map(scale).astype(float)
    tasks = {t: split_of(str(t), dev_share, salt) for t in items["task_id"].unique()}
    items["split"] = items["task_id"].map(tasks)
    items["verdict"] = (items["score"] > 0.5 if binary else items["score"] >= threshold).astype(
        float
    )
    rules = _rule_columns(store, dataset, items["item"])
    for col in rules.columns:
        items[col] = rules[col].to_numpy()
    n_unlabelled = int(items["label"].isna().sum())
    if n_unlabelled:
        notes.append(
            f"{n_unlabelled} of the judge's {len(items)} items have no consensus "
            f"{label_source} label (unlabelled, or a tie)"
        )
    return JudgeItems(
        judge=judge,
        rubric=rubric,
        threshold=0.5 if binary else threshold,
        binary=binary,
        items=items,
        rows=calls,
        config_sha256=config,
        label_rubric=label_rubric,
        rule_columns=list(rules.columns),
        notes=notes,
    )


def target_score(rubric: Rubric, passed: float, scale_value: float = math.nan) -> float:
    """The score an example should show, on the side of the pass threshold its label is on.

    Ordinal labels: the level nearest their consensus on that side (a majority of 5s among
    failing votes still shows a fail). Binary labels on an ordinal scale: the level nearest
    the pass threshold on that side (the lowest passing or the highest failing level).

    >>> from trajudge.judges import load_rubric
    >>> r = load_rubric("trajectory_reasonableness")  # 1..5, pass at 4
    >>> target_score(r, 1.0), target_score(r, 0.0), target_score(r, 0.0, 5.0)
    (4.0, 3.0, 3.0)
    """
    if rubric.scale.kind == "binary":
        return float(passed)
    t = float(rubric.scale.pass_threshold or 0)
    values = [float(lv.value) for lv in rubric.scale.levels if not isinstance(lv.value, str)]
    side = [v for v in values if (v >= t) == bool(passed)]
    aim = t if math.isnan(scale_value) else scale_value
    return float(min(side, key=lambda v: (abs(v - aim), v)))
