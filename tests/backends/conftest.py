"""A real Phoenix server for the session (tests/_phoenix.py) and one scripted run traced into
it and into an OTLP file, and one MLflow tracking server for the session
(tests/backends/_mlflow_server.py: defined here once, every module shares it); every test here
runs on one worker (``xdist_group("phoenix")``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _mlflow_server import mlflow_server  # noqa: F401  (the session fixture, registered here)
from _run_config import passing_llm  # noqa: F401  (registered here)

from _phoenix import Phoenix, TracedRun, phoenix_server


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/backends/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.xdist_group("phoenix"))


@pytest.fixture(autouse=True)
def _short_retry_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that is down is tried 5 times (backends/_retry.py): here with waits of
    milliseconds, not seconds (a Retry-After a test's server sends is still obeyed)."""
    from trajudge.backends import _retry

    monkeypatch.setattr(_retry, "BACKOFF_S", 0.01)


@pytest.fixture(scope="session")
def phoenix() -> Iterator[Phoenix]:
    yield from phoenix_server()


@pytest.fixture(scope="session")
def traced_run(phoenix: Phoenix, tmp_path_factory: pytest.TempPathFactory) -> TracedRun:
    """One scripted conversation (two turns, three tool calls, one failing) in project
    ``airline`` of the session's server and in an OTLP file."""
    file = tmp_path_factory.mktemp("traced") / "run.jsonl"
    phoenix.trace_run("airline", file)
    return TracedRun("airline", file, f"phoenix+{phoenix.url}/airline")
