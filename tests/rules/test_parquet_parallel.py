"""check_parquet's fast path (lean rows, worker processes) against today's path.

Today's path reads each block as pydantic models in one process; the fast path reads lean
rows and spreads the blocks over spawned processes. On 300 varied trajectories (a failure of
every kind of check, conversations, usage, file snapshots, non-ASCII tools) written in six row
groups, every way gives the same summary, floats included, the same report file and the same
command output; three figures are worked out here from the data without trajudge.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import typer.testing

import trajudge.cli._commands  # noqa: F401  (registers the commands)
import trajudge.rules._blocks as blocks
from trajudge.cli import app
from trajudge.core import InputError
from trajudge.rules import (
    CheckResult,
    check_dataset,
    check_parquet,
    load_specs,
    register_check,
    resolve_specs,
    unregister_check,
)
from trajudge.trajectories import (
    Message,
    Step,
    Trajectory,
    Usage,
    iter_parquet_block,
    read_parquet,
    write_parquet,
)

pytestmark = pytest.mark.timeout(600)

TOOLS = ("search", "book", "pay", "cancel", "ask", "delete", "búsqueda")
TASKS = ("req", "forbid", "ref", "any", "args", "files", "schema", "budget", "plain")
SPEC = """
defaults:
  high_risk_tools: [cancel]
  approval_tools: [ask]
  max_failure_rate: 0.3
tasks:
  req: {required_tools: [book, pay]}
  forbid: {forbidden_tools: [delete]}
  ref: {reference: [{tool: search, args: {q: 1}}, {tool: book}]}
  any: {reference: [{tool: search}, {tool: pay}], match_mode: any_order}
  args: {arg_checks: [{tool: book, path: date, op: equals, value: "2026-01-01"}]}
  files: {allowed_file_changes: ["out/*"]}
  schema: {output_schema: {type: object, required: [answer]}}
  budget: {budgets: {max_steps: 4, max_tokens: 300, baseline: {steps: 3}, tolerance: 1.5}}
  plain: {checks: []}
