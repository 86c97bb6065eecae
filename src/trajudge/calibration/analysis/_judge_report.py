"""One judge against the human consensus: the numbers of a :class:`JudgeReport`."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from trajudge.calibration._estimate import Estimate
from trajudge.calibration.agreement._agreement import Weights, binary_rates, confusion
from trajudge.calibration.analysis._results import JudgeReport
from trajudge.calibration.bias._bias import (
    Probe,
    central_tendency_probe,
    order_shift_probe,
    position_probe,
    self_preference_probe,
    stability_probe,
    verbosity_probe,
)
from trajudge.calibration.intervals._bootstrap import binary_agreement, bootstrap_kappa
from trajudge.calibration.intervals._budget import label_budget
from trajudge.calibration.rates._corrected import corrected_pass_rate
from trajudge.calibration.rates._corrected_k import corrected_pass_hat_k
from trajudge.calibration.verdicts._verdicts import Threshold, item_verdicts, row_passes

_FAMILIES = (
    ("openai", r"^(gpt|o\d|chatgpt|text-davinci|openai)"),
    ("anthropic", r"^(claude|anthropic)"),
    ("google", r"^(gemini|gemma|palm|bard|google)"),
    ("meta", r"^(llama|meta-llama|meta)"),
    ("mistral", r"^(mistral|mixtral|codestral|ministral)"),
    ("alibaba", r"^(qwen|qwq)"),
    ("deepseek", r"^deepseek"),
    ("xai", r"^grok"),
)


def model_family(model: Any) -> str | None:
    """The vendor family of a model name (``"claude-3-haiku"`` -> ``"anthropic"``).

    A provider prefix (``"openai/gpt-4o"``) is dropped first. Unknown names are their own
    family (the lower-cased name without a trailing version); missing names give None.

    >>> model_family("anthropic/claude-3-5-sonnet"), model_family("o1-mini")
    ('anthropic', 'openai')
    """
    if model is None or (isinstance(model, float) and math.isnan(model)) or not str(model):
        return None
    name = str(model).strip().lower().split("/")[-1]
    for family, pattern in _FAMILIES:
        if re.match(pattern, name):
            return family
    return re.split(r"[-_:.@ ]", name)[0] or name


@dataclass(frozen=True)
class Human:
    """The human consensus per item: binary (for kappa) and on the label scale."""

    binary: pd.Series  # item -> 0/1, items with a consensus only
    scale: pd.Series  # item -> consensus label on the label scale (ordinal) or 0/1
    ordinal: bool  # labels use more than two values


def _optional_stat(rows: pd.DataFrame, col: str, how: str) -> float | None:
    if col not in rows or rows[col].isna().all():
        return None
    values = rows[col].dropna().astype(float)
    return float(values.median()) if how == "median" else float(values.mean() * 1000)


def _clusters(items: pd.Series, clusters: Mapping[Any, object] | None) -> np.ndarray:
    """The resampling unit of each row: its item's task when known, else the item."""
    if clusters is None:
        return items.to_numpy()
    return np.asarray([clusters.get(i, i) for i in items.tolist()], dtype=object)


def _probes(
    ok: pd.DataFrame,
    verdicts: pd.Series,
    scaled: pd.DataFrame,
    human: Human,
    clusters: Mapping[Any, object] | None,
    boot: dict[str, int],
) -> dict[str, Probe | None]:
    """``ok``: successful calls with their own ``pass``; ``verdicts``: the per-item verdict;
    ``scaled``: calls on items with an ordinal consensus (``h_scale``)."""
    cl = _clusters(ok["item"], clusters)
    probes: dict[str, Probe | None] = {
        "position": position_probe(
            ok["pass"], ok["order"], ok["item"], samples=ok["sample"], clusters=cl, **boot
        ),
        "order_shift": order_shift_probe(
            ok["score"], ok["order"], ok["item"], samples=ok["sample"], clusters=cl, **boot
        )
        if ok["score"].notna().any()
        else None,
        "stability": stability_probe(ok["pass"], ok["order"], ok["item"], clusters=cl, **boot),
        "verbosity": None,
        "self_preference": None,
        "central_tendency": None,
    }
    sc = _clusters(scaled["item"], clusters)
    if "length" in scaled and scaled["length"].notna().any():
        probes["verbosity"] = verbosity_probe(
            scaled["score"],
            scaled["length"],
            scaled["h_scale"],
            scaled["item"],
            clusters=sc,
            **boot,
        )
    if {"agent_model", "judge_model"} <= set(ok.columns):
        # one row per labelled item: its verdict, the consensus and whose family it is
        first = ok.groupby("item", sort=True)[["agent_model", "judge_model"]].first()
        items = verdicts.index.intersection(human.binary.index).intersection(first.index)
        lab = first.loc[items]
        names = pd.unique(pd.concat([lab["agent_model"], lab["judge_model"]]).dropna())
        families = {m: model_family(m) for m in names}
        fam_a = lab["agent_model"].map(families)
        fam_j = lab["judge_model"].map(families)
        own = (fam_a == fam_j).astype(float).where(fam_a.notna() & fam_j.notna())
        probes["self_preference"] = self_preference_probe(
            verdicts.loc[items].to_numpy(),
            human.binary.loc[items].to_numpy(),
            own.to_numpy(),
            np.asarray(items),
            clusters=_clusters(pd.Series(items), clusters),
            **boot,
        )
    if human.ordinal and ok["score"].nunique() > 2:
        probes["central_tendency"] = central_tendency_probe(
            scaled["score"], scaled["h_scale"], scaled["item"], clusters=sc, **boot
        )
    return probes


