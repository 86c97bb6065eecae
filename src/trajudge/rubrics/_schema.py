"""The verdict model a judge must return, derived from the rubric's scale.

The model is built from the rubric, never written by hand, so the response schema always
matches the scale (openevals habit: ``required = ["reasoning", "score"]``):

- pointwise: ``reasoning``, ``criteria`` (one field per criterion, when the rubric has
  criteria), ``score``, each score constrained to the scale's values; on a nominal scale
  ``verdict`` (one of its categories) instead of ``score``, criteria likewise;
- pairwise: ``reasoning``, ``criteria`` (``"A" | "B" | "tie"`` each), ``verdict``
  (``"A" | "B" | "tie"``; without ``"tie"`` when the scale excludes ties);
- reference: ``reasoning``, ``criteria_a`` / ``criteria_b``, ``score_a`` / ``score_b``: both
  trajectories shown are scored, and the candidate's score is read from its slot.

``reasoning`` comes first so the model thinks before it scores; its length is capped
(``maxLength``) so that constrained decoding always terminates inside ``max_tokens``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from trajudge.rubrics._rubric import Rubric


def _literal(values: list[int] | list[str]) -> Any:
    return Literal[tuple(values)]


def _criteria_model(rubric: Rubric, name: str, value_type: Any) -> type[BaseModel] | None:
    if not rubric.criteria:
        return None
    fields: dict[str, Any] = {
        c.id: (value_type, Field(description=c.description)) for c in rubric.criteria
    }
    model: type[BaseModel] = create_model(name, __config__=ConfigDict(extra="forbid"), **fields)
    return model


def verdict_model(rubric: Rubric, *, max_reasoning_chars: int = 800) -> type[BaseModel]:
    """Build the pydantic verdict model for ``rubric`` (see the module docstring)."""
    scale = rubric.scale
    score_t = _literal(
        scale.categories if scale.categorical else sorted(int(lv.value) for lv in scale.levels)
    )
    reasoning = (
        str,
        Field(description="Brief reasons, citing step numbers.", max_length=max_reasoning_chars),
    )
    fields: dict[str, Any] = {"reasoning": reasoning}
    base = "".join(p.capitalize() for p in rubric.id.replace("-", "_").split("_") if p)
    base = "".join(ch for ch in base if ch.isalnum()) or "Rubric"
    if rubric.mode == "pointwise":
        crit = _criteria_model(rubric, f"{base}Criteria", score_t)
        if crit is not None:
            fields["criteria"] = (crit, ...)
        if scale.categorical:
            fields["verdict"] = (score_t, Field(description="The category that applies."))
        else:
            fields["score"] = (score_t, Field(description="The overall score on the scale."))
    elif rubric.mode == "pairwise":
        crit = _criteria_model(rubric, f"{base}Criteria", score_t)
        if crit is not None:
            fields["criteria"] = (crit, ...)
        fields["verdict"] = (score_t, Field(description="Which trajectory is better."))
    else:
        crit = _criteria_model(rubric, f"{base}Criteria", score_t)
        if crit is not None:
            fields["criteria_a"] = (crit, ...)
            fields["criteria_b"] = (crit, ...)
        fields["score_a"] = (score_t, Field(description="Score of trajectory A."))
        fields["score_b"] = (score_t, Field(description="Score of trajectory B."))
    model: type[BaseModel] = create_model(
        f"{base}Verdict", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


def response_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent to the provider (and hashed into the cache key)."""
    return model.model_json_schema()
