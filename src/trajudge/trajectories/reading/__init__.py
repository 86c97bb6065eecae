"""The read path: a file (or folder) to its trajectories through the readers' table, the
format told by magic bytes, by the first bytes' records or named, and each read checked
against its census. The public names stay in :mod:`trajudge.trajectories`."""
