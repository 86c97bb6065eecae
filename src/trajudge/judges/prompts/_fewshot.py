"""Few-shot rubrics: a rubric plus worked examples, written as a new rubric file.

An example shows the judge a trajectory and the score it should give. Its text is rendered as
the judge sees any trajectory (:func:`render_trajectory`, tool outputs shortened) and kept in
the rubric's ``examples``; the prompt puts it between ``<example>`` and ``</example>`` tags
with every tag look-alike inside neutralised (:mod:`trajudge.judges.prompts._prompt`), so an example
is data to the judge, never an instruction, whatever the trajectory or a note says.

Adding examples changes the rubric's content, hence its version (a SHA-256 of the content),
hence the judge configuration: judgments made with the new rubric never mix with the old.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from trajudge.core import atomic_write_bytes
from trajudge.judges.prompts._render import elide, render_trajectory
from trajudge.rubrics._rubric import Example, Rubric, check_rubric
from trajudge.trajectories import Trajectory

#: Characters of one example's text (the prompt itself cuts examples at 2,000).
EXAMPLE_CHARS = 1200


def example_text(
    trajectory: Trajectory,
    *,
    note: str | None = None,
    max_chars: int = EXAMPLE_CHARS,
    max_output_chars: int = 120,
) -> str:
    """A trajectory as an example's input: rendered for a judge, cut to ``max_chars``.

    Tool outputs are shortened to ``max_output_chars`` first, so the calls (what a rubric on
    tool use scores) survive the cut; an annotator's ``note`` follows the trajectory, inside
    the same example (data, like the trajectory).
    """
    text = render_trajectory(trajectory, label="example", max_output_chars=max_output_chars)
    text = elide(text, max_chars)
    if note:
        text += "\nAnnotator's note: " + elide(" ".join(note.split()), 400)
    return text


def with_examples(rubric: Rubric, examples: Sequence[Example], *, source: str) -> Rubric:
    """A copy of ``rubric`` with ``examples`` after its own (checked like a loaded rubric)."""
    out = rubric.model_copy(update={"examples": [*rubric.examples, *examples]}, deep=True)
    out = Rubric.model_validate(out.model_dump(mode="json"))
    check_rubric(out, source)
    return out


def rubric_yaml(rubric: Rubric) -> str:
    """The rubric as YAML that :func:`trajudge.judges.load_rubric_file` reads back to the same
    rubric (and version)."""
    data = rubric.model_dump(mode="json")
    head = f"# rubric {rubric.id}, version {rubric.version} (trajudge align: few-shot)\n"
    return head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def write_rubric(rubric: Rubric, folder: str | Path) -> Path:
    """Write ``<folder>/<id>.<version>.yaml`` atomically and return its path.

    The file name carries the version, so a new alignment never overwrites an earlier
    rubric, and the id stays the rubric's (labels of that rubric still match its judgments).
    """
    path = Path(folder) / f"{rubric.id}.{rubric.version}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, rubric_yaml(rubric).encode())
    return path