"""
N = 300


def _step(rng: random.Random) -> Step:
    tool = rng.choice(TOOLS)
    args: dict[str, Any] = {"q": rng.randint(0, 2)} if rng.random() < 0.8 else {}
    if tool == "book":
        args["date"] = rng.choice(["2026-01-01", "2026-02-02"])
    ok = rng.random() > 0.2
    return Step(
        tool=tool,
        args=args,
        ok=ok,
        output=rng.choice(["done", "denied", None]),
        error=None if ok else "boom",
        approved=rng.choice([None, None, True, False]),
        tokens=rng.choice([None, 5]),
        latency_ms=rng.choice([None, 1.5, 3.0]),
    )


def _trajectories() -> list[Trajectory]:
    rng = random.Random(29)
    out = []
    for i in range(N):
        task = TASKS[i % len(TASKS)]
        steps = [_step(rng) for _ in range(rng.randint(0, 7))]
        if task in ("ref", "any") and i % 2:  # runs that meet the reference
            steps = [
                Step(tool="search", args={"q": 1}),
                Step(tool="book" if task == "ref" else "pay"),
            ]
        if i % 9 == 0 and steps:
            steps += [steps[-1].model_copy()] * 3  # a loop
        messages = [Message(role="user", content="go")]
        if steps and i % 2:
            messages.append(Message(role="assistant", steps=list(range(len(steps)))))
            messages += [Message(role="tool", step=j) for j in range(len(steps))]
        snapshot = i % 4 != 0
        out.append(
            Trajectory(
                id=f"r{i}",
                task_id=task,
                trial=i // len(TASKS),
                input="go",
                messages=messages,
                steps=steps,
                final_answer=rng.choice([None, '{"answer": 1}', '{"x": 1}', "not json"]),
                outcome=rng.choice([None, True, False]),
                usage=Usage(
                    prompt_tokens=rng.choice([None, 100, 250]),
                    completion_tokens=rng.choice([None, 50]),
                    cost_usd=rng.choice([None, 0.01]),
                    latency_s=rng.choice([None, 2.0]),
                    turns=rng.choice([None, 3]),
                ),
                files_before={"a.txt": "h1", "out/x": "h2"} if snapshot else None,
                files_after={"a.txt": rng.choice(["h1", "h9"]), "out/x": "h3", "out/new": "h4"}
                if snapshot
                else None,
                metadata={"seed": i} if i % 5 else {},
            )
        )
    return out


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[Trajectory]]:
    folder = tmp_path_factory.mktemp("parallel")
    trajs = _trajectories()
    write_parquet(folder / "runs.parquet", trajs, row_group_rows=50)
    (folder / "spec.yaml").write_text(SPEC)
    return folder / "runs.parquet", folder / "spec.yaml", trajs


def _check(runs: Path, spec: Path, out: Path, **kw: Any) -> dict[str, Any]:
    tasks, defaults = resolve_specs({}, load_specs(spec))
    return check_parquet(runs, tasks, defaults, out=out, **kw).to_dict()


def test_every_path_gives_today_s_summary_and_report_file(
    data: tuple[Path, Path, list[Trajectory]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs, spec, _ = data
    lean = _check(runs, spec, tmp_path / "lean.parquet", workers=1)
    spread = _check(runs, spec, tmp_path / "spread.parquet", workers=2)
    with monkeypatch.context() as m:  # today's path: models, in this process
        m.setattr(blocks, "iter_lean_block", iter_parquet_block)
        today = _check(runs, spec, tmp_path / "today.parquet", workers=1)
    assert lean == today and spread == today  # floats included
    files = [pq.read_table(tmp_path / f"{n}.parquet") for n in ("lean", "spread", "today")]
    assert files[0].equals(files[2]) and files[1].equals(files[2])

    # and the reports are those of check_dataset on the whole file in memory
    tasks, defaults = resolve_specs({}, load_specs(spec))
    reports = check_dataset(read_parquet(runs), tasks, defaults)
    assert [json.loads(x) for x in files[0].column("data").to_pylist()] == [
        r.to_dict() for r in reports
    ]
    # every check ran, and every one failed somewhere (the data exercise each of them)
    for name, row in today["checks"].items():
        assert 0 < row["failed"] < row["runs"], (name, row)
    assert len(today["checks"]) == 14
    assert 0 < today["gate_failures"] < today["passed"] + today["gate_failures"] <= N


def test_three_figures_worked_out_from_the_data(
    data: tuple[Path, Path, list[Trajectory]], tmp_path: Path
) -> None:
    runs, spec, trajs = data
    got = _check(runs, spec, tmp_path / "r.parquet", workers=2)["checks"]
    # forbidden_tools runs on every trajectory of task "forbid" and fails where one called delete
    forbid = [t for t in trajs if t.task_id == "forbid"]
    called = sum(any(s.tool == "delete" for s in t.steps) for t in forbid)
    assert (got["forbidden_tools"]["runs"], got["forbidden_tools"]["failed"]) == (
        len(forbid),
        called,
    )
    # failed_calls runs where there are calls; it fails above the defaults' rate of 0.3 and
    # scores 1 - rate
    rates = [sum(not s.ok for s in t.steps) / len(t.steps) for t in trajs if t.steps]
    row = got["failed_calls"]
    assert (row["runs"], row["failed"]) == (len(rates), sum(r > 0.3 for r in rates))
    assert row["mean_score"] == pytest.approx(sum(1 - r for r in rates) / len(rates), abs=1e-12)
    # loops: the same tool with the same arguments more than twice (loop_threshold 2)
    looped = sum(
        max(Counter((s.tool, json.dumps(s.args, sort_keys=True)) for s in t.steps).values()) > 2
        for t in trajs
        if t.steps
    )
    assert (got["loops"]["runs"], got["loops"]["failed"]) == (N, looped)
    assert looped >= sum(1 for t in trajs[::9] if t.steps)  # the planted loops, at least


def test_the_command_prints_and_writes_the_same_with_one_or_two_processes(
    data: tuple[Path, Path, list[Trajectory]], tmp_path: Path
) -> None:
    runs, spec, _ = data
    outputs = {}
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.parquet"
        args = ["check", "--parquet", str(runs), "--spec", str(spec), "--out", str(out)]
        result = typer.testing.CliRunner().invoke(app, [*args, "--json", "--workers", workers])
        assert result.exit_code == 0, result.output
        outputs[workers] = json.loads(result.output)["summary"]
    assert outputs["1"] == outputs["2"]
    assert pq.read_table(tmp_path / "w1.parquet").equals(pq.read_table(tmp_path / "w2.parquet"))


def test_a_custom_check_reaches_the_worker_processes(
    data: tuple[Path, Path, list[Trajectory]], tmp_path: Path
) -> None:
    import rules_helpers  # registers answer_mentions_task on import, as a user's module does

    runs, _, _ = data
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "defaults:\n  checks: [{name: answer_mentions_task, params: {word: answer}}]\n"
        "  forbidden_tools: [delete]\n"
    )
    one = _check(runs, spec, tmp_path / "one.parquet", workers=1)
    two = _check(runs, spec, tmp_path / "two.parquet", workers=2)
    assert one == two and one["checks"]["answer_mentions_task"]["runs"] == N
    assert 0 < one["checks"]["answer_mentions_task"]["failed"] < N
    ran_in = {
        r["data"]["pid"]
        for doc in pq.read_table(tmp_path / "two.parquet").column("data").to_pylist()
        for r in json.loads(doc)["results"]
        if r["check"] == rules_helpers.answer_mentions_task.__name__
    }
    assert ran_in and os.getpid() not in ran_in  # in the workers (one may take every block)


def test_a_bad_row_in_a_worker_is_one_error_naming_it(
    data: tuple[Path, Path, list[Trajectory]], tmp_path: Path
) -> None:
    runs, spec, _ = data
    table = pq.read_table(runs)
    steps = table.column("steps").to_pylist()
    steps[170] = json.dumps([{"tool": "search", "ok": "yes"}])  # the model refuses a string
    bad = tmp_path / "bad.parquet"
    pq.write_table(
        table.set_column(table.schema.get_field_index("steps"), "steps", [steps]),
        bad,
        row_group_size=50,
    )
    out = tmp_path / "r.parquet"
    with pytest.raises(InputError) as err:
        _check(bad, spec, out, workers=2)
    assert (err.value.record, err.value.field) == ("row 170", "steps[0].ok")
    assert not out.exists()
    result = typer.testing.CliRunner().invoke(
        app, ["check", "--parquet", str(bad), "--workers", "2"]
    )
    assert result.exit_code == 2 and "row 170: steps[0].ok" in result.output
    assert "Traceback" not in result.output


def test_a_custom_check_that_cannot_travel_is_run_here(
    data: tuple[Path, Path, list[Trajectory]], tmp_path: Path
) -> None:
    runs, _, _ = data
    here = os.getpid()
    register_check("pid_here")(
        lambda t, spec: CheckResult("pid_here", os.getpid() == here, data={"pid": os.getpid()})
    )
    try:
        spec = tmp_path / "spec.yaml"
        spec.write_text("defaults:\n  checks: [{name: pid_here}]\n")
        got = _check(runs, spec, tmp_path / "r.parquet", workers=2)  # a lambda: not picklable
    finally:
        unregister_check("pid_here")
    assert got["checks"]["pid_here"] == {**got["checks"]["pid_here"], "runs": N, "failed": 0}
