"""Names from before "threshold" and "SQL engine" became the one word each keep working."""

from __future__ import annotations

import math

from trajudge import alignment, calibration, store
from trajudge.store import Store


def test_the_trust_names_alias_the_threshold_ones() -> None:
    assert calibration.TrustCut is calibration.TrustThreshold
    assert calibration.fit_trust_cut is calibration.fit_trust_threshold
    assert alignment.pass_cut is alignment.calibrated_threshold is calibration.pass_cut
    t = calibration.fit_trust_cut([0.95] * 40 + [0.7] * 40, [1] * 40 + [1, 0] * 20)
    assert t.cut == t.value == 0.95  # the docstring example of fit_trust_threshold
    out = calibration.evaluate_trust(t, [0.99, 0.5], [1, 0], [1, 2], n_boot=10)
    assert out.cut is out.threshold
    assert math.isclose(out.coverage.value, 0.5)


def test_the_store_engine_names_alias_the_sql_engine_ones() -> None:
    assert store.make_engine is store.make_sql_engine
    s = Store("sqlite://")
    assert s.engine is s.sql_engine and s.write_engine is s.sql_write_engine
    s.close()
