"""A ``--engine batch`` run in a child process, SIGKILLed once its batch is submitted.

The provider batch tests (OpenAI, Vertex AI, Bedrock) kill a run after the provider accepted
its batch and the store recorded it, then check that the next run collects that batch
instead of submitting again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from trajudge.store import Store

ROOT = Path(__file__).resolve().parents[2]


def kill_after_submit(store: Store, db_url: str, spec_args: str) -> None:
    """Run one judge (``JudgeSpec(name="point", rubric="trajectory_reasonableness", ...,
    <spec_args>)``) on dataset ``ds`` of ``db_url`` through the batch engine in a child
    process, and SIGKILL it once its batch is recorded and polled as in progress (the fake
    must hold it there). Fails if the run ends first or never gets there (180 s)."""
    script = textwrap.dedent(
        f"""
        from trajudge.judges import Judge, JudgeSpec, ProviderBatchEngine, score_dataset
        from trajudge.store import Store
        spec = JudgeSpec(name="point", rubric="trajectory_reasonableness",
                         retry_backoff_s=0.01, max_retries=1, {spec_args})
        store = Store({db_url!r})
        engine = ProviderBatchEngine(store, "ds", poll_interval_s=0.05)
        score_dataset(store, "ds", [Judge(spec)], engine=engine)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, "the run ended before it was killed"
            assert time.monotonic() < deadline, "the batch was never recorded in progress"
            rows = store.provider_batches("ds")
            if rows and rows[0]["status"] == "in_progress":  # recorded, and polled since
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
