"""Rule checks over a Parquet file block by block, locally and on a local Ray cluster.

The file is written by trajudge's own Parquet writer in small row groups (several blocks).
Both engines are compared with the in-memory path (``read_parquet`` then ``check_dataset``):
the same reports, the same counts; and with each other: the same summary and report file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer.testing

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.core import InputError
from trajudge.rules import check_dataset, check_parquet, summarize_reports
from trajudge.trajectories import (
    ExpectedCall,
    Step,
    TaskSpec,
    Trajectory,
    parquet_blocks,
    read_parquet,
    write_parquet,
)

pytestmark = pytest.mark.timeout(600)

TOOLS = ("search", "book", "cancel", "delete_account", "lookup")


def _trajectories(n: int) -> list[Trajectory]:
    out = []
    for i in range(n):
        tools = [TOOLS[(i * k) % len(TOOLS)] for k in range(1, 2 + i % 4)]
        if i % 7 == 0:
            tools += [tools[-1]] * 3  # a loop
        out.append(
            Trajectory(
                id=f"r{i}",
                task_id=f"t{i % 9}",
                trial=i // 9,
                input="go",
                steps=[
                    Step(tool=t, args={"q": i % 3}, output="ok", error=None if i % 5 else "boom")
                    for t in tools
                ],
                final_answer="done",
                outcome=i % 3 == 0,
            )
        )
    return out


SPECS = {
    "t1": TaskSpec(forbidden_tools=["delete_account"]),
    "t2": TaskSpec(required_tools=["book"], pass_threshold=0.5),
    "t3": TaskSpec(reference=[ExpectedCall(tool="search", args={"q": 0})]),
}
DEFAULTS = TaskSpec(high_risk_tools=["cancel"], max_failure_rate=0.5)


@pytest.fixture(scope="module")
def runs_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("blocks") / "runs.parquet"
    write_parquet(path, _trajectories(300), row_group_rows=64)
    return path


def _expected(path: Path) -> tuple[list[dict[str, Any]], Any]:
    reports = check_dataset(read_parquet(path), SPECS, DEFAULTS)
    return [r.to_dict() for r in reports], summarize_reports(reports)


def _reports(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in pq.read_table(path).column("data").to_pylist()]


def test_blocks_come_from_the_row_groups(runs_file: Path) -> None:
    blocks = parquet_blocks(runs_file)
    assert [b[1] for b in blocks] == [0, 64, 128, 192, 256]
    assert sum(b[2] for b in blocks) == 300


def test_local_blocks_match_the_in_memory_checks(runs_file: Path, tmp_path: Path) -> None:
    reports, summary = _expected(runs_file)
    assert 0 < summary.gate_failures < summary.trajectories  # the data exercise the gates
    seen: list[int] = []
    got = check_parquet(
        runs_file, SPECS, DEFAULTS, out=tmp_path / "r.parquet", on_progress=seen.append
    )
    assert seen == [64, 64, 64, 64, 44]
    assert _reports(tmp_path / "r.parquet") == reports
    assert got.checks.keys() == summary.checks.keys()
    for name, row in summary.checks.items():
        assert got.checks[name] == {**row, "mean_score": pytest.approx(row["mean_score"])}
    assert (got.trajectories, got.passed, got.gate_failures, got.regressions) == (
        summary.trajectories,
        summary.passed,
        summary.gate_failures,
        summary.regressions,
    )
    assert got.mean_score == pytest.approx(summary.mean_score)


@pytest.mark.ray
def test_ray_gives_what_the_local_engine_gives(
    ray_cluster: Any, runs_file: Path, tmp_path: Path
) -> None:
    local = check_parquet(runs_file, SPECS, DEFAULTS, out=tmp_path / "local.parquet")
    on_ray = check_parquet(runs_file, SPECS, DEFAULTS, engine="ray", out=tmp_path / "ray.parquet")
    assert on_ray == local  # floats too: the same blocks summed in the same order
    assert pq.read_table(tmp_path / "ray.parquet").equals(pq.read_table(tmp_path / "local.parquet"))
    # and through the command line, with a spec file
    spec = tmp_path / "spec.yaml"
    spec.write_text("tasks:\n  t1:\n    forbidden_tools: [delete_account]\n")
    args = ["check", "--parquet", str(runs_file), "--spec", str(spec), "--json"]
    cli_local = typer.testing.CliRunner().invoke(app, args)
    cli_ray = typer.testing.CliRunner().invoke(app, [*args, "--engine", "ray"])
    assert cli_local.exit_code == 0 and cli_ray.exit_code == 0, cli_ray.output
    doc = json.loads(cli_ray.output)
    assert doc == json.loads(cli_local.output)
    expected = summarize_reports(check_dataset(read_parquet(runs_file), {"t1": SPECS["t1"]}))
    assert doc["summary"]["gate_failures"] == expected.gate_failures


@pytest.mark.ray
def test_a_bad_row_is_one_error_naming_it_on_both_engines(
    ray_cluster: Any, runs_file: Path, tmp_path: Path
) -> None:
    table = pq.read_table(runs_file)
    steps = table.column("steps").to_pylist()
    steps[150] = "[{not json"
    bad = tmp_path / "bad.parquet"
    pq.write_table(
        table.set_column(table.schema.get_field_index("steps"), "steps", pa.array(steps)),
        bad,
        row_group_size=64,
    )
    for engine in ("local", "ray"):
        out = tmp_path / f"{engine}.parquet"
        with pytest.raises(InputError) as err:
            check_parquet(bad, SPECS, DEFAULTS, engine=engine, out=out)  # type: ignore[arg-type]
        assert (err.value.record, err.value.field) == ("row 150", "steps"), engine
        assert str(bad) in err.value.file
        assert not out.exists()  # no partial report file
    result = typer.testing.CliRunner().invoke(
        app, ["check", "--parquet", str(bad), "--engine", "ray"]
    )
    assert result.exit_code == 2 and "row 150" in result.output
    assert "Traceback" not in result.output
