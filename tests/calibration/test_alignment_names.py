"""The alignment methods' names that ``trajudge.calibration`` still exports are alignment's own
objects, and importing calibration (the statistics) does not import alignment."""

from __future__ import annotations

import os
import subprocess
import sys

import trajudge.alignment as alignment
import trajudge.calibration as calibration


def test_calibration_exports_the_alignment_methods_of_alignment() -> None:
    lazy = set(calibration._ALIGNMENT)
    assert lazy <= set(calibration.__all__)
    assert lazy <= set(alignment.__all__)
    assert lazy <= set(dir(calibration))
    for name in sorted(lazy):
        assert getattr(calibration, name) is getattr(alignment, name), name


def test_every_public_name_of_calibration_resolves() -> None:
    missing = [n for n in calibration.__all__ if not hasattr(calibration, n)]
    assert missing == []


def test_importing_calibration_leaves_alignment_unimported() -> None:
    probe = (
        "import sys, trajudge.calibration; "
        "print(sorted(m for m in sys.modules if m.startswith('trajudge.alignment')))"
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
