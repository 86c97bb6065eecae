"""Intervals: the clustered bootstrap over items, the intervals where it has nothing to resample,
and the label budget that brings an interval to a target width. Public names are exported by
:mod:`trajudge.calibration`."""
