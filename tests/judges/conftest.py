"""Fixtures for judge tests: a real OpenAI-compatible fake server on loopback."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).parent))

from fake_llm import FakeLLM


@pytest.fixture(scope="session")
def _fake_server() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture
def fake_llm(_fake_server: FakeLLM) -> Iterator[FakeLLM]:
    _fake_server.reset()
    _fake_server.choose = lambda name, values: values[-1]
    yield _fake_server
    _fake_server.reset()
