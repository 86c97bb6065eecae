"""An aligned judge, by name: a :class:`Judge` that ``trajudge judge`` and ``trajudge run`` use.

The record in the store holds the judge's spec and the full rubric content; the judge is
rebuilt from them alone (the rubric file written by ``fewshot`` is for people to read and
commit, not needed to reproduce), and its rubric version is checked against the record's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trajudge.core import InputError
from trajudge.judges import Judge, JudgeSpec, ResponseCache, Rubric
from trajudge.store import Store


def aligned_judge(record: Mapping[str, Any], *, cache: ResponseCache | None = None) -> Judge:
    """The judge an aligned-judge record describes (``Store.aligned_judge``)."""
    name = str(record["name"])
    if record.get("spec") is None:
        raise InputError(
            f"aligned judge {name}",
            field="spec",
            reason="it was aligned from stored judgments without the judge's spec, so it cannot "
            "make calls: align again with --config (or --judge NAME=MODEL:RUBRIC)",
        )
    rubric = Rubric.model_validate(record["rubric"])
    if rubric.version != record["rubric_version"]:
        raise InputError(
            f"aligned judge {name}",
            field="rubric",
            reason=f"content hashes to {rubric.version}, "
            f"the record says {record['rubric_version']}",
        )
    spec = JudgeSpec.model_validate(record["spec"])
    return Judge(spec, rubric=rubric, cache=cache)


def aligned_judges_by_name(
    store: Store, names: list[str], *, cache: ResponseCache | None = None
) -> list[Judge]:
    """The latest version of each named aligned judge, built (InputError for an unknown name)."""
    return [aligned_judge(store.require_aligned_judge(n), cache=cache) for n in names]
