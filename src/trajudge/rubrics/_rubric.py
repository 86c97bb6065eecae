"""Rubrics: YAML files that say what a judge (and a human labeler) scores, and on what scale.

A rubric's version is the SHA-256 of its canonical content, so any edit gives a new version
and every judgment records the exact rubric it was made with.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from jinja2 import TemplateSyntaxError
from jinja2.sandbox import SandboxedEnvironment
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from trajudge.core import InputError, canonical_json, pydantic_field
from trajudge.rubrics._kinds import CATEGORICAL, INCONSISTENT, Kind
from trajudge.rubrics._template import template_error
from trajudge.trajectories import read_yaml

RubricMode = Literal["pointwise", "pairwise", "reference"]


class ScaleLevel(BaseModel):
    """One point of a scale with the anchor text that says when it applies.

    ``value`` is a number on a binary (0, 1) or ordinal (1..N) scale, and a category name on
    a pairwise (``A``, ``B``, ``tie``) or nominal scale.
    """

    model_config = ConfigDict(extra="forbid")

    value: int | str
    label: str = Field(min_length=1)
    anchor: str = Field(min_length=1)


class Scale(BaseModel):
    """A rubric's verdict kind and its levels, each with an anchor.

    - ``binary``: the levels 0 (fail) and 1 (pass);
    - ``ordinal``: the levels 1..N; ``pass_threshold`` maps a score to pass/fail (pass when
      score >= threshold; default the upper middle);
    - ``pairwise``: the categories ``A``, ``B`` and optionally ``tie`` (leave the ``tie``
      level out for a forced choice); A and B are the two trajectories of a pair;
    - ``nominal``: any named categories (e.g. error types), two or more.

    Pairwise and nominal scales have no pass threshold: their verdicts are categories.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Kind
    levels: list[ScaleLevel]
    pass_threshold: float | None = None

    @model_validator(mode="after")
    def _check_levels(self) -> Scale:
        values = [lv.value for lv in self.levels]
        if len(set(values)) != len(values):
            raise ValueError("scale levels must be unique")
        if self.kind in CATEGORICAL:
            self._check_categories(values)
            return self
        if not all(isinstance(v, int) for v in values):
            raise ValueError(f"a {self.kind} scale has integer levels")
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
        return self

    def _check_categories(self, values: list[int | str]) -> None:
        if self.pass_threshold is not None:
            raise ValueError(f"a {self.kind} scale has no pass_threshold (its verdicts are names)")
        if not all(isinstance(v, str) and v.strip() == v and v for v in values):
            raise ValueError(f"a {self.kind} scale has category names as level values")
        if INCONSISTENT in values:
            raise ValueError(f"{INCONSISTENT!r} is reserved for inconsistent verdicts")
        if self.kind == "pairwise":
            if set(values) not in ({"A", "B"}, {"A", "B", "tie"}):
                raise ValueError(
                    "a pairwise scale has the levels A and B, and tie unless ties are excluded"
                )
        elif len(values) < 2:
            raise ValueError("a nominal scale has two or more categories")

    @property
    def categorical(self) -> bool:
        """Whether verdicts are category names (pairwise, nominal) rather than numbers."""
        return self.kind in CATEGORICAL

    @property
    def categories(self) -> list[str]:
        """The category names of a pairwise or nominal scale, in the declared order."""
        if not self.categorical:
            raise ValueError(f"a {self.kind} scale has numbers, not categories")
        return [str(lv.value) for lv in self.levels]

    @property
    def ties(self) -> bool:
        """Whether a pairwise scale allows a tie."""
        return self.kind == "pairwise" and "tie" in self.categories

    @property
    def min(self) -> int:
        return min(self._numbers())

    @property
    def max(self) -> int:
        return max(self._numbers())

    def _numbers(self) -> list[int]:
        if self.categorical:
            raise ValueError(f"a {self.kind} scale has categories, not numbers")
        return [int(lv.value) for lv in self.levels]

    def passed(self, score: float) -> bool:
        """Whether ``score`` counts as a pass on this (binary or ordinal) scale."""
        if self.pass_threshold is None:
            raise ValueError(f"a {self.kind} scale has no pass/fail")
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
    score: float | str  # a level of the scale: a number, or a category name
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


def check_rubric(rubric: Rubric, source: str) -> None:
    """Checks across fields that pydantic alone does not express; raise :class:`InputError`.

    - a pairwise rubric has a pairwise scale (A, B and optionally tie), and a pairwise scale
      belongs to a pairwise rubric;
    - a reference rubric scores both trajectories on a binary or ordinal scale;
    - every example's score is one of the scale's values;
    - criterion ids are unique;
    - the template, when given, is valid Jinja2 that renders with the documented variables
      (see :mod:`trajudge.judges.prompts._prompt`).
    """
    scale = rubric.scale
    if (rubric.mode == "pairwise") != (scale.kind == "pairwise"):
        raise InputError(
            source,
            field="scale.kind",
            reason="a pairwise rubric needs a pairwise scale (levels A, B and optionally tie), and "
            f"a pairwise scale a pairwise rubric (mode {rubric.mode}, scale {scale.kind})",
        )
    if rubric.mode == "reference" and scale.categorical:
        raise InputError(
            source,
            field="scale.kind",
            reason="a reference rubric scores on a binary or ordinal scale",
        )
    values = {lv.value for lv in scale.levels}
    for i, ex in enumerate(rubric.examples):
        if ex.score not in values:
            raise InputError(
                source,
                field=f"examples[{i}].score",
                reason=f"{ex.score!r} is not a level of the scale "
                f"({[lv.value for lv in scale.levels]})",
            )
    ids = [c.id for c in rubric.criteria]
    for i, cid in enumerate(ids):
        if cid in ids[:i]:
            raise InputError(
                source, field=f"criteria[{i}].id", reason=f"duplicate criterion {cid!r}"
            )
    if rubric.template is not None:
        try:
            SandboxedEnvironment().parse(rubric.template)
        except TemplateSyntaxError as exc:
            raise InputError(
                source,
                field="template",
                reason=f"invalid Jinja2 (line {exc.lineno}): {exc.message}",
            ) from None

        problem = template_error(rubric)
        if problem is not None:
            raise InputError(source, field="template", reason=problem)


def parse_rubric(data: Any, source: str) -> Rubric:
    """Validate a rubric mapping; errors name the source, key and reason."""
    if not isinstance(data, dict):
        raise InputError(source, reason="a rubric file must hold a YAML mapping")
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(
            source, field=pydantic_field(tuple(err["loc"])), reason=err["msg"]
        ) from None
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
            str(ref), field="rubric", reason=f"unknown rubric (known: {', '.join(sorted(known))})"
        )
    rubric = load_rubric_file(known[str(ref)])
    if rubric.id != str(ref):
        raise InputError(str(known[str(ref)]), field="id", reason=f"id {rubric.id!r} != file name")
    return rubric


def find_rubric(rubric_id: str | None, rubric_dirs: Sequence[str] = ()) -> Rubric | None:
    """The rubric with this id among the shipped ones and ``rubric_dirs`` (or a YAML path);
    None if there is none. A rubric file that exists but is broken raises InputError."""
    if rubric_id is None:
        return None
    if rubric_id not in available_rubrics(*rubric_dirs) and not rubric_id.endswith(
        (".yaml", ".yml")
    ):
        return None
    return load_rubric(rubric_id, *rubric_dirs)
