"""`trajudge import`: one red line and exit code 2 on bad input, nothing stored; idempotent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer.testing

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory, write_jsonl

runner = typer.testing.CliRunner()
GOOD = '{"id": "a-0", "task_id": "a", "steps": [{"tool": "search"}]}'


def run(*args: str) -> typer.testing.Result:
    return runner.invoke(app, ["import", *args])


def assert_nothing_stored(db_url: str, dataset: str) -> None:
    store = Store(db_url)
    try:
        assert not store.has_dataset(dataset)
        assert store.count_trajectories(dataset) == 0
        assert store.task_specs(dataset) == {}
    finally:
        store.close()


def test_import_and_reimport_is_idempotent(tmp_path: Path, db_url: str) -> None:
    path = tmp_path / "runs.jsonl"
    write_jsonl(path, [Trajectory(id="a-0", task_id="a"), Trajectory(id="b-0", task_id="b")])
    first = run(str(path), "--db", db_url)
    assert first.exit_code == 0, first.output
    assert first.stdout.strip().endswith(
        "imported 2 trajectories (2 added, 0 updated, 0 unchanged), 0 task specs into dataset runs"
    )
    second = run(str(path), "--db", db_url)
    assert second.exit_code == 0, second.output
    assert "imported 2 trajectories (0 added, 0 updated, 2 unchanged)" in second.stdout
    # a changed trajectory is updated, the other left alone
    write_jsonl(
        path, [Trajectory(id="a-0", task_id="a", outcome=True), Trajectory(id="b-0", task_id="b")]
    )
    third = run(str(path), "--db", db_url, "--dataset", "runs")
    assert "imported 2 trajectories (0 added, 1 updated, 1 unchanged)" in third.stdout
    store = Store(db_url)
    assert store.count_trajectories("runs") == 2
    stored = store.trajectory("runs", "a-0")
    assert stored is not None and stored.outcome is True
    store.close()


def test_dataset_name_and_ten_megabyte_output(tmp_path: Path, db_url: str) -> None:
    big = "y" * (10 * 1024 * 1024)
    path = tmp_path / "big.jsonl"
    write_jsonl(path, [Trajectory(id="big", task_id="t", steps=[Step(tool="dump", output=big)])])
    result = run(str(path), "--db", db_url, "--dataset", "huge")
    assert result.exit_code == 0, result.output
    assert "into dataset huge" in result.stdout
    store = Store(db_url)
    back = store.trajectory("huge", "big")
    assert back is not None and back.steps[0].output == big
    store.close()


def test_tau_bench_file(tau_bench_file: Path, db_url: str) -> None:
    result = run(str(tau_bench_file), "--db", db_url)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith(
        "imported 200 trajectories (200 added, 0 updated, 0 unchanged), 50 task specs "
        "into dataset gpt-4o-airline"
    )
    store = Store(db_url)
    assert len(store.task_specs("gpt-4o-airline")) == 50
    store.close()


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


CASES = {
    "broken_json": (GOOD + '\n{"id": "b", "task_id": ', "line 2: invalid JSON: Expecting value"),
    "wrong_type": (
        GOOD + '\n{"id": "b", "task_id": "b", "steps": [{"tool": "x", "ok": "yes"}]}',
        "line 2: steps[0].ok: Input should be a valid boolean",
    ),
    "missing_id": (GOOD + '\n{"task_id": "b"}', "line 2: id: Field required"),
    "missing_task_id": (GOOD + '\n{"id": "b"}', "line 2: task_id: Field required"),
    "duplicate": (
        GOOD + '\n{"id": "b", "task_id": "a"}',
        "line 2: task_id/trial: duplicate (task_id, trial) = ('a', 0) (first at line 1)",
    ),
    "empty": ("", "the file is empty"),
    "non_utf8": (GOOD.encode() + b'\n{"id": "b\xc3\x28"}', "line 2: not valid UTF-8 (byte 0xc3"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_file_exits_2_with_one_line_and_stores_nothing(
    tmp_path: Path, db_url: str, case: str
) -> None:
    text, expected = CASES[case]
    path = write(tmp_path, f"{case}.jsonl", text)
    result = run(str(path), "--db", db_url)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}: {expected}")
    assert result.stderr.count("\n") == 1  # exactly one line
    assert "Traceback" not in result.output
    assert_nothing_stored(db_url, case)


def test_missing_path_directory_and_unknown_format(tmp_path: Path, db_url: str) -> None:
    missing = tmp_path / "missing.jsonl"
    result = run(str(missing), "--db", db_url)
    assert (result.exit_code, result.stderr) == (2, f"error: {missing}: no such file\n")
    assert_nothing_stored(db_url, "missing")

    folder = tmp_path / "folder"
    folder.mkdir()
    result = run(str(folder), "--db", db_url)
    assert (result.exit_code, result.stderr) == (
        2,
        f"error: {folder}: is a directory, expected a file\n",
    )
    assert_nothing_stored(db_url, "folder")

    path = write(tmp_path, "ok.jsonl", GOOD)
    result = run(str(path), "--db", db_url, "--format", "csv")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}: format: unknown format 'csv' (choose from")
    assert_nothing_stored(db_url, "ok")


def test_failure_on_reimport_keeps_the_previous_rows(tmp_path: Path, db_url: str) -> None:
    path = write(tmp_path, "runs.jsonl", GOOD)
    assert run(str(path), "--db", db_url).exit_code == 0
    path.write_text(GOOD + '\n{"id": "b", "task_id": "b", "trial": -1}\n', encoding="utf-8")
    result = run(str(path), "--db", db_url)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}: line 2: trial: Input should be greater")
    store = Store(db_url)
    assert [t.id for t in store.trajectories("runs")] == ["a-0"]
    store.close()


def test_otel_and_openai_via_cli(tmp_path: Path, db_url: str) -> None:
    fixture = Path(__file__).parents[1] / "trajectories" / "data" / "otel_genai_traces.jsonl"
    result = run(str(fixture), "--db", db_url, "--format", "otel")
    assert result.exit_code == 0, result.output
    assert "imported 2 trajectories (2 added" in result.stdout
    chats = write(
        tmp_path,
        "chats.json",
        json.dumps([{"task_id": 1, "messages": [{"role": "user", "content": "hi"}]}]),
    )
    result = run(str(chats), "--db", db_url)
    assert result.exit_code == 0, result.output
    store = Store(db_url)
    t = store.trajectory("chats", "1-0")
    assert t is not None and t.input == "hi"
    assert store.datasets() == ["chats", "otel_genai_traces"]
    store.close()
