"""Hostile YAML is refused in one line, within bounded time and memory: an alias bomb
("billion laughs") under a task spec's ``defaults.reference[].args``, a self-referring alias
and a 10,000-deep list. Each is a real ``trajudge check --spec`` process with its address space
capped at 1 GB; before the limits the bomb took 5.6 GB (a MemoryError traceback under the cap).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from trajudge.store import Store
from trajudge.trajectories import Trajectory

GB = 1 << 30


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


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GB, GB))


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (_bomb(), "TRAJUDGE_MAX_YAML_NODES"),
        ("defaults: &d\n  reference: [*d]\n", "recursive YAML"),
        ("defaults: " + "[" * 10_000 + "]" * 10_000 + "\n", "TRAJUDGE_MAX_NESTING"),
    ],
    ids=["billion-laughs", "recursive", "deep"],
)
def test_hostile_spec_yaml_is_one_line_exit_2_within_bounds(
    tmp_path: Path, text: str, named: str
) -> None:
    url = f"sqlite:///{tmp_path / 'trajudge.db'}"
    Store(url).import_dataset("ds", [Trajectory(id="a", task_id="a", input="x")])
    spec = tmp_path / "specs.yaml"
    spec.write_text(text, encoding="utf-8")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cli = [sys.executable, "-c", "from trajudge.cli import main; main()"]
    out = subprocess.run(
        [*cli, "check", "ds", "--spec", str(spec), "--db", url],
        capture_output=True, text=True, env=env, timeout=60, preexec_fn=_limit_memory,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr[-2000:]
    assert len(out.stderr.splitlines()) == 1 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.startswith(f"error: {spec}: ") and named in out.stderr, out.stderr


def test_the_limits_are_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    from trajudge.trajectories import load_yaml

    small = "a: &x [1, 2, 3]\nb: [*x, *x]\n"
    assert load_yaml(small, "f.yaml") == {"a": [1, 2, 3], "b": [[1, 2, 3], [1, 2, 3]]}
    monkeypatch.setenv("TRAJUDGE_MAX_YAML_ALIASES", "1")
    with pytest.raises(ValueError, match=r"YAML aliases .* over the limit of 1; raise TRAJUDGE"):
        load_yaml(small, "f.yaml")
