"""The core set runs first; the gate stops the run on a failure, an error or a missing case."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from evalset_helpers import case

from trajudge.evalset import core_gate, layers


def results(**passed: object) -> pd.DataFrame:
    return pd.DataFrame({"case_id": list(passed), "passed": list(passed.values())})


def test_layers_splits_core_from_full_in_file_order() -> None:
    cases = [case("a"), case("b", core=True), case("c"), case("d", core=True)]
    core, full = layers(cases)
    assert core == ["ds/b-0", "ds/d-0"]
    assert full == ["ds/a-0", "ds/b-0", "ds/c-0", "ds/d-0"]


def test_gate_passes_only_when_every_core_case_passes_by_default() -> None:
    ok, reason = core_gate(results(a=True, b=True))
    assert ok and reason == "core set passed: 2 of 2 (100%, need 100%)"
    ok, reason = core_gate(results(a=True, b=False, c=True))
    assert not ok
    assert reason == "core set failed: 2 of 3 passed (67%, need 100%); failed: b"


def test_min_pass_rate_lowers_the_bar() -> None:
    # 3 of 4 = 75%
    assert core_gate(results(a=True, b=True, c=True, d=False), min_pass_rate=0.75)[0]
    assert not core_gate(results(a=True, b=True, c=True, d=False), min_pass_rate=0.8)[0]
    with pytest.raises(ValueError):
        core_gate(results(a=True), min_pass_rate=2)


def test_an_error_is_never_a_pass() -> None:
    for missing in (None, math.nan):
        ok, reason = core_gate(results(a=True, b=missing), min_pass_rate=0.5)
        assert not ok
        assert reason == "core set has no verdict (errors) for b"


def test_missing_or_absent_core_results() -> None:
    ok, reason = core_gate(results(a=True), expected_ids=["a", "b"])
    assert not ok and reason == "core set incomplete: no result for b"
    assert core_gate(results()) == (False, "no core results")
    assert core_gate(results(), expected_ids=[]) == (True, "no core cases: nothing to gate on")
    with pytest.raises(ValueError, match="passed"):
        core_gate(pd.DataFrame({"case_id": ["a"]}))
