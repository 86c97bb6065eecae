"""Bias probes for one judge (position, verbosity, self-preference, central tendency, stability)
and the synthetic judges whose defects are dials, to validate them by implantation. Public names
are exported by :mod:`trajudge.calibration`."""
