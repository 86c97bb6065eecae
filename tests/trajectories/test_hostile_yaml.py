"""Hostile YAML is refused in one line, within bounded time and memory: an alias bomb
("billion laughs") under a task spec's ``defaults.reference[].args``, a self-referring alias
and a 10,000-deep list. Each is a real ``trajudge check --spec`` process with its address space
capped at 1 GB; before the limits the bomb took 5.6 GB (a MemoryError traceback under the cap).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _capped import run_capped
from trajudge.store import Store
from trajudge.trajectories import Trajectory


def _bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return (
        "anchors:\n"
        + "".join(f"  {line}\n" for line in lines)
        + f"defaults:\n  reference:\n    - tool: search\n      args: {{q: *a{levels - 1}}}\n"
    )


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (_bomb(), "TRAJUDGE_MAX_YAML_NODES"),
        ("defaults: &d\n  reference: [*d]\n", "recursive YAML"),
        ("defaults: " + "[" * 10_000 + "]" * 10_000 + "\n", "TRAJUDGE_MAX_NESTING"),
        ("defaults:\n  budgets: {max_steps: " + "9" * 5000 + "}\n", "more than 4,300 digits"),
    ],
    ids=["billion-laughs", "recursive", "deep", "huge-number"],
)
def test_hostile_spec_yaml_is_one_line_exit_2_within_bounds(
    tmp_path: Path, text: str, named: str
) -> None:
    url = f"sqlite:///{tmp_path / 'trajudge.db'}"
    Store(url).import_dataset("ds", [Trajectory(id="a", task_id="a", input="x")])
    spec = tmp_path / "specs.yaml"
    spec.write_text(text, encoding="utf-8")
    run = run_capped(["check", "ds", "--spec", str(spec), "--db", url], cwd=tmp_path)
    line = run.one_line_error()
    assert line.startswith(f"error: {spec}: ") and named in line, line
    assert run.max_rss_mb < 1024


def test_the_limits_are_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    from trajudge.trajectories import load_yaml

    small = "a: &x [1, 2, 3]\nb: [*x, *x]\n"
    assert load_yaml(small, "f.yaml") == {"a": [1, 2, 3], "b": [[1, 2, 3], [1, 2, 3]]}
    monkeypatch.setenv("TRAJUDGE_MAX_YAML_ALIASES", "1")
    with pytest.raises(ValueError, match=r"YAML aliases .* over the limit of 1; raise TRAJUDGE"):
        load_yaml(small, "f.yaml")
