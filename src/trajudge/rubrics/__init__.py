"""Rubrics: what a judge (and a human labeler) scores, on which verdict kind, in which template.

A rubric is a YAML file whose version is the SHA-256 of its canonical content. This room owns
the :class:`Rubric` model, the one verdict-kind vocabulary (:mod:`trajudge.rubrics._kinds`:
binary · ordinal · pairwise · nominal), the template a rubric's prompt is rendered from and
the response schema a judge must answer in. Loading a rubric imports pydantic, PyYAML and
Jinja2, never pandas or litellm; names are imported on first use (see
:mod:`trajudge.core._lazy`).

The built-in rubrics are the ``*.yaml`` files of this folder.
"""

from typing import TYPE_CHECKING

from trajudge.core import lazy_exports

if TYPE_CHECKING:
    from trajudge.rubrics._kinds import (
        CATEGORICAL,
        INCONSISTENT,
        KINDS,
        PAIRWISE_VERDICTS,
        SWAP,
        Kind,
        default_inconsistent,
        pairwise_verdict,
    )
    from trajudge.rubrics._rubric import (
        Criterion,
        Example,
        Rubric,
        RubricMode,
        Scale,
        ScaleLevel,
        available_rubrics,
        builtin_rubric_dir,
        check_rubric,
        find_rubric,
        load_rubric,
        load_rubric_file,
        parse_rubric,
    )
    from trajudge.rubrics._schema import response_schema, verdict_model
    from trajudge.rubrics._template import (
        DEFAULT_TEMPLATES,
        compiled_template,
        default_template,
        template_context,
        template_error,
    )

__all__ = [
    "CATEGORICAL",
    "DEFAULT_TEMPLATES",
    "INCONSISTENT",
    "KINDS",
    "PAIRWISE_VERDICTS",
    "SWAP",
    "Criterion",
    "Example",
    "Kind",
    "Rubric",
    "RubricMode",
    "Scale",
    "ScaleLevel",
    "available_rubrics",
    "builtin_rubric_dir",
    "check_rubric",
    "compiled_template",
    "default_inconsistent",
    "default_template",
    "find_rubric",
    "load_rubric",
    "load_rubric_file",
    "pairwise_verdict",
    "parse_rubric",
    "response_schema",
    "template_context",
    "template_error",
    "verdict_model",
]

_MODULES = {
    "trajudge.rubrics._kinds": (
        "CATEGORICAL INCONSISTENT KINDS PAIRWISE_VERDICTS SWAP Kind default_inconsistent "
        "pairwise_verdict"
    ),
    "trajudge.rubrics._rubric": (
        "Criterion Example Rubric RubricMode Scale ScaleLevel available_rubrics "
        "builtin_rubric_dir check_rubric find_rubric load_rubric load_rubric_file parse_rubric"
    ),
    "trajudge.rubrics._schema": "response_schema verdict_model",
    "trajudge.rubrics._template": (
        "DEFAULT_TEMPLATES compiled_template default_template template_context template_error"
    ),
}
# name -> the module it comes from: imported on first use (see trajudge.core._lazy)
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
