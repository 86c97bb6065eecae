"""Help text reads as written: a docstring paragraph is one paragraph at any width (Typer
kept the docstring's hard line breaks, so at 80 columns every line was cut in two), every
option says what it does, the default judge is named whole, and a judge run without --judge
says first that it uses the embedded CPU model."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from trajudge.store import Store
from trajudge.trajectories import Trajectory

CLI = [sys.executable, "-c", "from trajudge.cli import main; main()"]


def _help(*command: str, columns: int) -> str:
    env = {**os.environ, "COLUMNS": str(columns), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run(
        [*CLI, *command, "--help"], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def _prose_paragraphs(doc: str) -> list[str]:
    """The docstring's paragraphs of plain prose, each joined into one line."""
    paragraphs = [p.splitlines() for p in re.split(r"\n\s*\n", inspect.cleandoc(doc))]
    return [
        " ".join(line.strip() for line in lines)
        for lines in paragraphs
        if not any(line.startswith(("-", "*", " ", "$")) for line in lines)
    ]


@pytest.mark.parametrize(
    ("command", "module", "function"),
    [
        (("import",), "_cmd_import", "import_command"),
        (("check",), "_cmd_check", "check_command"),
        (("judge",), "_cmd_judge", "judge_command"),
        (("report",), "_cmd_report", "report_cmd"),
    ],
)
def test_a_docstring_paragraph_is_one_line_on_a_wide_terminal(
    command: tuple[str, ...], module: str, function: str
) -> None:
    mod = __import__(f"trajudge.cli.{module}", fromlist=[function])
    doc = getattr(mod, function).__doc__
    assert doc
    lines = [
        " ".join(line.strip(" │").split()) for line in _help(*command, columns=400).splitlines()
    ]
    for paragraph in _prose_paragraphs(doc):
        assert paragraph in lines, paragraph


def test_every_judge_option_has_help_and_the_default_judge_is_named_whole() -> None:
    text = " ".join(re.sub("[│╭╮╰╯─]", " ", _help("judge", columns=100)).split())
    text = text.replace("- ", "-")  # a word wrapped at its hyphen
    for option in ("--max-tasks", "--max-trials"):
        after = text.split(option, 1)[1].split("--", 1)[0]
        assert re.search(r"[a-z]{4,}", after.replace("int range", "")), (option, after)
    assert "first N tasks, in import order" in text
    assert "local/gemma-3-270m" in text and "trajectory_reasonableness" in text
    assert "…" not in text  # nothing cut off


def test_a_judge_run_without_judge_says_it_uses_the_embedded_model(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'trajudge.db'}"
    Store(url).import_dataset("ds", [Trajectory(id="a", task_id="a", input="x")])
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run(
        [*CLI, "judge", "nosuch", "--db", url], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 2  # no such dataset: it stops before any model starts
    first = " ".join(out.stdout.split())
    assert first.startswith(
        "no --judge given: judging with the embedded CPU model "
        "(local=local/gemma-3-270m:trajectory_reasonableness), a 270M base model"
    ), out.stdout
