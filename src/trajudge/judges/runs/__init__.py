"""Judges, layer 3: runs. A dataset judged: the plan (every call needed, less what is stored),
the items and gates, the runner that prepares calls and hands them to an engine, the writer
that stores every outcome, and the aggregate over orders and samples."""
