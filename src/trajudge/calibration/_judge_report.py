"""One judge against the human consensus: the numbers of a :class:`JudgeReport`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from trajudge.calibration._agreement import (
    Weights,
    binary_rates,
    cohen_kappa,
    confusion,
    gwet_ac1,
    percent_agreement,
)
from trajudge.calibration._bias import (
    Probe,
    central_tendency_probe,
    order_shift_probe,
    position_probe,
    self_preference_probe,
    stability_probe,
    verbosity_probe,
)
from trajudge.calibration._bootstrap import bootstrap_kappa
from trajudge.calibration._budget import label_budget
from trajudge.calibration._corrected import corrected_pass_rate
from trajudge.calibration._corrected_k import corrected_pass_hat_k
from trajudge.calibration._estimate import Estimate
from trajudge.calibration._results import JudgeReport, Threshold

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


def item_verdicts(rows: pd.DataFrame) -> pd.Series:
    """Per item, the judge's pass/fail over its rows: pass when more than half the rows pass.

    A tie (e.g. pass in one order, fail in the other) counts as fail: a trajectory passes only
    when the judge's majority says so.
    """
    return (rows.groupby("item", sort=True)["pass"].mean() > 0.5).astype(float)


def _optional_stat(rows: pd.DataFrame, col: str, how: str) -> float | None:
    if col not in rows or rows[col].isna().all():
        return None
    values = rows[col].dropna().astype(float)
    return float(values.median()) if how == "median" else float(values.mean() * 1000)


def _probes(
    ok: pd.DataFrame,
    lab: pd.DataFrame,
    scaled: pd.DataFrame,
    human: Human,
    boot: dict[str, int],
) -> dict[str, Probe | None]:
    """``lab``: rows with a binary consensus; ``scaled``: those with one on the label scale."""
    probes: dict[str, Probe | None] = {
        "position": position_probe(
            ok["pass"], ok["order"], ok["item"], samples=ok["sample"], **boot
        ),
        "order_shift": order_shift_probe(
            ok["score"], ok["order"], ok["item"], samples=ok["sample"], **boot
        )
        if ok["score"].notna().any()
        else None,
        "stability": stability_probe(ok["pass"], ok["order"], ok["item"], **boot),
        "verbosity": None,
        "self_preference": None,
        "central_tendency": None,
    }
    if "length" in scaled and scaled["length"].notna().any():
        probes["verbosity"] = verbosity_probe(
            scaled["score"], scaled["length"], scaled["h_scale"], scaled["item"], **boot
        )
    if {"agent_model", "judge_model"} <= set(lab.columns):
        names = pd.unique(pd.concat([lab["agent_model"], lab["judge_model"]]).dropna())
        families = {m: model_family(m) for m in names}
        fam_a = lab["agent_model"].map(families)
        fam_j = lab["judge_model"].map(families)
        own = (fam_a == fam_j).where(fam_a.notna() & fam_j.notna())
        probes["self_preference"] = self_preference_probe(
            lab["pass"], lab["h_pass"], own, lab["item"], **boot
        )
    if human.ordinal and ok["score"].nunique() > 2:
        probes["central_tendency"] = central_tendency_probe(
            scaled["score"], scaled["h_scale"], scaled["item"], **boot
        )
    return probes


def _weighted(lab: pd.DataFrame, human: Human, boot: dict[str, int]) -> list[Estimate | None]:
    if not human.ordinal or lab.empty or lab["score"].nunique() <= 2:
        return [None, None]
    scale = sorted(set(lab["score"].tolist()) | set(lab["h_scale"].tolist()))
    out: list[Estimate | None] = []
    kinds: tuple[Weights, ...] = ("linear", "quadratic")
    for w in kinds:
        est, _ = bootstrap_kappa(
            lab["h_scale"],
            lab["score"],
            lab["item"],
            weights=w,
            labels=scale,
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
    """All statistics of one judge; ``rows`` carry a 0/1 ``pass`` column (NaN on errors)."""
    boot = {"n_boot": n_boot, "seed": seed}
    errored = rows["error"].notna()
    ok = rows[~errored].copy()
    lab = ok[ok["item"].isin(human.binary.index)].copy()
    lab["h_pass"] = lab["item"].map(human.binary).astype(float)
    lab["h_scale"] = lab["item"].map(human.scale).astype(float)
    scaled = lab.dropna(subset=["h_scale"])  # ordinal statistics need the ordinal consensus
    kappa, _ = bootstrap_kappa(
        lab["h_pass"], lab["pass"], lab["item"], labels=[0.0, 1.0], n_boot=n_boot, seed=seed
    )
    linear, quadratic = _weighted(scaled, human, boot)
    verdicts = item_verdicts(ok)
    truth = human.binary.reindex(verdicts.index).astype(float)
    corrected_k = None
    if tasks is not None:
        corrected_k = corrected_pass_hat_k(
            verdicts.to_numpy(),
            truth.to_numpy(),
            tasks.reindex(verdicts.index).to_numpy(),
            ks=ks,
            **boot,
        )
    spread = ok.groupby("item")["pass"].agg(["min", "max"])
    y_h, y_j = lab["h_pass"].to_numpy(), lab["pass"].to_numpy()
    return JudgeReport(
        judge=name,
        n_rows=len(ok),
        n_errors=int(errored.sum()),
        n_items=int(lab["item"].nunique()),
        threshold=threshold,
        kappa=kappa,
        kappa_linear=linear,
        kappa_quadratic=quadratic,
        ac1=gwet_ac1(y_h, y_j, labels=[0.0, 1.0]),
        agreement=percent_agreement(y_h, y_j),
        rates=binary_rates(y_h, y_j),
        confusion=confusion(y_h, y_j, [0.0, 1.0]).tolist(),
        cost_per_1k=_optional_stat(rows, "cost_usd", "mean"),
        median_latency_s=_optional_stat(rows, "latency_s", "median"),
        probes=_probes(ok, lab, scaled, human, boot),
        corrected_rate=corrected_pass_rate(verdicts.to_numpy(), truth.to_numpy(), **boot)
        if len(verdicts)
        else None,
        corrected_pass_hat=corrected_k,
        budget=label_budget(kappa.n, kappa.low, kappa.high),
        unstable_items=[str(i) for i in spread.index[spread["min"] != spread["max"]]],
    )


def best_threshold(scores: Any, human_pass: Any) -> float:
    """The cut ``score >= t`` over observed score values that maximises binary Cohen's kappa.

    Ties go to the lowest such t; NaN when no cut gives a defined kappa.

    >>> best_threshold([1, 2, 3, 4, 5, 5], [0, 0, 0, 1, 1, 1])
    4.0
    """
    s = np.asarray(scores, dtype=float)
    h = np.asarray(human_pass, dtype=float)
    best, best_k = math.nan, -math.inf
    for t in np.unique(s):
        k = cohen_kappa(h, (s >= t).astype(float), labels=[0.0, 1.0])
        if not math.isnan(k) and k > best_k:
            best, best_k = float(t), k
    return best