def _weighted(
    scaled: pd.DataFrame,
    human: Human,
    clusters: Mapping[Any, object] | None,
    boot: dict[str, int],
) -> list[Estimate | None]:
    """Weighted kappas of every call's score against the ordinal consensus, each item
    weighing one (its calls share the weight), clustered like every other interval."""
    if not human.ordinal or scaled.empty or scaled["score"].nunique() <= 2:
        return [None, None]
    scale = sorted(set(scaled["score"].tolist()) | set(scaled["h_scale"].tolist()))
    weight = 1.0 / scaled.groupby("item")["item"].transform("size").to_numpy(float)
    out: list[Estimate | None] = []
    kinds: tuple[Weights, ...] = ("linear", "quadratic")
    for w in kinds:
        est, _ = bootstrap_kappa(
            scaled["h_scale"],
            scaled["score"],
            _clusters(scaled["item"], clusters),
            weights=w,
            labels=scale,
            sample_weight=weight,
            n_boot=boot["n_boot"],
            seed=boot["seed"],
        )
        out.append(est)
    return out


def judge_report(
    name: str,
    rows: pd.DataFrame,
    human: Human,
    threshold: Threshold,
    *,
    tasks: pd.Series | None,
    ks: list[int],
    n_boot: int,
    seed: int,
) -> JudgeReport:
    """All statistics of one judge from its calls (``rows``; errored ones counted only).

    Every figure uses the judge's one verdict per item (:func:`item_verdicts`); intervals
    resample tasks when ``tasks`` (item -> task id) is given, else items.
    """
    boot = {"n_boot": n_boot, "seed": seed}
    errored = rows["error"].notna()
    ok = rows[~errored].copy()
    ok["pass"] = row_passes(ok, threshold=threshold.value)
    verdicts = item_verdicts(ok, threshold=threshold.value)
    cluster_of = None if tasks is None else tasks.to_dict()
    labelled = verdicts.index.intersection(human.binary.index)
    y_h = human.binary.loc[labelled].to_numpy(float)
    y_j = verdicts.loc[labelled].to_numpy(float)
    stats = binary_agreement(y_h, y_j, _clusters(pd.Series(labelled), cluster_of), **boot)
    scaled = ok[ok["item"].isin(labelled)].copy()
    scaled["h_scale"] = scaled["item"].map(human.scale).astype(float)
    scaled = scaled.dropna(subset=["h_scale"])  # ordinal statistics need the ordinal consensus
    linear, quadratic = _weighted(scaled, human, cluster_of, boot)
    truth = human.binary.reindex(verdicts.index).astype(float).to_numpy()
    corrected_k = None
    if tasks is not None:
        corrected_k = corrected_pass_hat_k(
            verdicts.to_numpy(), truth, tasks.reindex(verdicts.index).to_numpy(), ks=ks, **boot
        )
    spread = ok.groupby("item")["pass"].agg(["min", "max"])
    kappa = stats["kappa"]
    return JudgeReport(
        judge=name,
        n_rows=len(ok),
        n_errors=int(errored.sum()),
        n_items=len(labelled),
        threshold=threshold,
        kappa=kappa,
        kappa_linear=linear,
        kappa_quadratic=quadratic,
        ac1=stats["ac1"],
        agreement=stats["agreement"],
        tpr=stats["tpr"],
        tnr=stats["tnr"],
        rates=binary_rates(y_h, y_j),
        confusion=confusion(y_h, y_j, [0.0, 1.0]).tolist(),
        cost_per_1k=_optional_stat(rows, "cost_usd", "mean"),
        median_latency_s=_optional_stat(rows, "latency_s", "median"),
        probes=_probes(ok, verdicts, scaled, human, cluster_of, boot),
        corrected_rate=corrected_pass_rate(
            verdicts.to_numpy(),
            truth,
            clusters=_clusters(verdicts.index.to_series(), cluster_of),
            **boot,
        ),
        corrected_pass_hat=corrected_k,
        # a judge with one verdict for every item: n/a (the summary says why)
        budget=label_budget(len(labelled), kappa.low, kappa.high, one_verdict=len(set(y_j)) < 2),
        unstable_items=[str(i) for i in spread.index[spread["min"] != spread["max"]]],
    )
