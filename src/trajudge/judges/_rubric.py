"""Rubrics: YAML files that say what a judge (and a human labeler) scores, and on what scale.

A rubric's version is the SHA-256 of its canonical content, so any edit gives a new version
and every judgment records the exact rubric it was made with.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from trajudge.trajectories import InputError, canonical_json, read_yaml
from trajudge.trajectories._errors import pydantic_field

RubricMode = Literal["pointwise", "pairwise", "reference"]


class ScaleLevel(BaseModel):
    """One point of a scale with the anchor text that says when it applies."""

    model_config = ConfigDict(extra="forbid")

    value: int
    label: str = Field(min_length=1)
    anchor: str = Field(min_length=1)


class Scale(BaseModel):
    """A binary (0 = fail, 1 = pass) or ordinal (1..N) scale with an anchor for every level.

    ``pass_threshold`` maps an ordinal score to pass/fail: pass when score >= threshold.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["binary", "ordinal"]
    levels: list[ScaleLevel]
    pass_threshold: float | None = None

    @model_validator(mode="after")
    def _check_levels(self) -> Scale:
        values = [lv.value for lv in self.levels]
        if self.kind == "binary":
            if sorted(values) != [0, 1]:
                raise ValueError("a binary scale has exactly the levels 0 (fail) and 1 (pass)")
            if self.pass_threshold is None:
                self.pass_threshold = 1
        else:
            n = len(values)
            if n < 2 or sorted(values) != list(range(1, n + 1)):
                raise ValueError("an ordinal scale has the levels 1..N (N >= 2), each once")
            if self.pass_threshold is None:
                self.pass_threshold = (n + 1) / 2 if n % 2 else n / 2 + 1
        if len(set(values)) != len(values):
            raise ValueError("scale levels must be unique")
        return self

    @property
    def min(self) -> int:
        return min(lv.value for lv in self.levels)

    @property
    def max(self) -> int:
        return max(lv.value for lv in self.levels)

    def passed(self, score: float) -> bool:
        """Whether ``score`` counts as a pass on this scale."""
        assert self.pass_threshold is not None
        return score >= self.pass_threshold


class Criterion(BaseModel):
    """A named sub-question scored on the rubric's scale."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    description: str = Field(min_length=1)


class Example(BaseModel):
    """A few-shot example: an input shown to the judge and the verdict it should give."""

    model_config = ConfigDict(extra="forbid")

    input: str
    score: float
    reasoning: str = ""


class Rubric(BaseModel):
    """A scoring rubric (DESIGN.md): id, scale, criteria, mode, template, examples."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = Field(min_length=1)
    mode: RubricMode = "pointwise"
    scale: Scale
    criteria: list[Criterion] = Field(default_factory=list)
    instructions: str = ""
    template: str | None = None
    examples: list[Example] = Field(default_factory=list)

    @property
    def version(self) -> str:
        """SHA-256 (first 16 hex digits) of the rubric's canonical content."""
        return rubric_version(self.model_dump(mode="json"))


def rubric_version(content: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(content).encode()).hexdigest()[:16]


#: The pairwise scale: level 3 = A better, 2 = tie, 1 = B better (see :func:`check_rubric`).
PAIRWISE_LEVELS = (1, 2, 3)


def check_rubric(rubric: Rubric, source: str) -> None:
    """Checks across fields that pydantic alone does not express; raise :class:`InputError`.

    - a pairwise rubric has an ordinal scale of exactly three levels: 3 = the first
      trajectory shown (A) is better, 2 = tie, 1 = the second (B) is better;
    - every example's score is one of the scale's values;
    - criterion ids are unique;
    - the template, when given, is valid Jinja2 that renders with the documented variables
      (see :mod:`trajudge.judges._prompt`).
    """
    scale = rubric.scale
    if rubric.mode == "pairwise" and (
        scale.kind != "ordinal" or tuple(sorted(lv.value for lv in scale.levels)) != PAIRWISE_LEVELS
    ):
        raise InputError(
            source,
            None,
            "scale",
            "a pairwise rubric needs an ordinal scale with levels 1 (B better), 2 (tie), "
            "3 (A better)",
        )
    values = {lv.value for lv in scale.levels}
    for i, ex in enumerate(rubric.examples):
        if ex.score not in values:
            raise InputError(
                source,
                None,
                f"examples[{i}].score",
                f"{ex.score:g} is not a level of the scale ({sorted(values)})",
            )
    ids = [c.id for c in rubric.criteria]
    for i, cid in enumerate(ids):
        if cid in ids[:i]:
            raise InputError(source, None, f"criteria[{i}].id", f"duplicate criterion {cid!r}")
    if rubric.template is not None:
        from jinja2 import TemplateSyntaxError
        from jinja2.sandbox import SandboxedEnvironment

        try:
            SandboxedEnvironment().parse(rubric.template)
        except TemplateSyntaxError as exc:
            raise InputError(
                source, None, "template", f"invalid Jinja2 (line {exc.lineno}): {exc.message}"
            ) from None
        from trajudge.judges._prompt import template_error

        problem = template_error(rubric)
        if problem is not None:
            raise InputError(source, None, "template", problem)


def parse_rubric(data: Any, source: str) -> Rubric:
    """Validate a rubric mapping; errors name the source, key and reason."""
    if not isinstance(data, dict):
        raise InputError(source, None, None, "a rubric file must hold a YAML mapping")
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(source, None, pydantic_field(tuple(err["loc"])), err["msg"]) from None
    check_rubric(rubric, source)
    return rubric


def load_rubric_file(path: str | Path) -> Rubric:
    """Load one rubric YAML file."""
    p = Path(path)
    data = read_yaml(p)
    return parse_rubric(data, str(p))


def builtin_rubric_dir() -> Path:
    """The folder of rubrics shipped with trajudge."""
    return Path(str(resources.files("trajudge") / "rubrics"))


def available_rubrics(*folders: str | Path) -> dict[str, Path]:
    """Rubric ids to files: the shipped rubrics, overridden by the given folders in order."""
    found: dict[str, Path] = {}
    for folder in (builtin_rubric_dir(), *map(Path, folders)):
        if not folder.is_dir():
            continue
        for f in sorted(folder.glob("*.yaml")):
            found[f.stem] = f
    return found


def load_rubric(ref: str | Path, *folders: str | Path) -> Rubric:
    """Load a rubric by id (shipped or in ``folders``) or by path to a YAML file."""
    p = Path(ref)
    if p.suffix in (".yaml", ".yml") or p.exists():
        return load_rubric_file(p)
    known = available_rubrics(*folders)
    if str(ref) not in known:
        raise InputError(
            str(ref), None, "rubric", f"unknown rubric (known: {', '.join(sorted(known))})"
        )
    rubric = load_rubric_file(known[str(ref)])
    if rubric.id != str(ref):
        raise InputError(str(known[str(ref)]), None, "id", f"id {rubric.id!r} != file name")
    return rubric
