"""The alignment tests reuse the judges' fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).parents[1] / "judges"))
sys.path.insert(0, str(Path(__file__).parent))

from fake_llm import FakeLLM


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    yield server
    server.stop()
