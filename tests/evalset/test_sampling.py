"""Largest-remainder counts, stratified draws with shortfalls, and the strata rule, by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from evalset_helpers import case

from trajudge.evalset import (
    assign_strata,
    common_intents,
    largest_remainder,
    stratified_sample,
)


def test_largest_remainder_by_hand() -> None:
    shares = {"common": 0.6, "long_tail": 0.3, "known_hard": 0.1}
    assert largest_remainder(10, shares) == {"common": 6, "long_tail": 3, "known_hard": 1}
    # quotas 4.2 / 2.1 / 0.7 -> floors 4 / 2 / 0, the 1 left goes to .7
    assert largest_remainder(7, shares) == {"common": 4, "long_tail": 2, "known_hard": 1}
    # quotas 1.8 / 0.9 / 0.3 -> floors 1 / 0 / 0, the 2 left go to .9 then .8
    assert largest_remainder(3, shares) == {"common": 2, "long_tail": 1, "known_hard": 0}
    # equal weights, 2 left for 3 groups: ties go by name
    assert largest_remainder(2, {"b": 1, "a": 1, "c": 1}) == {"b": 1, "a": 1, "c": 0}
    assert largest_remainder(0, shares) == {"common": 0, "long_tail": 0, "known_hard": 0}
    with pytest.raises(ValueError):
        largest_remainder(3, {"a": 0.0})


def test_largest_remainder_always_sums_to_n_and_stays_within_one_of_the_quota() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        w = {f"g{i}": float(x) for i, x in enumerate(rng.random(rng.integers(1, 8)))}
        n = int(rng.integers(0, 100))
        counts = largest_remainder(n, w)
        assert sum(counts.values()) == n
        total = sum(w.values())
        for g, c in counts.items():
            assert abs(c - n * w[g] / total) < 1


def frame_of(strata: dict[str, int]) -> pd.DataFrame:
    rows = [(f"{s}{i}", s) for s, k in strata.items() for i in range(k)]
    return pd.DataFrame(rows, columns=["id", "stratum"])


def test_stratum_sample_counts_and_reported_shortfall() -> None:
    df = frame_of({"common": 20, "long_tail": 10, "known_hard": 5})
    s = stratified_sample(df, 10)
    assert s.counts == {"common": 6, "long_tail": 3, "known_hard": 1}
    assert s.shortfall == {} and s.warnings == []
    assert len(s.ids) == 10 == len(set(s.ids))
    assert sum(i.startswith("common") for i in s.ids) == 6
    # 20 asked: 12 / 6 / 2, but only 1 known_hard case exists
    short = stratified_sample(frame_of({"common": 20, "long_tail": 10, "known_hard": 1}), 20)
    assert short.targets == {"common": 12, "long_tail": 6, "known_hard": 2}
    assert short.counts == {"common": 12, "long_tail": 6, "known_hard": 1}
    assert short.shortfall == {"known_hard": 1}
    assert len(short.ids) == 19  # not filled from other strata
    assert short.warnings == ["known_hard: asked for 2, only 1 available (short by 1)"]


def test_sample_is_seeded_and_does_not_depend_on_input_order() -> None:
    df = frame_of({"common": 50, "long_tail": 30, "known_hard": 10})
    a = stratified_sample(df, 20, seed=3)
    b = stratified_sample(df.sample(frac=1, random_state=1), 20, seed=3)
    assert sorted(a.ids) == sorted(b.ids)
    c = stratified_sample(df, 20, seed=4)
    assert sorted(a.ids) != sorted(c.ids)


def test_intent_proportions_by_hand() -> None:
    df = pd.DataFrame(
        {"id": [f"c{i}" for i in range(100)], "intent": ["A"] * 50 + ["B"] * 30 + ["C"] * 20}
    )
    assert stratified_sample(df, 10, by="intent").counts == {"A": 5, "B": 3, "C": 2}
    # quotas 3.5 / 2.1 / 1.4 -> 3 / 2 / 1 and the 1 left goes to A (.5)
    assert stratified_sample(df, 7, by="intent").counts == {"A": 4, "B": 2, "C": 1}
    # explicit shares win over the proportions
    even = stratified_sample(df, 9, by="intent", shares={"A": 1, "B": 1, "C": 1})
    assert even.counts == {"A": 3, "B": 3, "C": 3}


def test_sampling_cases_returns_cases_in_input_order() -> None:
    cases = [case(f"t{i}", stratum="common" if i % 2 else "long_tail") for i in range(10)]
    s = stratified_sample(cases, 4, shares={"common": 1, "long_tail": 1})
    assert [c.id for c in s.cases] == s.ids
    order = [c.id for c in cases]
    assert [order.index(i) for i in s.ids] == sorted(order.index(i) for i in s.ids)
    assert s.counts == {"common": 2, "long_tail": 2}


def test_common_intents_cover_sixty_percent_and_never_split_ties() -> None:
    # A 5, B 3, C 1, D 1 of 10 runs: A alone 50% < 60%, A+B 80% -> common {A, B}
    assert common_intents(list("AAAAABBBCD")) == {"A", "B"}
    # A 4, B 2, C 2, D 2: A 40%, +B 60% reaches the line, but C ties with B -> {A, B, C, D}
    assert common_intents(list("AAAABBCCDD")) == {"A", "B", "C", "D"}
    # A 6 of 10 reaches 60% alone
    assert common_intents(list("AAAAAABCDE")) == {"A"}
    assert common_intents([]) == set()


def test_assign_strata_by_hand() -> None:
    df = pd.DataFrame(
        {
            "task_id": ["a1", "a1", "a2", "a2", "a3", "b1", "b1", "c1", "d1", "d1"],
            "intent": ["A"] * 5 + ["B"] * 2 + ["C", None, None],
            "success": [True, False, True, True, False, False, False, True, True, None],
        }
    )
    out = assign_strata(df)
    # runs: A 5, B 2, (none) 2, C 1 -> A 50%, then B (70%); (none) ties with B, so it is
    # common too -> common {A, B, (none)}, long tail {C}
    # known hard (every known verdict failed): a3 (0/1), b1 (0/2); d1 has 1/1 known
    assert out["stratum"].tolist() == [
        "common",
        "common",
        "common",
        "common",
        "known_hard",
        "known_hard",
        "known_hard",
        "long_tail",
        "common",
        "common",
    ]
    assert "stratum" not in df.columns  # a copy
    # at least 2 verdicts to be known hard: a3 (one trial) is common again
    two = assign_strata(df, min_trials=2)["stratum"].tolist()
    assert two[4] == "common" and two[5] == "known_hard"
    # a pass rate up to 0.5 counts as hard: a1 (1/2) too
    half = assign_strata(df, hard_threshold=0.5)["stratum"].tolist()
    assert half[:2] == ["known_hard", "known_hard"] and half[2] == "common"
    # without a success column, nothing is known hard
    assert "known_hard" not in assign_strata(df.drop(columns="success"))["stratum"].tolist()
