"""Output schema: the final answer parsed as JSON and validated with jsonschema."""

from __future__ import annotations

import json

from trajudge.core import InputError
from trajudge.rules._compile import CompiledSpec, Prepared
from trajudge.rules._models import CheckResult, result
from trajudge.trajectories import load_json


def check_output_schema(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """The final answer must be JSON that validates against ``output_schema``."""
    if c.schema_validator is None:
        return None
    sev = c.severity("output_schema")
    answer = p.trajectory.final_answer
    if answer is None:
        return result("output_schema", False, 0.0, "no final answer", {}, sev)
    try:
        value = load_json(answer, "final answer")
    except InputError as exc:  # nested past the limit: json would overflow the stack
        detail = f"final answer is not checked: {exc.reason}"
        return result("output_schema", False, 0.0, detail, {"error": exc.reason}, sev)
    except json.JSONDecodeError as exc:
        return result(
            "output_schema",
            False,
            0.0,
            f"final answer is not JSON: {exc}",
            {"error": str(exc)},
            sev,
        )
    errors = sorted(c.schema_validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    if not errors:
        return result("output_schema", True, 1.0, "", {}, sev)
    msgs = [f"at {e.json_path}: {e.message}" for e in errors]
    detail = "; ".join(msgs[:3]) + (f" (+{len(msgs) - 3} more)" if len(msgs) > 3 else "")
    return result("output_schema", False, 0.0, detail, {"errors": msgs}, sev)
