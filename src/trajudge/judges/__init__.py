"""Judges: rubrics, the LLM client, caching, batch scoring and the embedded local model."""

from trajudge.judges._rubric import (
    Criterion,
    Example,
    Rubric,
    RubricMode,
    Scale,
    ScaleLevel,
    available_rubrics,
    builtin_rubric_dir,
    load_rubric,
    load_rubric_file,
    parse_rubric,
)

__all__ = [
    "Criterion",
    "Example",
    "Rubric",
    "RubricMode",
    "Scale",
    "ScaleLevel",
    "available_rubrics",
    "builtin_rubric_dir",
    "load_rubric",
    "load_rubric_file",
    "parse_rubric",
]
