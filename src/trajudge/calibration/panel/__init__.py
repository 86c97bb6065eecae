"""The panel of raters: judge drift, per-slice agreement with multiplicity control, the
Dawid-Skene jury and the alternative annotator test.

A sub-room of :mod:`trajudge.calibration` (statistics only, pure functions); its public names
are also exported by ``trajudge.calibration``.
"""

from trajudge.calibration.panel._drift import Drift, paired_drift

__all__ = ["Drift", "paired_drift"]
