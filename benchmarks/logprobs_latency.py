"""Does asking for token log-probabilities slow the embedded judge? Side by side, one run.

The same verdict request (a ~700-token prompt, the JSON-schema response a judge sends, greedy
decoding) is sent to the embedded llama.cpp server (gemma-3-270m, one slot, the prompt cache
off so every call reads its whole prompt) alternately without and with ``logprobs=True,
top_logprobs=20`` (what a judge with ``logprobs: true`` asks for). Wall seconds and the
process's CPU seconds (the server runs in-process: its work, whatever else the machine runs)
are printed per call, then the medians and their ratio (with / without).

Run: ``LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/python benchmarks/logprobs_latency.py
[--pairs 5]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm

from trajudge.judges import LocalModelServer
from trajudge.judges.calls._logprobs import TOP_LOGPROBS

SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "maxLength": 120},
        "score": {"enum": [1, 2, 3, 4, 5], "type": "integer"},
    },
    "required": ["reasoning", "score"],
    "additionalProperties": False,
}
STEP = "The agent looked up the reservation, checked the fare rules and changed the flight. "
MESSAGES = [{"role": "user", "content": "Rate this trajectory 1-5, briefly.\n" + STEP * 40}]


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _call(api_base: str, logprobs: bool) -> tuple[float, float, int]:
    extra: dict[str, Any] = {"logprobs": True, "top_logprobs": TOP_LOGPROBS} if logprobs else {}
    t0, c0 = time.perf_counter(), _cpu()
    out = litellm.completion(
        model="openai/gemma-3-270m",
        api_base=api_base,
        api_key="sk-no-key-needed",
        messages=MESSAGES,
        temperature=0,
        max_tokens=80,
        response_format={"type": "json_schema", "json_schema": {"name": "V", "schema": SCHEMA}},
        **extra,
    )
    return time.perf_counter() - t0, _cpu() - c0, int(out.usage.completion_tokens)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    litellm.suppress_debug_info = True
    runs: dict[bool, list[tuple[float, float, int]]] = {False: [], True: []}
    with LocalModelServer("gemma-3-270m", n_ctx=4096, n_parallel=1, prompt_cache=False) as s:
        for pair in range(args.pairs):
            for logprobs in (False, True):
                wall, cpu, tokens = _call(s.api_base, logprobs)
                runs[logprobs].append((wall, cpu, tokens))
                print(f"pair {pair} logprobs={logprobs!s:5} wall {wall:7.2f} s  "
                      f"CPU {cpu:7.2f} s  completion tokens {tokens}", flush=True)  # fmt: skip
    med = {k: (statistics.median(w for w, _, _ in v), statistics.median(c for _, c, _ in v))
           for k, v in runs.items()}  # fmt: skip
    for k in (False, True):
        print(f"logprobs={k!s:5}: median wall {med[k][0]:.2f} s, median CPU {med[k][1]:.2f} s")
    print(f"ratio with/without: wall {med[True][0] / med[False][0]:.2f}x, "
          f"CPU {med[True][1] / med[False][1]:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
