"""Worker classes for the process engine's tests (tests/judges/test_procs.py) that misbehave.

They live in a module of their own because a worker process (started with ``spawn``)
imports its class by name: a class defined inside a test could not be found there.
"""

from __future__ import annotations

import os
from typing import Any

from trajudge.judges.engines._procs_worker import ProcessWorker


def _user(messages: list[dict[str, str]]) -> str:
    return "".join(m.get("content") or "" for m in messages if m["role"] == "user")


def _explode() -> None:
    raise ValueError("this answer cannot be read")


class Unreadable:
    """Pickles in the worker, and fails to unpickle in the driver."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_explode, ())


class Misbehaving(ProcessWorker):
    """Task 3's calls raise, task 4's answer nothing, task 2's answer an object the driver
    cannot read; the others are asked of the model as usual."""

    async def call(
        self, idx: int, key: str, messages: list[dict[str, str]], params: dict[str, Any]
    ) -> Any:
        user = _user(messages)
        if "task 3" in user:
            raise RuntimeError("worker bug")
        if "task 4" in user:
            return None
        if "task 2" in user:
            return Unreadable()
        return await super().call(idx, key, messages, params)


class DiesOnTask3(ProcessWorker):
    """The process exits at once when it gets one of task 3's calls."""

    async def call(
        self, idx: int, key: str, messages: list[dict[str, str]], params: dict[str, Any]
    ) -> Any:
        if "task 3" in _user(messages):
            os._exit(3)
        return await super().call(idx, key, messages, params)
