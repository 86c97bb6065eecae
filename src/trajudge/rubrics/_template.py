"""Rubric templates: the Jinja2 text a rubric's prompt is rendered from, and its variables.

A rubric may carry its own ``template``; when it does not, the default template for its mode
is used. Templates are rendered in a sandbox (no attribute access beyond data, undefined
variables are errors) with these variables:

``rubric`` (the Rubric), ``scale`` (its Scale), ``levels`` (scale levels, low to high),
``criteria``, ``examples``, ``instructions``, ``mode``, and the delimited blocks
``trajectory`` (pointwise) or ``trajectory_a`` / ``trajectory_b`` (pairwise, reference), which
the judges' prompt builder renders and neutralises before the template sees them.

Part of the rubric room because checking a rubric means rendering its template once: the
template's variables are part of the rubric format, not of the judge.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from jinja2 import StrictUndefined, Template
from jinja2.sandbox import SandboxedEnvironment

if TYPE_CHECKING:
    from trajudge.rubrics._rubric import Rubric

_COMMON = """\
{{ rubric.description }}
{% if instructions %}
{{ instructions }}
{% endif %}
Scale ({{ scale.kind }}):
{% for lv in levels %}- {{ lv.value }} = {{ lv.label }}: {{ lv.anchor }}
{% endfor %}
{%- if criteria %}
Criteria:
{% for c in criteria %}- {{ c.id }}: {{ c.description }}
{% endfor %}
{%- endif %}
{%- if examples %}
Examples of scored inputs:
{% for ex in examples %}<example>
{{ ex.input }}
</example>
Score: {{ ex.score | int }}{% if ex.reasoning %}. Why: {{ ex.reasoning }}{% endif %}

{% endfor %}
{%- endif %}
"""

# pairwise and nominal scales: the examples give a category, not a number
_CATEGORICAL = _COMMON.replace("Score: {{ ex.score | int }}", "Verdict: {{ ex.score }}")

DEFAULT_TEMPLATES = {
    "pointwise": _COMMON
    + """
The trajectory to score:
{{ trajectory }}

Answer with JSON: "reasoning" (brief, cite step numbers)\
{% if criteria %}, "criteria" (a score on the scale for each criterion){% endif %}, \
"score" (one of {{ levels | map(attribute='value') | join(', ') }}).""",
    "pairwise": _CATEGORICAL
    + """
Trajectory A:
{{ trajectory_a }}

Trajectory B:
{{ trajectory_b }}

Answer with JSON: "reasoning" (brief, cite step numbers)\
{% if criteria %}, "criteria" ({{ levels | map(attribute='value') | join(', ') }} for each \
criterion){% endif %}, "verdict" ("A" if A is better, "B" if B is better\
{% if scale.ties %}, "tie" if neither is{% endif %}).""",
    "nominal": _CATEGORICAL
    + """
The trajectory to classify:
{{ trajectory }}

Answer with JSON: "reasoning" (brief, cite step numbers)\
{% if criteria %}, "criteria" (a category for each criterion){% endif %}, \
"verdict" (one of {{ levels | map(attribute='value') | join(', ') }}).""",
    "reference": _COMMON
    + """
Trajectory A:
{{ trajectory_a }}

Trajectory B:
{{ trajectory_b }}

Answer with JSON: "reasoning" (brief, cite step numbers)\
{% if criteria %}, "criteria_a" and "criteria_b" (a score per criterion){% endif %}, \
"score_a" and "score_b" (each one of {{ levels | map(attribute='value') | join(', ') }}).""",
}

_ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, trim_blocks=False)


@functools.lru_cache(maxsize=256)
def compiled_template(source: str) -> Template:
    """The sandboxed template for ``source``, compiled once per process (compiling takes
    milliseconds, rendering microseconds; a compiled template is safe to render from any
    thread)."""
    return _ENV.from_string(source)


def default_template(rubric: Rubric) -> str:
    """The template a rubric without its own uses: by mode, and ``nominal`` for a nominal
    scale (its verdict is a category, not a score)."""
    if rubric.scale.kind == "nominal":
        return DEFAULT_TEMPLATES["nominal"]
    return DEFAULT_TEMPLATES[rubric.mode]


def template_context(
    rubric: Rubric, examples: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The variables a rubric's template sees, but the trajectory blocks.

    ``examples`` are the rubric's examples as the prompt shows them (``input``, ``score``,
    ``reasoning``); by default as written (enough to check that a template renders).
    """
    if examples is None:
        examples = [
            {"input": ex.input, "score": ex.score, "reasoning": ex.reasoning}
            for ex in rubric.examples
        ]
    return {
        "rubric": rubric,
        "scale": rubric.scale,
        # numbers low to high; categories in the order the rubric declares them
        "levels": list(rubric.scale.levels)
        if rubric.scale.categorical
        else sorted(rubric.scale.levels, key=lambda lv: int(lv.value)),
        "criteria": rubric.criteria,
        "examples": examples,
        "instructions": rubric.instructions.strip(),
        "mode": rubric.mode,
    }


def template_error(rubric: Rubric) -> str | None:
    """Render the rubric's template once with sample blocks; the error text, or None if fine.

    Catches what parsing alone cannot: unknown variables (the sandbox is strict) and unsafe
    attribute access.
    """
    if rubric.template is None:
        return None
    from jinja2 import TemplateError

    ctx = template_context(rubric)
    ctx.update(trajectory="<trajectory/>", trajectory_a="<trajectory/>", trajectory_b="")
    try:
        compiled_template(rubric.template).render(**ctx)
    except TemplateError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None
