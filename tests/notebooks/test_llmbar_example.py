"""examples/llmbar is what its make_tables.py writes from LLMBar's own files (../shared/data).

The copy in the project is derived (plain tables, not the upstream JSON): this checks, byte
for byte, that it is the upstream verdicts and labels and the upstream statistics files.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from _shared import SHARED_DATA, require_shared

pytestmark = pytest.mark.shared
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "llmbar"


def test_example_tables_are_the_upstream_files(tmp_path: Path) -> None:
    dataset = require_shared(SHARED_DATA / "llmbar" / "Dataset")
    spec = importlib.util.spec_from_file_location("make_tables", EXAMPLE / "make_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write(dataset, tmp_path)
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert len(written) == 2 + 25  # two tables, 25 statistics files (5 sets x 5 evaluators)
    for rel in written:
        assert (EXAMPLE / rel).read_bytes() == (tmp_path / rel).read_bytes(), rel
    for rel in (p for p in written if p.parts[0] == "statistics"):
        s, model, strategy = rel.parts[1], rel.parts[2], rel.stem
        pattern = f"LLMBar/**/{s}/evaluators/{model}/{strategy}/statistics.json"
        upstream = next(dataset.glob(pattern))
        assert (EXAMPLE / rel).read_bytes() == upstream.read_bytes()
