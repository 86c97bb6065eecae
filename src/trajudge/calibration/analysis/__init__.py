"""``analyze``: judges against humans in one call, its result objects, and one judge against the
human consensus. Public names are exported by :mod:`trajudge.calibration`."""
