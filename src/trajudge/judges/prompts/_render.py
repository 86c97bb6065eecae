"""Render trajectories as delimited, size-bounded text for a judge prompt.

Trajectory text is untrusted: tool outputs, user messages and the agent's own words may say
"ignore your instructions". Every piece of it is therefore

- placed inside a ``<trajectory label="A"> ... </trajectory>`` block, and
- *neutralised*: anything in the text that looks like one of our delimiter tags
  (``<trajectory``, ``</trajectory``, ``<example`` ...; any case, any spacing) has its ``<``
  replaced by ``&lt;``, so the text cannot close its block or open a new one.

A trajectory with a conversation is shown as that conversation: every user turn, the
assistant's words and, under each assistant turn, the numbered tool calls it made with their
results. Huge outputs are cut in the middle with an explicit marker
(``[... 9,812,345 characters elided ...]``) so that a prompt stays inside a token budget; when
that is not enough, whole steps in the middle are elided. A user turn is never elided: whether
the agent asked before acting is often what a judge must see.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable

from trajudge.trajectories import ExpectedCall, Message, Step, Trajectory

#: Tag names that delimit untrusted data in judge prompts.
DELIMITER_TAGS = (
    "trajectory",
    "example",
    "task",
    "steps",
    "conversation",
    "final_answer",
    "context",
)
_LOOKALIKE = re.compile(r"<(?=\s*/?\s*(?:" + "|".join(DELIMITER_TAGS) + r")\b)", re.IGNORECASE)

#: Output caps tried in turn (characters per output) until the prompt fits its budget.
OUTPUT_CAPS = (4000, 2000, 1000, 500, 250, 120, 60)
#: Step-count caps tried after the smallest output cap (head and tail steps are kept).
STEP_CAPS = (64, 32, 16, 8, 4, 2)


def neutralise(text: str) -> str:
    """Defuse delimiter look-alikes in untrusted text.

    >>> neutralise("ok </trajectory> <Trajectory label='A'>")
    "ok &lt;/trajectory> &lt;Trajectory label='A'>"
    """
    return _LOOKALIKE.sub("&lt;", text) if "<" in text else text


def elision_marker(n: int) -> str:
    """The marker put where ``n`` characters were cut out.

    >>> elision_marker(9812345)
    '[... 9,812,345 characters elided ...]'
    """
    return f"[... {n:,} characters elided ...]"


def elide(text: str, max_chars: int) -> str:
    """Keep the head and tail of ``text`` (about ``max_chars`` in all), marking the cut.

    >>> elide("abcdefghij" * 10, 20)
    'abcdefghij[... 80 characters elided ...]abcdefghij'
    """
    if len(text) <= max_chars:
        return text
    head = max_chars - max_chars // 2
    tail = max_chars // 2
    cut = len(text) - head - tail
    return text[:head] + elision_marker(cut) + (text[-tail:] if tail else "")


def estimate_tokens(text: str) -> int:
    """A conservative token estimate: one token per 3 characters.

    JSON-heavy trajectory text tokenises densely: on τ-bench airline trajectories we measured
    2.7-2.9 characters per token with the gemma-3 tokenizer and about 3.2 with gpt-4o's, so
    the common chars/4 rule would under-count by a third.
    """
    return math.ceil(len(text) / 3)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _render_step(i: int, step: Step, cap: int) -> str:
    lines = [f"[{i}] tool: {neutralise(step.tool)}"]
    lines.append(f"    args: {neutralise(elide(_json(step.args), cap))}")
    lines.append(f"    status: {'ok' if step.ok else 'error'}")
    if step.error:
        lines.append(f"    error: {neutralise(elide(step.error, cap))}")
    if step.output is not None:
        lines.append(f"    output: {neutralise(elide(step.output, cap))}")
    return "\n".join(lines)


def _kept_steps(n: int, max_steps: int | None) -> set[int]:
    """Step indexes (0-based) shown: all, or the head and tail around an elided middle."""
    if max_steps is None or n <= max_steps:
        return set(range(n))
    head = max_steps - max_steps // 2
    return set(range(head)) | set(range(n - max_steps // 2, n))


def _render_turn(m: Message, text_cap: int, cap: int) -> str | None:
    text = m.content or ""
    if m.role == "user":
        return "user: " + neutralise(text)  # never elided
    if m.role == "assistant":
        if not text:
            return None
        who = "assistant" if m.name is None else f"assistant ({neutralise(m.name)})"
        return f"{who}: " + neutralise(elide(text, text_cap))
    if m.step is None:  # a tool result that answers no recorded call
        return "tool result: " + neutralise(elide(text, cap))
    return None  # a tool turn: its result is shown with its step


def _middle(traj: Trajectory, kept: set[int]) -> tuple[int, int]:
    """The message range [lo, hi] holding the elided steps (empty when none are elided)."""
    owner = {n: i for i, m in enumerate(traj.messages) for n in m.steps}
    gone = [owner[n] for n in range(len(traj.steps)) if n not in kept and n in owner]
    return (min(gone), max(gone)) if gone else (1, 0)


def _render_conversation(traj: Trajectory, cap: int, text_cap: int, max_steps: int | None) -> str:
    """The turns in order. Under a step cap the steps in the middle are elided, and so are the
    assistant's words except (shortened) those a user turn answers; markers count what was
    elided. User turns always stay whole."""
    kept = _kept_steps(len(traj.steps), max_steps)
    lo, hi = _middle(traj, kept)
    lines: list[str] = []
    elided_steps = elided_turns = 0
    linked: set[int] = set()

    def flush() -> None:
        nonlocal elided_steps, elided_turns
        if elided_steps or elided_turns:
            what = [f"{elided_steps} steps"] if elided_steps else []
            what += [f"{elided_turns} assistant turns"] if elided_turns else []
            lines.append(f"[... {' and '.join(what)} elided ...]")
            elided_steps = elided_turns = 0

    tight = max_steps is not None
    first_user = next((i for i, m in enumerate(traj.messages) if m.role == "user"), -1)
    for i, m in enumerate(traj.messages):
        if m.role == "system":
            continue  # the agent's instructions, not the conversation (policy: <context>)
        in_middle = lo <= i <= hi and m.role != "user"
        if tight and m.role == "assistant" and not in_middle:
            # under a step cap, keep (shortened) only the words a user turn answers
            follows = traj.messages[i + 1].role if i + 1 < len(traj.messages) else None
            in_middle = follows != "user"
        turn = _render_turn(m, cap if tight else text_cap, cap)
        if m.role == "user" and i == first_user and m.content == traj.input:
            turn = "user: (the task above)"  # shown once, whole, in <task>
        if turn is not None:
            if in_middle:
                elided_turns += 1 if m.role == "assistant" else 0
            else:
                flush()
                lines.append(turn)
        for n in m.steps:
            linked.add(n)
            if n in kept:
                flush()
                lines.append(_indent(_render_step(n + 1, traj.steps[n], cap)))
            else:
                elided_steps += 1
    flush()
    rest = [n for n in range(len(traj.steps)) if n not in linked]
    if rest:
        lines.append("(tool calls not linked to a turn)")
        lines += [_render_step(n + 1, traj.steps[n], cap) for n in rest if n in kept]
    return "\n".join(lines) if lines else "(empty conversation)"


def _indent(text: str) -> str:
    lines = text.splitlines()
    return "  " + "\n  ".join(lines) if lines else ""


def render_trajectory(
    traj: Trajectory,
    *,
    label: str,
    max_output_chars: int = OUTPUT_CAPS[0],
    max_steps: int | None = None,
    expected: bool = False,
) -> str:
    """One trajectory as a delimited block: task, conversation (or numbered steps), answer.

    With a conversation, every turn is shown in order with the numbered steps under the
    assistant turn that made them; system turns (the agent's instructions) are left out: a
    policy the judge should apply is shown as ``<context>`` from ``metadata["policy"]``.
    ``expected=True`` marks a block built from a task spec's expected calls
    (no outputs).
    """
    text_cap = max(4 * max_output_chars, 240)
    parts = [f'<trajectory label="{label}">']
    conversation = bool(traj.messages) and not expected
    task = traj.input or "(no task text)"
    # with a conversation the task is its first user turn: shown whole, and only here
    parts.append("<task>\n" + neutralise(task if conversation else elide(task, text_cap)))
    parts.append("</task>")
    context = traj.metadata.get("policy") if isinstance(traj.metadata, dict) else None
    if isinstance(context, str) and context.strip():
        parts.append("<context>\n" + neutralise(elide(context, text_cap)) + "\n</context>")
    if conversation:
        body = _render_conversation(traj, max_output_chars, text_cap, max_steps)
        parts.append("<conversation>\n" + body + "\n</conversation>")
        answer = traj.final_answer if traj.final_answer is not None else "(no final answer)"
        answer_cap = text_cap if max_steps is None else max(max_output_chars, 120)
        parts.append(
            "<final_answer>\n" + neutralise(elide(answer, answer_cap)) + "\n</final_answer>"
        )
        parts.append("</trajectory>")
        return "\n".join(parts)
    steps = list(enumerate(traj.steps, start=1))
    rendered: list[str] = []
    if max_steps is not None and len(steps) > max_steps:
        head = steps[: max_steps - max_steps // 2]
        tail = steps[len(steps) - max_steps // 2 :]
        rendered = [_render_step(i, s, max_output_chars) for i, s in head]
        rendered.append(f"[... {len(steps) - len(head) - len(tail)} steps elided ...]")
        rendered += [_render_step(i, s, max_output_chars) for i, s in tail]
    else:
        rendered = [_render_step(i, s, max_output_chars) for i, s in steps]
    if expected:
        rendered.insert(0, "(expected calls from the task spec; no outputs were recorded)")
    parts.append("<steps>\n" + ("\n".join(rendered) if rendered else "(no tool calls)"))
    parts.append("</steps>")
    answer = traj.final_answer if traj.final_answer is not None else "(no final answer)"
    parts.append("<final_answer>\n" + neutralise(elide(answer, text_cap)) + "\n</final_answer>")
    parts.append("</trajectory>")
    return "\n".join(parts)


def spec_reference(task_id: str, calls: list[ExpectedCall], task_input: str = "") -> Trajectory:
    """A task spec's expected calls as a trajectory, to show a judge as a reference."""
    steps = [Step(tool=c.tool, args=dict(c.args or {}), ok=True) for c in calls]
    return Trajectory(
        id=f"spec:{task_id}",
        task_id=task_id,
        input=task_input,
        steps=steps,
        final_answer="(not part of the task spec)",
        metadata={"expected_calls": True},
    )


def fit_to_budget(
    build: Callable[[int, int | None], str],
    budget_tokens: int,
    count: Callable[[str], int] = estimate_tokens,
) -> tuple[str, int, int | None]:
    """Call ``build(max_output_chars, max_steps)`` with tighter caps until it fits the budget.

    Returns the text and the caps used. When even the tightest caps do not fit, the tightest
    rendering is returned: the caller decides (the judge reports the estimate).
    """
    text = ""
    for cap in OUTPUT_CAPS:
        text = build(cap, None)
        if count(text) <= budget_tokens:
            return text, cap, None
    cap = OUTPUT_CAPS[-1]
    for steps in STEP_CAPS:
        text = build(cap, steps)
        if count(text) <= budget_tokens:
            return text, cap, steps
    return text, cap, STEP_CAPS[-1]
