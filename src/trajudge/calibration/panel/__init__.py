"""The panel of raters: judge drift, per-slice agreement with multiplicity control, the
Dawid-Skene jury and the alternative annotator test.

A sub-room of :mod:`trajudge.calibration` (statistics only, pure and keyword-only functions);
its public names live here, in ``trajudge.calibration.panel``.
"""

from trajudge.calibration.panel._alt_test import AltTest, AnnotatorTrial, alt_test
from trajudge.calibration.panel._dawid_skene import DawidSkene, dawid_skene
from trajudge.calibration.panel._drift import Drift, paired_drift
from trajudge.calibration.panel._jury import JuryComparison, jury_comparison
from trajudge.calibration.panel._multitest import METHODS, adjust_p
from trajudge.calibration.panel._slices import SliceRow, labels_needed, slice_agreement

__all__ = [
    "METHODS",
    "AltTest",
    "AnnotatorTrial",
    "DawidSkene",
    "Drift",
    "JuryComparison",
    "SliceRow",
    "adjust_p",
    "alt_test",
    "dawid_skene",
    "jury_comparison",
    "labels_needed",
    "paired_drift",
    "slice_agreement",
]
