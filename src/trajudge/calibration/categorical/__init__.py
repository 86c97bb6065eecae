"""Categorical judges (pairwise A/B/tie, nominal categories) against gold labels: the measures,
their result objects and ``analyze_categorical``. Public names are exported by
:mod:`trajudge.calibration`."""
