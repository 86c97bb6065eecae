"""Agreement between raters: two raters (Cohen's kappa, Gwet's AC1, confusion counts, rates) and
many (Krippendorff's alpha, the human consensus, the human ceiling). Public names are exported
by :mod:`trajudge.calibration`."""
