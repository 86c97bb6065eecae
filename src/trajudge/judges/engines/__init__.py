"""Judges, layer 4: engines, what sends a run's prepared calls to the models: in this process
(:class:`~trajudge.judges.LocalEngine`), in worker processes of this machine
(:class:`~trajudge.judges.ProcessEngine`), on a Ray cluster, or through a provider's batch API
(:mod:`trajudge.judges.engines.batch`). Every engine implements the one
:class:`~trajudge.judges.Engine` protocol."""
