"""One module per input family that is not trajudge's own format: what each tool writes, read
into trajectories without losing a user turn or a tool call. The readers' table
(:mod:`trajudge.trajectories._readers`) names each, and how it is detected."""
