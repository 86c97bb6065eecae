"""Widgets shared by the pages.

Trajectory text is untrusted: it reaches the page only through ``st.text``, ``st.code``,
``st.json`` and ``st.dataframe``, which show it as text. Markdown is used only for fixed
strings written here; labels of expanders and widgets never contain trajectory text.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from trajudge.judges import Rubric
from trajudge.labeling_app._view import ItemView, RuleView, StepView
from trajudge.labeling_app.queue._progress import Progress


def render_progress(p: Progress, *, noun: str = "items") -> None:
    st.progress(p.mine_fraction, text=p.mine_text)
    st.progress(
        p.everyone_fraction,
        text=f"Everyone: {p.items_labeled} / {p.items_total} {noun} have a label",
    )


def _check_line(c: dict[str, Any]) -> str:
    passed = c.get("passed")
    mark = "n/a" if passed is None else "pass" if passed else "FAIL"
    score = c.get("score")
    line = f"{mark:<4}  {c.get('severity') or '':<11} {c.get('check')}"
    if score is not None:
        line += f"  score {score:.2f}" if isinstance(score, float) else f"  score {score}"
    if c.get("detail"):
        line += f"  {c['detail']}"
    return line


def rule_text(rule: RuleView | None) -> str:
    """``Rule checks: <verdict> · score <s>``, then one line per check (plain text)."""
    if rule is None:
        return "Rule checks: none stored for this trajectory."
    verdict = "all gates passed" if rule.gates_passed else "a gate check failed"
    score = "n/a" if rule.score is None else f"{rule.score:.3f}"
    return "\n".join([f"Rule checks: {verdict} · score {score}", *map(_check_line, rule.checks)])


def render_rule(rule: RuleView | None) -> None:
    """The stored rule result as one text: the verdict, then one line per check (the raw
    result as JSON when it holds no checks)."""
    st.text(rule_text(rule))
    if rule is not None and not rule.checks:
        st.code(json.dumps(rule.raw, indent=2, default=str), language="json", wrap_lines=True)


def step_text(s: StepView) -> str:
    """One tool call as text: ``Step 3: tool · ok · 120 tokens · 340 ms``, its arguments
    (formatted JSON), then its error and its output (or the output's preview)."""
    header = f"Step {s.index}: {s.tool} · {'ok' if s.ok else '✗ FAILED'}"
    parts = [header + (f" · {s.meta}" if s.meta else ""), s.args_json]
    if s.error:
        parts.append(f"error: {s.error}")
    if s.output_preview:
        parts.append(f"output: {s.output_preview}")
    return "\n".join(parts)


def render_block(
    text: str, whole: str | None = None, *, what: str = "output", failed: bool = False
) -> None:
    """One part of a trajectory (a tool call, a turn of the conversation) as one code block,
    and ``whole`` (the untruncated text) in an expander when given. Each element costs the
    browser a few milliseconds per item, so a part is one element, and a failed call one
    more: a red mark (a fixed string) above its block."""
    if failed:
        st.markdown(":red[**✗ failed call**]")
    st.code(text, language=None, wrap_lines=True)
    if whole is not None:
        with st.expander(f"Whole {what} ({len(whole):,} characters)"):
            st.code(whole, language=None, wrap_lines=True)


def usage_line(usage: dict[str, Any]) -> str:
    """``Usage: prompt_tokens 10 · completion_tokens 5 · ...`` (plain text)."""
    if not usage:
        return "Usage: none recorded."
    return "Usage: " + " · ".join(f"{k} {v}" for k, v in usage.items())


def render_item(view: ItemView) -> None:
    """The task input, every step, the final answer and the usage of one trajectory.

    Few elements (every element is a message to the browser and a node it draws on each
    item): an id line, the input, one block per step, the final answer, one usage line.
    """
    meta = f"id {view.trajectory_id} · task {view.task_id} · trial {view.trial}"
    if view.intent:
        meta += f" · intent {view.intent}"
    turns = f"{len(view.turns)} turns · " if view.turns else ""
    st.text(f"{meta}\n{turns}{len(view.steps)} steps · {usage_line(view.usage)}")
    st.code(view.input or "(empty input)", language=None, wrap_lines=True)
    if view.turns:
        # the whole conversation in order: each turn's text, then the tool calls it made
        for turn in view.turns:
            if turn.text:
                render_block(f"{turn.role}:\n{turn.text}", turn.whole, what="system message")
            for s in turn.steps:
                render_block(step_text(s), s.output_full, failed=not s.ok)
    else:
        for s in view.steps:
            render_block(step_text(s), s.output_full, failed=not s.ok)
    st.subheader("Final answer", divider="gray")
    st.code(view.final_answer or "(no final answer)", language=None, wrap_lines=True)


def render_reference(view: ItemView) -> None:
    """What a reference-mode rubric compares the item against, below it: its calls as text,
    the one reference block open (the rubric's anchors speak of it)."""
    if view.reference is None:
        return
    st.subheader("Reference", divider="gray")
    st.text(view.reference_title)
    for s in view.reference:
        render_block(step_text(s), s.output_full, failed=not s.ok)


def render_judgments(judgments: list[dict[str, Any]]) -> None:
    st.subheader("Judge verdicts", divider="gray")
    if not judgments:
        st.text("No judgments for this rubric.")
        return
    table = pd.DataFrame([{k: v for k, v in j.items() if k != "reasoning"} for j in judgments])
    st.dataframe(table, hide_index=True, width="stretch")
    with st.expander("Reasoning"):
        for j in judgments:
            st.text(f"{j.get('judge')} ({j.get('order')}, sample {j.get('sample')}):")
            st.text(str(j.get("reasoning") or j.get("error") or "(none)"))


def label_value(row: dict[str, Any]) -> float | str | None:
    """A stored label's value: its category (nominal rubrics), else its number; None when
    skipped."""
    if row.get("skipped"):
        return None
    category = row.get("category")
    return category if isinstance(category, str) else row.get("value")


def level_text(rubric: Rubric, value: float | str | None) -> str:
    """``"4 · reasonable"`` for a scale value or category (``"skipped"`` for None)."""
    if value is None:
        return "skipped"
    for lv in rubric.scale.levels:
        if lv.value == value:
            return f"{lv.value} · {lv.label}"
    return value if isinstance(value, str) else f"{value:g}"


def value_shortcut(rubric: Rubric, value: int | str) -> str | None:
    """The key for a scale value: P / F on a binary scale, the digit on an ordinal one, the
    position (1-9) of a category on a nominal one; None past 9."""
    if rubric.scale.kind == "binary":
        return "P" if value == 1 else "F"
    if isinstance(value, str):
        pos = [lv.value for lv in rubric.scale.levels].index(value) + 1
        return str(pos) if pos <= 9 else None
    return str(value) if 0 <= value <= 9 else None
