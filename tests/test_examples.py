"""The example data is the public file, byte for byte, with its licence beside it."""

from __future__ import annotations

import hashlib

from _shared import EXAMPLE_TAU_BENCH, TAU_BENCH_FILE, TAU_BENCH_SIZE, require_shared


def test_example_tau_bench_file_is_the_shared_file_with_its_licence() -> None:
    shared = require_shared(TAU_BENCH_FILE)
    assert EXAMPLE_TAU_BENCH.stat().st_size == TAU_BENCH_SIZE
    digest = hashlib.sha256(EXAMPLE_TAU_BENCH.read_bytes()).hexdigest()
    assert digest == hashlib.sha256(shared.read_bytes()).hexdigest()
    licence = (EXAMPLE_TAU_BENCH.parent / "LICENSE.tau-bench").read_text()
    assert "MIT License" in licence and "Copyright (c) 2024 Sierra" in licence
