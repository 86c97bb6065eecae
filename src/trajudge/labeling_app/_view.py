"""The view model of one item: everything the label page shows, as plain text fields.

Building it is pure (no Streamlit), so the benchmark and the tests can time and check it.
Every field that comes from the trajectory stays text; the page shows it only through
``st.text`` / ``st.code`` / ``st.json``, never as Markdown or HTML.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trajudge.trajectories import Trajectory

PREVIEW_CHARS = 1200
# A system prompt (τ-bench's policy is 6,156 characters) would push the item below the fold on
# every page: its first lines are shown, the whole text on request.
SYSTEM_PREVIEW_LINES = 3
SYSTEM_PREVIEW_CHARS = 400


@dataclass(frozen=True)
class StepView:
    """One tool call: arguments as formatted JSON, status, and the output (maybe truncated)."""

    index: int
    tool: str
    args_json: str
    ok: bool
    output_preview: str
    output_full: str | None  # the whole output when the preview is truncated, else None
    error: str | None
    meta: str


@dataclass(frozen=True)
class TurnView:
    """One turn of the conversation: who, the text, and the steps an assistant turn made."""

    role: str
    text: str
    steps: list[StepView] = field(default_factory=list)
    whole: str | None = None  # a collapsed system message's whole text (``text`` its start)


@dataclass(frozen=True)
class RuleView:
    """A stored rule result: the gate verdict, the score and one row per check."""

    gates_passed: bool
    score: float | None
    checks: list[dict[str, Any]]
    raw: Any


@dataclass(frozen=True)
class ItemView:
    """What the label page shows for one trajectory."""

    trajectory_id: str
    task_id: str
    trial: int
    intent: str | None
    input: str
    steps: list[StepView]
    final_answer: str | None
    usage: dict[str, Any]
    rule: RuleView | None
    judgments: list[dict[str, Any]] = field(default_factory=list)
    # the whole conversation (user turns included), empty for a trajectory of steps only
    turns: list[TurnView] = field(default_factory=list)
    # what a reference-mode rubric compares this trajectory against (its steps; None: not a
    # reference rubric), and what that reference is, in words
    reference: list[StepView] | None = None
    reference_title: str = ""


def _preview(text: str, limit: int) -> tuple[str, str | None]:
    if len(text) <= limit:
        return text, None
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters)", text


def _system_preview(text: str) -> tuple[str, str | None]:
    """The first lines of a system message, and the whole text when that is not all of it."""
    head = "\n".join(text.splitlines()[:SYSTEM_PREVIEW_LINES])[:SYSTEM_PREVIEW_CHARS]
    if len(head) >= len(text.rstrip()):
        return text, None
    return head + f"\n… ({len(text) - len(head):,} more characters)", text


def _meta(tokens: int | None, latency_ms: float | None) -> str:
    parts = []
    if tokens is not None:
        parts.append(f"{tokens} tokens")
    if latency_ms is not None:
        parts.append(f"{latency_ms:.0f} ms")
    return " · ".join(parts)


def rule_view(result: Mapping[str, Any]) -> RuleView:
    """Shape a stored rule result (``Store.rule_results`` value) for display."""
    data = result.get("data")
    checks: list[dict[str, Any]] = []
    raw_checks = data.get("results") if isinstance(data, dict) else None
    if isinstance(raw_checks, list):
        for c in raw_checks:
            if isinstance(c, dict):
                detail = c.get("detail")
                checks.append(
                    {
                        "check": str(c.get("check", "")),
                        "passed": c.get("passed"),
                        "severity": str(c.get("severity", "")),
                        "score": c.get("score"),
                        "detail": detail
                        if isinstance(detail, str) or detail is None
                        else json.dumps(detail, ensure_ascii=False, default=str),
                    }
                )
    return RuleView(
        gates_passed=bool(result.get("gates_passed")),
        score=result.get("score"),
        checks=checks,
        raw=data,
    )


_JUDGMENT_FIELDS = ("judge", "model", "mode", "order", "sample", "score", "verdict", "error")


def _step_views(trajectory: Trajectory, preview_chars: int) -> list[StepView]:
    steps = []
    for i, s in enumerate(trajectory.steps, start=1):
        preview, full = _preview(s.output or "", preview_chars)
        steps.append(
            StepView(
                index=i,
                tool=s.tool,
                args_json=json.dumps(s.args, indent=2, ensure_ascii=False, default=str),
                ok=s.ok,
                output_preview=preview,
                output_full=full,
                error=s.error,
                meta=_meta(s.tokens, s.latency_ms),
            )
        )
    return steps


def reference_title(reference: Trajectory | None) -> str:
    """What the reference beside the item is, in words."""
    if reference is None:
        return "No reference for this task: the rubric's judges had none to compare with."
    if reference.metadata.get("expected_calls"):
        return "Reference: the calls the task spec expects (the judges saw these beside it)"
    return (
        f"Reference: trajectory {reference.id} (trial {reference.trial} of the same task; "
        "the judges saw it beside this one)"
    )


def build_item_view(
    trajectory: Trajectory,
    *,
    rule_result: Mapping[str, Any] | None = None,
    judgments: Sequence[Mapping[str, Any]] = (),
    rubric_id: str | None = None,
    preview_chars: int = PREVIEW_CHARS,
    reference: Trajectory | None = None,
    reference_rubric: bool = False,
) -> ItemView:
    """The view model of ``trajectory``; ``judgments`` (only when shown) filtered to the
    rubric; with ``reference_rubric``, the ``reference`` it is compared against (None: the
    task has none)."""
    steps = _step_views(trajectory, preview_chars)
    turns: list[TurnView] = []
    for m in trajectory.messages:
        if m.role == "tool" and m.step is not None:
            continue  # its result is shown with its step
        role = m.role if m.name is None else f"{m.role} ({m.name})"
        text = m.content or ""
        if not text and not m.steps:
            continue
        whole = None
        if m.role == "system":
            text, whole = _system_preview(text)
        turns.append(TurnView(role, text, [steps[n] for n in m.steps], whole))
    usage = {k: v for k, v in trajectory.usage.model_dump().items() if v is not None}
    shown = [
        {**{k: j.get(k) for k in _JUDGMENT_FIELDS}, "reasoning": j.get("reasoning")}
        for j in judgments
        if rubric_id is None or j.get("rubric_id") == rubric_id
    ]
    return ItemView(
        trajectory_id=trajectory.id,
        task_id=trajectory.task_id,
        trial=trajectory.trial,
        intent=trajectory.intent,
        input=trajectory.input,
        steps=steps,
        final_answer=trajectory.final_answer,
        usage=usage,
        rule=None if rule_result is None else rule_view(rule_result),
        judgments=shown,
        turns=turns,
        reference=(
            None
            if not reference_rubric
            else ([] if reference is None else _step_views(reference, preview_chars))
        ),
        reference_title=reference_title(reference) if reference_rubric else "",
    )
