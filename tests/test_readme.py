"""Every list and number the README takes from a config says what the config says.

The demo's figures come from `examples/tau_airline/trajudge.yaml` (its task subset, judge,
labels), `specs.yaml` (the step budget) and the τ-bench file; the config reference table's
defaults come from the config models. The README once listed demo tasks 0, 1, 13, 21 and 12
while the config judged 0, 1, 13, 37 and 38.
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from trajudge.config import (
    DatasetConfig,
    LabelsConfig,
    LayersConfig,
    LimitsConfig,
    ReportConfig,
    TrajudgeConfig,
    load_config,
)
from trajudge.judges import DEFAULT_CACHE_PATH, LOCAL_DEFAULTS, JudgeSpec, load_rubric
from trajudge.rules import load_specs
from trajudge.trajectories import read_trajectories

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "tau_airline" / "trajudge.yaml"
WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}


def _flat(text: str) -> str:
    return " ".join(text.split())


def _and_list(text: str) -> list[str]:
    """``"0, 1, 13, 37 and 38"`` -> ``["0", "1", "13", "37", "38"]``."""
    head, _, last = text.rpartition(" and ")
    return [*(x.strip() for x in head.split(",")), last.strip()]


@pytest.fixture(scope="module")
def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def demo() -> dict[str, Any]:
    """What the demo config selects, worked out here from the config and the data."""
    cfg = load_config(DEMO)
    assert cfg.limits.tasks is not None, "the demo selects its tasks by id"
    assert (cfg.limits.max_tasks, cfg.limits.max_trials) == (None, None)
    assert cfg.dataset.path is not None and cfg.labels is not None and cfg.labels.path
    data = read_trajectories(cfg.dataset.path, fmt=cfg.dataset.format or "auto")
    chosen = [t for t in data.trajectories if t.task_id in set(cfg.limits.tasks)]
    trials = Counter(t.task_id for t in chosen)
    successes = {task: sum(bool(t.outcome) for t in chosen if t.task_id == task) for task in trials}
    (judge,) = cfg.judges
    rubric = load_rubric(judge.rubric)
    # reference mode with `reference: spec`: a trajectory is judged when its task has expected
    # calls, once per presentation order (two with swap) and sample
    assert rubric.mode == "reference" and judge.reference == "spec"
    judged = [t for t in chosen if data.specs.get(t.task_id) and data.specs[t.task_id].reference]
    calls = len(judged) * (2 if judge.swap else 1) * judge.samples
    ids = {t.id for t in chosen}
    with cfg.labels.path.open(encoding="utf-8", newline="") as f:
        label_ids = [row["trajectory_id"] for row in csv.DictReader(f)]
    k_max = max(trials.values())

    def pass_hat(k: int) -> float:  # unbiased pass^k, averaged over tasks
        return sum(math.comb(c, k) / math.comb(trials[t], k) for t, c in successes.items()) / len(
            successes
        )

    spec_set = load_specs(cfg.specs.path) if cfg.specs is not None else None
    assert spec_set is not None and spec_set.defaults.budgets is not None
    return {
        "cfg": cfg,
        "judge": judge,
        "tasks": [str(t) for t in cfg.limits.tasks],
        "trials": set(trials.values()),
        "successes": [successes[str(t)] for t in cfg.limits.tasks],
        "n": len(chosen),
        "calls": calls,
        "judged": len(judged),
        "labels_in": sum(i in ids for i in label_ids),
        "labels_out": sum(i not in ids for i in label_ids),
        "pass_hat": {k: pass_hat(k) for k in range(1, k_max + 1)},
        "max_steps": spec_set.defaults.budgets.max_steps,
    }


def test_demo_task_list_and_its_counts(readme: str, demo: dict[str, Any]) -> None:
    m = re.search(
        r"The demo judges a subset: tasks ([\d, ]+ and \d+), whose (\w+) trials succeed "
        r"([\d, ]+ and \d+) times — (\d+) trajectories, (\d+) judge calls",
        _flat(readme),
    )
    assert m is not None, "the README's demo section no longer names its task subset"
    assert _and_list(m[1]) == demo["tasks"]
    assert {m[2]} == {WORDS[n] for n in demo["trials"]}
    assert _and_list(m[3]) == [str(s) for s in demo["successes"]]
    assert (int(m[4]), int(m[5])) == (demo["n"], demo["calls"])


def test_the_demo_config_comment_matches_the_config(demo: dict[str, Any]) -> None:
    text = _flat(" ".join(line.lstrip("# ") for line in DEMO.read_text().splitlines()))
    m = re.search(
        r"five tasks whose (\d+) trials succeed ([\d, ]+ and \d+) times \(tasks ([\d, ]+)\) "
        r"= (\d+) trajectories, (\d+) judge calls, an environment pass\^1 of (\d+\.\d+)",
        text,
    )
    assert m is not None
    assert {int(m[1])} == demo["trials"] and len(demo["tasks"]) == 5
    assert _and_list(m[2]) == [str(s) for s in demo["successes"]]
    assert [t.strip() for t in m[3].split(",")] == demo["tasks"]
    assert (int(m[4]), int(m[5])) == (demo["n"], demo["calls"])
    assert float(m[6]) == pytest.approx(demo["pass_hat"][1], abs=0.005)


def test_demo_run_output_and_figures(readme: str, demo: dict[str, Any]) -> None:
    text, cfg, n = _flat(readme), demo["cfg"], demo["n"]
    name, source = cfg.dataset.name, cfg.labels.source
    # every demo dataset name in the README is the config's
    assert set(re.findall(r"\btau_airline_\w+", text)) == {name}
    # the tour's run comes after `make demo`: everything is stored, nothing is judged again
    assert f"{n} trajectories in '{name}' (0 added, 0 updated, {n} unchanged)" in text
    assert f"judging {'━' * 40} {demo['calls']}/{demo['calls']} " in text  # make demo's run
    assert (
        f"{demo['labels_in']} labels ({source}) in '{name}': 0 added, 0 updated, "
        f"{demo['labels_in']} unchanged; {demo['labels_out']} rows for trajectories outside the "
        "dataset"
    ) in text
    assert f"trajudge run: {name}" in text
    for row, value in (
        ("trajectories", n),
        ("judge calls made this run", 0),
        ("already stored (resumed)", demo["calls"]),
    ):
        assert re.search(rf"│ {re.escape(row)} │ {value} │", text), row
    assert re.search(rf"│ labels imported │ {demo['labels_in']} │", text)
    # the environment's pass^k on the subset, in the sentences and in the report table
    p = demo["pass_hat"]
    assert f"where the environment says pass^1 = {p[1]:.2f}" in text
    assert f"environment outcome: pass^4 = {p[4]:.2f} " in text
    row = " │ ".join(f"{p[k]:.2f}" for k in sorted(p))
    assert f"│ environment outcome │ — │ — │ — │ — │ {row} │" in text
    # the reference labels are the environment reward: the same pass^k
    assert f"│ reference labels ({source}) │ — │ — │ — │ — │ {row} │" in text
    assert f"reference labels ({source}): pass^4 = {p[4]:.2f} " in text
    assert f"over {demo['labels_in']} items" in text and f"vs {p[4]:.2f} by the environment" in text
    assert f"{n} trajectories checked;" in text
    assert f"│ 0 / {demo['calls']} │" in text  # the judge's errors column: of all its calls
    # the judge the demo configures
    judge = demo["judge"]
    assert f"the embedded `{judge.model}`" in text
    assert f"rubric `{judge.rubric}` in reference mode" in text
    assert judge.swap and "in both orders" in text


def test_step_budget_is_the_spec_files(readme: str, demo: dict[str, Any]) -> None:
    budgets = re.findall(r"a (\d+)-step budget as a gate", _flat(readme))
    assert len(budgets) == 2 and {int(b) for b in budgets} == {demo["max_steps"]}


# -- the config reference table --------------------------------------------------------------

DESCRIBED = {
    # rows whose default is said in words, checked by hand here
    "`db`": "`sqlite:///trajudge.db`",
    "`dataset.format`": "`auto`",
    "`dataset.name`": "file stem",
    "`limits.tasks` / `limits.max_tasks` / `limits.max_trials`": "all",
    "`specs.path`": "—",
    "`report.formats`": "all three",
    "`report.primary`": "first judge, else outcome",
    "`judges[]`": "",
}


def _table(readme: str) -> dict[str, tuple[str, str]]:
    section = readme.split("## Config reference", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| `") and len(cells) == 3:
            rows[cells[0]] = (cells[1], cells[2])
    return rows


def _fmt(value: Any) -> str:
    if value is None or value == []:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return f"`[{', '.join(str(v) for v in value)}]`"
    if isinstance(value, str | Path):
        return f"`{Path(value).as_posix() if isinstance(value, Path) else value}`"
    return str(value)


def _default(path: str) -> Any:
    roots: dict[str, Any] = {
        "dataset": DatasetConfig(),
        "labels": LabelsConfig(),
        "layers": LayersConfig(),
        "limits": LimitsConfig(),
        "report": ReportConfig(),
    }
    head, _, rest = path.partition(".")
    if rest:
        return getattr(roots[head], rest)
    if head == "cache":  # None in the model: the judges' default cache file
        return DEFAULT_CACHE_PATH
    return getattr(TrajudgeConfig(), head)


def test_config_reference_defaults_are_the_models(readme: str) -> None:
    rows = _table(readme)
    assert "`cache`" in rows and "`report.ks`" in rows, "the config reference table moved"
    for key, (_, default) in rows.items():
        if key in DESCRIBED:
            continue
        paths = [p.strip().strip("`") for p in key.split(" / ")]
        assert default == " / ".join(_fmt(_default(p)) for p in paths), key
    for key, said in DESCRIBED.items():
        assert key in rows, key
        if said:
            assert rows[key][1] == said, key
    # the words, checked against the models
    assert DatasetConfig().format is None  # None = detect, the reader's "auto"
    assert ReportConfig().formats == ["md", "html", "json"]  # "all three"
    assert (LimitsConfig().tasks, LimitsConfig().max_tasks, LimitsConfig().max_trials) == (
        None,
        None,
        None,
    )


def test_config_reference_judge_defaults_are_the_models(readme: str) -> None:
    meaning = _table(readme)["`judges[]`"][0]
    said = dict(re.findall(r"`(\w+)` \(([^)]*)\)", meaning))
    fields = JudgeSpec.model_fields
    stated = 0
    for name, text in said.items():
        default = fields[name].default
        if isinstance(default, bool):
            assert text == str(default).lower(), name
        elif isinstance(default, int | float):
            general, _, local = text.partition(";")
            assert float(general.strip().removesuffix(" s")) == default, name
            if local:  # "512; 160 for `local/` models": the embedded model's measured default
                number = re.match(r"\s*([\d.]+)", local)
                assert number is not None, name
                assert float(number.group(1)) == LOCAL_DEFAULTS[name], name
        else:
            continue
        stated += 1
    # every numeric or yes/no option with a default is listed with it
    expected = [
        n for n, f in fields.items() if isinstance(f.default, int | float) and f.default is not None
    ]
    assert sorted(n for n in said if n in expected) == sorted(expected)
    assert stated == len(expected)


def test_the_commands_said_to_take_no_store_are_those_without_db(readme: str) -> None:
    import typer.main

    import trajudge.cli._commands  # noqa: F401 - registers the commands
    from trajudge.cli import app

    def leaves(cmd: Any, prefix: str = "") -> dict[str, Any]:
        subs = getattr(cmd, "commands", None)
        if not subs:
            return {prefix.strip(): cmd}
        out: dict[str, Any] = {}
        for name, sub in subs.items():
            out.update(leaves(sub, f"{prefix} {name}"))
        return out

    commands = leaves(typer.main.get_command(app))
    without = {n for n, c in commands.items() if not any("--db" in p.opts for p in c.params)}
    said = re.search(r"`(\w+)`, `([\w ]+)` and `([\w ]+)` read\s+files only", readme)
    assert said is not None, "the README no longer names the commands without a store"
    assert without == set(said.groups())
    assert _flat(readme).count("Every command that uses the store takes `--db URL`") == 2


def test_the_input_limits_table_is_the_limits(readme: str) -> None:
    from trajudge.trajectories import _limits

    section = readme.split("**Limits on input files.**", 1)[1].split("\n\n", 2)[1]
    rows = re.findall(r"^\| `(TRAJUDGE_\w+)` \|.*\| ([\d,]+)(?: \(.*\))? \|$", section, re.M)
    limits = [v for v in vars(_limits).values() if isinstance(v, _limits.Limit)]
    assert {env: int(default.replace(",", "")) for env, default in rows} == {
        limit.env: limit.default for limit in limits
    }
