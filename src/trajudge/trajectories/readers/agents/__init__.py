"""Readers of agents' own session files: coding-agent CLIs and agent frameworks."""
