"""``align_judge``: fit on dev, measure on holdout, save the aligned judge (a new version).

1. The judge's stored calls become one row per item (:func:`judge_items`), each item on the
   dev or the holdout side of the task split.
2. ``threshold``, ``calibrate`` and (optional) ``stack`` are fitted on the labelled dev items
   and compared with the judge as it stands on the labelled holdout items
   (:func:`trajudge.alignment.align`); trust-or-escalate picks its confidence threshold on dev.
3. ``fewshot`` turns dev disagreements into examples of a new rubric and re-scores the
   (capped) holdout tasks with it (:func:`run_fewshot`).
4. The method to save is chosen on dev alone, by cross-validated kappa beside the judge's
   (:func:`trajudge.alignment._choice.choose`); a method dev says is worse than the judge as
   it stands, or a degenerate threshold, is refused and nothing is saved (``AlignmentRun.refusal``).
5. Otherwise the aligned judge (the judge's spec and rubric, the verdict rule of the chosen
   method) is saved in the store with the figures; its verdict is always ``feature >= threshold``:
   the fitted threshold, the calibrated probability >= 0.5 (:func:`trajudge.alignment.
   calibrated_threshold`), or the rubric's own threshold for a few-shot judge.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from trajudge.alignment._calibrate import Calibrator
from trajudge.alignment._choice import Choice, choose
from trajudge.alignment._estimates import source_estimates
from trajudge.alignment._fewshot import FewshotResult, run_fewshot
from trajudge.alignment._items import JudgeItems, judge_items
from trajudge.alignment._methods import AlignmentResult, align
from trajudge.alignment._options import AlignOptions
from trajudge.core import InputError
from trajudge.judges import BatchProgress, Judge, JudgeSpec, ResponseCache, load_rubric_file
from trajudge.store import Store
from trajudge.trajectories import TaskSpec

STACK_FEATURES = ("score", "score_sd")


@dataclass
class AlignmentRun:
    """What :func:`align_judge` did: the record (with its ``version`` when saved), the fits,
    the few-shot run, and notes (what was set aside, and why). ``refusal`` is the one-line
    reason nothing was saved (None when it was)."""

    record: dict[str, Any]
    result: AlignmentResult
    fewshot: FewshotResult | None
    data: JudgeItems
    notes: list[str] = field(default_factory=list)
    refusal: str | None = None

    @property
    def name(self) -> str:
        return str(self.record["name"])

    @property
    def version(self) -> int | None:
        v = self.record.get("version")
        return None if v is None else int(v)


def _feature(opts: AlignOptions, data: JudgeItems) -> str:
    """The column every method fits on: ``--feature``, or for ``auto`` the expected score when
    every call has one (else the score). An expected score asked for and missing from some
    calls is an error naming the judge and how many calls lack it."""
    calls = data.rows
    lacking = int(calls["expected_score"].isna().sum()) if "expected_score" in calls else len(calls)
    has = lacking == 0 and "expected_score" in data.items
    if opts.feature == "expected_score" and not has:
        raise InputError(
            "--feature",
            reason=f"judge {data.judge!r}: {lacking} of {len(calls)} calls have no expected_score "
            "(judged without `logprobs: true`, or the provider returned no token "
            "probabilities): use --feature score",
        )
    if opts.feature == "auto":
        return "expected_score" if has else "score"
    return opts.feature


def _varying(items: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    dev = items[(items["split"] == "dev") & items["label"].notna()]
    return [c for c in columns if dev[c].nunique() > 1]


def _methods(result: AlignmentResult, fewshot: FewshotResult | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m, r in result.methods.items():
        d = r.to_dict()
        d["n_items"] = r.verdicts.n_items
        out[m] = d
    if fewshot is not None:
        out["fewshot"] = {
            "method": "fewshot",
            "optional": False,
            "params": {
                "rubric_version": fewshot.rubric_version,
                "rubric_path": str(fewshot.rubric_path),
                "examples": fewshot.examples,
                "tasks": fewshot.tasks,
            },
            "verdicts": None if fewshot.comparison is None else fewshot.comparison.to_dict(),
            "probabilities": None,
            "n_items": fewshot.n_items,
            "calls": fewshot.n_calls,
            "errors": fewshot.n_errors,
        }
    return out


def _escalated(result: AlignmentResult, data: JudgeItems, feature: str) -> list[dict[str, Any]]:
    """The escalated items with their confidence, least confident first."""
    if result.trust is None or not result.escalated:
        return []
    items = data.items.set_index("item")
    ids = [i for i in result.escalated if i in items.index]
    if result.trust_source == "calibrate":
        cal = result.methods["calibrate"].params
        assert isinstance(cal, Calibrator)
        p = cal.predict_proba(items.loc[ids, [feature]])
        conf = np.maximum(p, 1.0 - p)
    else:
        conf = items.loc[ids, "vote_agreement"].to_numpy(dtype=float)
    order = sorted(range(len(ids)), key=lambda i: (conf[i], str(ids[i])))
    return [{"item": str(ids[i]), "confidence": float(conf[i])} for i in order]


def align_judge(
    store: Store,
    dataset: str,
    opts: AlignOptions,
    *,
    spec: JudgeSpec | None = None,
    label_source: str = "human",
    rubric_dirs: Sequence[str] = (),
    specs: Mapping[str, TaskSpec] | None = None,
    spec_defaults: TaskSpec | None = None,
    gates: Collection[str] = ("gate",),
    cache: ResponseCache | None = None,
    progress: Callable[[BatchProgress], None] | None = None,
    ks: Sequence[int] = (1, 2, 3, 4),
    n_boot: int = 2000,
    seed: int = 0,
) -> AlignmentRun:
    """Align ``opts.judge`` on ``dataset`` and save the aligned judge (module docstring).

    ``spec`` is the judge's spec (from the config or ``--judge NAME=MODEL:RUBRIC``): needed
    by ``fewshot`` (it makes calls) and for ``trajudge judge`` to use the aligned judge by
    name; without it the aligned judge applies to the stored judgments only. ``label_source``
    is used unless ``opts.labels`` names one. ``specs``, ``spec_defaults``, ``gates``,
    ``cache`` and ``progress`` are the batch runner's, for the few-shot calls.

    Raises :class:`InputError` for what the data cannot support (no judgments, one class
    on dev, no disagreement to learn from, fewshot without a spec), naming the judge.
    """
    source = opts.labels or label_source
    if "fewshot" in opts.methods and spec is None:
        raise InputError(
            f"judge {opts.judge}",
            field="fewshot",
            reason="fewshot re-scores the holdout: give the judge's spec (a judges: "
            "entry of --config, or --judge NAME=MODEL:RUBRIC)",
        )
    store.require_dataset(dataset)
    data = judge_items(
        store,
        dataset,
        opts.judge,
        label_source=source,
        dev_share=opts.dev_share,
        salt=opts.salt,
        rubric_dirs=rubric_dirs,
    )
    notes = list(data.notes)
    if spec is not None and data.config_sha256 is not None:
        mine = Judge(spec, rubric=data.rubric).config_sha256
        if mine != data.config_sha256:
            notes.append(
                f"the stored judgments of {opts.judge!r} were made with configuration "
                f"{data.config_sha256[:12]}; the spec given now hashes to {mine[:12]}"
                " (its calls would not match them)"
            )
    feature = _feature(opts, data)
    core = [m for m in opts.methods if m != "fewshot"]
    stack_feats = [*STACK_FEATURES, *(["expected_score"] if feature == "expected_score" else [])]
    where = f"align {opts.judge} on {dataset}"
    try:
        result = align(
            data.items,
            methods=core,
            calibration=opts.calibration,
            features=[feature],
            threshold_on=feature,
            stack_features=stack_feats,
            rule_columns=_varying(data.items, data.rule_columns) if "stack" in core else (),
            trust="calibrate" if "calibrate" in core else "votes",
            target=opts.target,
            alpha=opts.alpha,
            n_boot=n_boot,
            seed=seed,
        )
    except ValueError as exc:
        raise InputError(where, reason=str(exc)) from None
    fewshot = None
    if "fewshot" in opts.methods:
        assert spec is not None
        try:
            fewshot = run_fewshot(
                store,
                dataset,
                data,
                spec,
                name=opts.aligned_name,
                label_source=source,
                max_examples=opts.max_examples,
                example_chars=opts.example_chars,
                max_holdout_tasks=opts.max_holdout_tasks,
                rubric_out=opts.rubric_out,
                specs=specs,
                spec_defaults=spec_defaults,
                gates=gates,
                cache=cache,
                progress=progress,
                n_boot=n_boot,
                seed=seed,
            )
        except ValueError as exc:
            raise InputError(where, field="fewshot", reason=str(exc)) from None
    choice = choose(opts, result, data, feature, fewshot)
    record = _record(
        opts, dataset, source, data, result, fewshot, choice, spec, ks, n_boot, seed, feature,
        notes,
    )  # fmt: skip
    if choice.refusal is not None:  # dev says no: the figures are shown, nothing is saved
        return AlignmentRun(record, result, fewshot, data, notes, refusal=choice.refusal)
    record["version"] = store.save_aligned_judge(record)
    record["created_at"] = (store.aligned_judge(opts.aligned_name, record["version"]) or {}).get(
        "created_at"
    )
    return AlignmentRun(record, result, fewshot, data, notes)


def _aligned_verdicts(
    rule: dict[str, Any], data: JudgeItems, fewshot: FewshotResult | None
) -> pd.Series:
    hold = data.items[data.items["split"] == "holdout"].set_index("item")
    if rule["method"] == "fewshot":
        assert fewshot is not None
        out: pd.Series = fewshot.after.reindex(hold.index).dropna()
        return out
    verdicts: pd.Series = (hold[rule["feature"]] >= rule["threshold"]).astype(float)
    return verdicts


def _record(
    opts: AlignOptions,
    dataset: str,
    source: str,
    data: JudgeItems,
    result: AlignmentResult,
    fewshot: FewshotResult | None,
    choice: Choice,
    spec: JudgeSpec | None,
    ks: Sequence[int],
    n_boot: int,
    seed: int,
    feature: str,
    notes: list[str],
) -> dict[str, Any]:
    rule = choice.rule
    used_fewshot = rule["method"] == "fewshot"
    assert not used_fewshot or fewshot is not None
    rubric_ref = (
        str(fewshot.rubric_path)
        if used_fewshot and fewshot
        else (spec.rubric if spec is not None else data.rubric.id)
    )
    aligned_spec = None
    if spec is not None:
        aligned_spec = spec.model_copy(update={"name": opts.aligned_name, "rubric": rubric_ref})
    rubric = data.rubric
    if used_fewshot and fewshot is not None:
        rubric = load_rubric_file(fewshot.rubric_path)
    hold = data.items[data.items["split"] == "holdout"].set_index("item")
    labels, tasks = hold["label"], hold["task_id"]
    before = hold["verdict"]
    estimates = {
        "judge": source_estimates(before, labels, tasks, ks=ks, n_boot=n_boot, seed=seed),
    }
    if choice.refusal is None:  # a refused judge is no judge: no pass rates of its own
        after = _aligned_verdicts(rule, data, fewshot)
        estimates["aligned"] = source_estimates(
            after, labels, tasks, ks=ks, n_boot=n_boot, seed=seed
        )
    trust = None
    if result.trust is not None:
        trust = {**result.trust.to_dict(), "source": result.trust_source}
        trust.pop("escalated")  # the holdout's escalated ids: the queue below has them all
    record: dict[str, Any] = _clean(
        {
            "name": opts.aligned_name,
            "dataset": dataset,
            "base_judge": opts.judge,
            "config_sha256": fewshot.config_sha256
            if used_fewshot and fewshot
            else data.config_sha256,
            "label_source": source,
            "spec": None if aligned_spec is None else aligned_spec.model_dump(mode="json"),
            "rubric": rubric.model_dump(mode="json"),
            "rubric_id": rubric.id,
            "rubric_version": rubric.version,
            "rubric_path": str(fewshot.rubric_path) if fewshot is not None else None,
            "rule": rule,
            "choice": choice.to_dict(),
            "split": {
                "dev_share": opts.dev_share,
                "salt": opts.salt,
                "n_dev_items": result.n_dev_items,
                "n_holdout_items": result.n_holdout_items,
                "n_dev_tasks": result.n_dev_tasks,
                "n_holdout_tasks": result.n_holdout_tasks,
            },
            "options": opts.model_dump(mode="json"),
            "threshold": data.threshold,
            "methods": _methods(result, fewshot),
            "trust": trust,
            "escalated": _escalated(result, data, feature),
            "estimates": estimates,
            "notes": notes,
            "n_boot": n_boot,
            "seed": seed,
        }
    )
    return record


def _clean(obj: Any) -> Any:
    """JSON-ready: NaN and infinities become None (numpy scalars plain numbers)."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
