"""The command line: a thin Typer layer over the library."""

from trajudge.cli._app import app, main

__all__ = ["app", "main"]
