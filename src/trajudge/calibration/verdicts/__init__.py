"""A judge's verdicts and probabilities: one verdict per item and the ordinal threshold, how good a
probability of pass is (Brier, ECE, reliability bins), and trust or escalate. Public names are
exported by :mod:`trajudge.calibration`."""
