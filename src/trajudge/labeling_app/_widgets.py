"""Widgets shared by the pages.

Trajectory text is untrusted: it reaches the page only through ``st.text``, ``st.code``,
``st.json`` and ``st.dataframe``, which show it as text. Markdown is used only for fixed
strings written here; labels of expanders and widgets never contain trajectory text.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from trajudge.judges import Rubric
from trajudge.labeling_app._queue import Progress
from trajudge.labeling_app._view import ItemView, RuleView, StepView


def render_progress(p: Progress) -> None:
    st.progress(p.mine_fraction, text=f"You: {p.mine_done} / {p.mine_total} done")
    st.progress(
        p.everyone_fraction,
        text=f"Everyone: {p.items_labeled} / {p.items_total} items have a label",
    )


def render_rule(rule: RuleView | None) -> None:
    st.subheader("Rule checks", divider="gray")
    if rule is None:
        st.text("No rule results stored for this trajectory.")
        return
    verdict = "all gates passed" if rule.gates_passed else "a gate check failed"
    score = "n/a" if rule.score is None else f"{rule.score:.3f}"
    st.text(f"{verdict} · score {score}")
    if rule.checks:
        st.dataframe(pd.DataFrame(rule.checks), hide_index=True, width="stretch")
    else:
        st.json(rule.raw, expanded=False)


def render_item(view: ItemView) -> None:
    """The task input, every step, the final answer and the usage of one trajectory."""
    st.subheader("Task", divider="gray")
    meta = f"id {view.trajectory_id} · task {view.task_id} · trial {view.trial}"
    if view.intent:
        meta += f" · intent {view.intent}"
    st.text(meta)
    st.code(view.input or "(empty input)", language=None, wrap_lines=True)
    if view.turns:
        st.subheader(
            f"Conversation ({len(view.turns)} turns, {len(view.steps)} steps)", divider="gray"
        )
        for turn in view.turns:
            if turn.text:
                st.text(f"{turn.role}:")
                st.code(turn.text, language=None, wrap_lines=True)
            for s in turn.steps:
                _render_step(s)
    else:
        st.subheader(f"Steps ({len(view.steps)})", divider="gray")
        if not view.steps:
            st.text("No tool calls.")
        for s in view.steps:
            _render_step(s)
    st.subheader("Final answer", divider="gray")
    st.code(view.final_answer or "(no final answer)", language=None, wrap_lines=True)
    st.subheader("Usage", divider="gray")
    if view.usage:
        st.json(view.usage, expanded=True)
    else:
        st.text("No usage recorded.")


def _render_step(s: StepView) -> None:
    with st.container(border=True):
        head, status = st.columns([5, 1])
        head.text(f"Step {s.index}: {s.tool}" + (f"   ({s.meta})" if s.meta else ""))
        if s.ok:
            status.badge("ok", color="green")
        else:
            status.badge("error", color="red")
        st.code(s.args_json, language="json", wrap_lines=True)
        if s.error:
            st.text("error:")
            st.code(s.error, language=None, wrap_lines=True)
        if s.output_preview:
            st.code(s.output_preview, language=None, wrap_lines=True)
        if s.output_full is not None:
            with st.expander(f"Whole output ({len(s.output_full):,} characters)"):
                st.code(s.output_full, language=None, wrap_lines=True)


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
