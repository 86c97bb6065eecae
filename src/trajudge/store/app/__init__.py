"""What the labeling app keeps: accounts, the sign-in throttle and log, reservations (_accounts);
the active design's draws and the lead's queue strategies (_draws). Public names are exported by
:mod:`trajudge.store`."""
