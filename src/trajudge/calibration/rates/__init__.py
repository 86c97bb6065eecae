"""Success rates: pass@k and pass^k over repeated trials, corrected for the judge's errors
(Rogan-Gladen, corrected pass^k) and prediction-powered (PPI++). Public names are exported by
:mod:`trajudge.calibration`."""
