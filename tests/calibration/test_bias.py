"""Bias probes: hand counts, and validation by implantation with synthetic judges."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from trajudge.calibration import (
    BANDS,
    SyntheticJudge,
    analyze,
    central_tendency_probe,
    model_family,
    position_probe,
    self_preference_probe,
    stability_probe,
    synthetic_judgments,
    synthetic_labels,
    synthetic_world,
    verbosity_probe,
)


def test_position_probe_hand_counts() -> None:
    # item a: ab pass, ba pass -> no flip; first-shown picks: ab pass (yes), ba pass (no)
    # item b: ab pass, ba fail -> flip;    picks: ab pass (yes), ba fail (yes)
    # item c: ab fail, ba fail -> no flip; picks: ab fail (no),  ba fail (yes)
    # first_pick = 4 / 6, flip_rate = 1 / 3
    p = position_probe([1, 1, 1, 0, 0, 0], ["ab", "ba"] * 3, list("aabbcc"), n_boot=100)
    assert p is not None
    assert p.estimate.value == pytest.approx(4 / 6)
    assert p.extra["flip_rate"].value == pytest.approx(1 / 3)
    assert "0.45" in p.rule and p.flagged is False  # 3 items: the interval is wide


def test_position_probe_pairs_by_sample_and_needs_both_orders() -> None:
    # sample 1 has only order ab: left out; sample 0 a flip on one item of one
    p = position_probe([1, 0, 1], ["ab", "ba", "ab"], ["x", "x", "x"], samples=[0, 0, 1])
    assert p is not None and p.extra["flip_rate"].value == 1.0 and p.estimate.n == 1
    assert position_probe([1, 0], ["ab", "ab"], ["x", "y"]) is None


def test_stability_probe_hand_counts() -> None:
    # group (a, ab): 3 samples, 2 pass -> agreeing pairs C(2,2) + C(1,2) = 1 of C(3,2) = 3
    # group (b, ab): 3 samples, all pass -> 3 of 3; group (c, ab) has one sample: left out
    # estimate = (1 + 3) / (3 + 3) = 2/3
    p = stability_probe([1, 1, 0, 1, 1, 1, 0], ["ab"] * 7, list("aaabbbc"), n_boot=50)
    assert p is not None and p.estimate.value == pytest.approx(2 / 3)
    assert stability_probe([1, 0], ["ab", "ba"], ["a", "a"]) is None


def test_other_probes_by_hand() -> None:
    # self-preference: own rows d = verdict - human = (1-0, 1-1) -> mean 0.5;
    # other rows d = (0-0, 0-1) -> mean -0.5; estimate = 0.5 - (-0.5) = 1.0
    p = self_preference_probe([1, 1, 0, 0], [0, 1, 0, 1], [True, True, False, False], list("abcd"))
    assert p is not None and p.estimate.value == pytest.approx(1.0)
    assert self_preference_probe([1], [1], [False], ["a"]) is None
    # central tendency: judge (2, 3, 4) sd 1, human (1, 3, 5) sd 2 -> 0.5
    c = central_tendency_probe([2, 3, 4], [1, 3, 5], list("abc"), n_boot=20)
    assert c is not None and c.estimate.value == pytest.approx(0.5)
    # verbosity with a constant control is the plain rank correlation: here perfect
    v = verbosity_probe([1, 2, 3, 4], [10, 20, 30, 40], [1, 1, 1, 1], list("abcd"), n_boot=20)
    assert v is not None and v.estimate.value == pytest.approx(1.0)
    assert verbosity_probe([1, 2], [3, 4], [1, 1], ["a", "b"]) is None


def test_verbosity_partial_correlation_matches_regression_residuals() -> None:
    from scipy.stats import pearsonr, rankdata

    rng = np.random.default_rng(0)
    z = rng.integers(1, 6, 300).astype(float)
    y = z + rng.normal(size=300)
    x = z + 0.3 * y + rng.normal(size=300)
    p = verbosity_probe(x, y, z, np.arange(300), n_boot=50)
    rx, ry, rz = rankdata(x), rankdata(y), rankdata(z)
    res = [r - np.polyval(np.polyfit(rz, r, 1), rz) for r in (rx, ry)]
    assert p is not None
    assert p.estimate.value == pytest.approx(pearsonr(*res).statistic, abs=1e-9)


def test_model_family() -> None:
    assert model_family("openai/gpt-4o-mini") == model_family("o1-mini") == "openai"
    assert model_family("claude-3-haiku-20240307") == "anthropic"
    assert model_family("meta-llama/Llama-3-8b") == "meta"
    assert model_family("acme-7b") == "acme" and model_family(None) is None


# --- validation by implantation --------------------------------------------------------

DIALS = {
    "position": ("position", [0.0, 0.15, 0.3, 0.45], +1),
    "verbosity": ("length", [0.0, 0.3, 0.6, 0.9], +1),
    "self_preference": ("self_preference", [0.0, 0.4, 0.8, 1.2], +1),
    "central_tendency": ("compression", [0.0, 0.2, 0.4, 0.6], -1),
    "stability": ("noise", [0.3, 0.6, 0.9, 1.2], -1),
}
PLANTED = {"position": 0.4, "length": 1.0, "self_preference": 1.0, "compression": 0.6,
           "noise": 1.5}  # fmt: skip
PROBE_OF = {dial: probe for probe, (dial, _, _) in DIALS.items()}


@pytest.fixture(scope="module")
def implanted() -> dict[str, dict[str, object]]:
    world = synthetic_world(300, seed=11)
    judges = [SyntheticJudge("clean")]
    judges += [dataclasses.replace(SyntheticJudge(), name=f"planted:{d}", **{d: v})
               for d, v in PLANTED.items()]  # fmt: skip
    for _, (dial, values, _) in DIALS.items():
        judges += [dataclasses.replace(SyntheticJudge(), name=f"dial:{dial}:{v}", **{dial: v})
                   for v in values]  # fmt: skip
    result = analyze(
        synthetic_judgments(world, judges, seed=12),
        synthetic_labels(world, seed=13),
        rubric_threshold=4,  # the synthetic 1..5 scale passes at 4
        n_boot=300,
        seed=0,
        ks=[1],
    )
    return {name: dict(report.probes) for name, report in result.judges.items()}


def test_clean_judge_triggers_nothing(implanted: dict[str, dict[str, object]]) -> None:
    probes = implanted["clean"]
    assert all(p is not None for p in probes.values())  # every probe ran
    assert [n for n, p in probes.items() if p.flagged] == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("dial", list(PLANTED))
def test_each_planted_defect_is_detected(
    dial: str, implanted: dict[str, dict[str, object]]
) -> None:
    probe = implanted[f"planted:{dial}"][PROBE_OF[dial]]
    assert probe is not None and probe.flagged, probe  # type: ignore[attr-defined]


@pytest.mark.parametrize("probe_name", list(DIALS))
def test_estimate_moves_monotonically_with_the_dial(
    probe_name: str, implanted: dict[str, dict[str, object]]
) -> None:
    dial, values, sign = DIALS[probe_name]
    estimates = [implanted[f"dial:{dial}:{v}"][probe_name].estimate.value for v in values]  # type: ignore[attr-defined]
    steps = sign * np.diff(estimates)
    assert (steps > 0).all(), estimates


def test_position_dial_is_recovered() -> None:
    # a call forced to the first-shown side w.p. p; otherwise the first-shown side is picked
    # half the time by symmetry: first_pick = p + (1 - p) / 2 (items already on the forced
    # side make it a little lower), so 0.4 reads about 0.7
    world = synthetic_world(400, seed=1)
    j = synthetic_judgments(world, [SyntheticJudge(position=0.4)], seed=2)
    p = position_probe(j["score"] >= 4, j["order"], j["item"], samples=j["sample"], n_boot=200)
    assert (
        p is not None and 0.62 <= p.estimate.value <= 0.72 and p.estimate.low > BANDS["position"][1]
    )


def test_synthetic_tables_have_the_analysis_columns() -> None:
    world = synthetic_world(20, trials=4, seed=0)
    j = synthetic_judgments(world, [SyntheticJudge()], samples=2)
    assert len(j) == 20 * 2 * 2 and set(j["order"]) == {"ab", "ba"}
    labels = synthetic_labels(world, annotators=3)
    assert len(labels) == 60 and labels["label"].between(1, 5).all()
    assert isinstance(world["task_id"], pd.Series) and world["task_id"].nunique() == 5


def test_order_shift_probe_by_hand_and_by_implantation() -> None:
    from trajudge.calibration import order_shift_probe

    # by hand: item x moves 1 -> 3 (+2), item y 4 -> 4 (0): mean shift (2 + 0) / 2 = 1.0
    p = order_shift_probe([1, 3, 4, 4], ["ab", "ba", "ab", "ba"], ["x", "x", "y", "y"], n_boot=50)
    assert p is not None and p.estimate.value == pytest.approx(1.0)
    # only one order judged: does not apply
    assert order_shift_probe([1, 2], ["ab", "ab"], ["x", "y"]) is None

    # implantation: a judge that adds `dial` points when the candidate is shown second
    rng = np.random.default_rng(11)
    n = 300
    truth = rng.integers(1, 6, size=n).astype(float)
    estimates = []
    for dial in (0.0, 0.5, 1.0):
        ab = np.clip(truth + rng.normal(0, 0.5, n), 1, 5)
        ba = np.clip(truth + dial + rng.normal(0, 0.5, n), 1, 5)
        items = np.repeat(np.arange(n), 2)
        scores = np.column_stack([ab, ba]).ravel()
        orders = np.tile(["ab", "ba"], n)
        probe = order_shift_probe(scores, orders, items, n_boot=300, seed=1)
        assert probe is not None
        assert probe.flagged is (dial > 0)  # the clean judge triggers nothing
        estimates.append(probe.estimate.value)
    assert estimates[0] < estimates[1] < estimates[2]  # grows with the dial
