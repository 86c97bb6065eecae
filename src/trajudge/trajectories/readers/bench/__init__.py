"""Readers of benchmark and harness results: τ-bench, τ²-bench, Inspect, SWE-agent, OpenHands."""
