"""`trajudge import`: one red line and exit code 2 on bad input, nothing stored; idempotent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.testing

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.store import Store
from trajudge.trajectories import FORMATS, Step, Trajectory, write_jsonl

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
    before = store.trajectory_sha256s("gpt-4o-airline")
    store.close()
    # the same file again changes nothing: in this process, and in a new one whose string
    # hashing (set and dict order of str keys) differs
    again = run(str(tau_bench_file), "--db", db_url)
    assert "imported 200 trajectories (0 added, 0 updated, 200 unchanged)" in again.stdout
    env = {**os.environ, "PYTHONHASHSEED": "12345", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    code = "from trajudge.cli import main; main()"
    cmd = [sys.executable, "-c", code, "import", str(tau_bench_file), "--db", db_url]
    other = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert other.returncode == 0, other.stderr
    assert "imported 200 trajectories (0 added, 0 updated, 200 unchanged)" in other.stdout
    store = Store(db_url)
    assert store.trajectory_sha256s("gpt-4o-airline") == before
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
    fixture = Path(__file__).parents[1] / "fixtures" / "traces" / "pydantic_ai_v6.jsonl"
    result = run(str(fixture), "--db", db_url, "--format", "otel")
    assert result.exit_code == 0, result.output
    assert "imported 1 trajectory (1 added" in result.stdout
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
    assert store.datasets() == ["chats", "pydantic_ai_v6"]
    store.close()


TRACES = Path(__file__).parents[1] / "fixtures" / "traces"


def test_unknown_file_gets_a_one_line_diagnosis_and_nothing_is_stored(
    tmp_path: Path, db_url: str
) -> None:
    cases = {
        "settings.json": ('{"theme": "dark", "size": 3}', "a JSON object with keys size, theme"),
        "notes.csv": ("a,b\n1,2\n", "not JSON"),
    }
    for name, (text, looks) in cases.items():
        path = write(tmp_path, name, text)
        result = run(str(path), "--db", db_url)
        assert result.exit_code == 2
        supported = ", ".join(f for f in FORMATS if f != "auto")
        assert result.stderr == (
            f"error: {path}: unrecognised format: {looks} (supported: {supported})\n"
        )
        assert_nothing_stored(db_url, path.stem)


def test_a_record_of_trajudge_field_names_gets_the_field_level_error(
    tmp_path: Path, db_url: str
) -> None:
    """A line whose keys are all trajudge's own (a subset of the trajectory fields) is meant
    as its JSON Lines: the error names the missing or wrong field, as the README shows, not
    "unrecognised format" (what ``{"id": 1}`` got)."""
    cases = {
        "bad.jsonl": ('{"id": 1}\n', "line 1: task_id: Field required"),
        "no_id.jsonl": ('{"task_id": "t", "outcome": true}\n', "line 1: id: Field required"),
        "trial.jsonl": (
            '{"id": "a", "task_id": "t", "trial": "first"}\n',
            "line 1: trial: Input should be a valid integer",
        ),
    }
    for name, (text, says) in cases.items():
        path = write(tmp_path, name, text)
        result = run(str(path), "--db", db_url)
        assert result.exit_code == 2
        assert result.stderr.startswith(f"error: {path}: {says}"), result.stderr
        assert result.stderr.count("\n") == 1
        assert_nothing_stored(db_url, path.stem)


def test_a_zip_that_is_not_an_inspect_log(tmp_path: Path, db_url: str) -> None:
    import zipfile

    path = tmp_path / "bundle.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("readme.txt", "hi")
    result = run(str(path), "--db", db_url)
    assert result.exit_code == 2
    # the message is shown as text: "[inspect]"-like brackets must not be eaten as markup
    assert "unrecognised format: a zip archive" in result.stderr
    assert result.stderr.count("\n") == 1
    assert_nothing_stored(db_url, "bundle")


def test_error_text_is_never_read_as_markup(tmp_path: Path, db_url: str) -> None:
    path = tmp_path / "[red]runs.jsonl"
    path.write_text("{oops\n", encoding="utf-8")
    result = run(str(path), "--db", db_url)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}: line 1: invalid JSON")


def test_ignored_parts_are_counted_and_strict_fails(tmp_path: Path, db_url: str) -> None:
    # a real to_input_list() dump plus an item kind the reader does not use
    items = json.loads((TRACES / "responses_openai_agents.json").read_text())
    items.insert(1, {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "s", "tools": []})
    path = write(tmp_path, "items.json", json.dumps(items))
    result = run(str(path), "--db", db_url)
    assert result.exit_code == 0, result.output
    assert "1 item of a kind not read was ignored (see --verbose)" in result.stdout
    verbose = run(str(path), "--db", db_url, "--dataset", "v", "--verbose")
    assert "item of a kind not read: record 0: items[1] (mcp_list_tools)" in verbose.stdout
    strict = run(str(path), "--db", db_url, "--dataset", "s", "--strict")
    assert strict.exit_code == 2
    assert strict.stderr == (f"error: {path}: 1 item of a kind not read was ignored (--strict)\n")
    assert_nothing_stored(db_url, "s")


def test_task_trial_outcome_from_the_command_line_and_a_mapping(
    tmp_path: Path, db_url: str
) -> None:
    chat = TRACES / "openai_chat.json"
    result = run(
        str(chat),
        "--db",
        db_url,
        "--dataset",
        "d",
        "--task-id",
        "cancel",
        "--trial",
        "3",
        "--failed",
    )
    assert result.exit_code == 0, result.output
    store = Store(db_url)
    (t,) = store.trajectories("d")
    assert (t.id, t.task_id, t.trial, t.outcome) == ("openai_chat", "cancel", 3, False)
    # fine-tuning JSONL has no task ids: a mapping gives them by trajectory id
    mapping = write(
        tmp_path, "map.csv", "id,task_id,trial,outcome\nopenai_finetune-0,cancel,7,pass\n"
    )
    result = run(str(TRACES / "openai_finetune.jsonl"), "--db", db_url, "--map", str(mapping))
    assert result.exit_code == 0, result.output
    (t,) = store.trajectories("openai_finetune")
    assert (t.task_id, t.trial, t.outcome) == ("cancel", 7, True)
    bad = write(tmp_path, "bad.csv", "id,task_id\nnope,x\n")
    result = run(
        str(TRACES / "openai_finetune.jsonl"), "--db", db_url, "--map", str(bad), "--dataset", "b"
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"error: {TRACES / 'openai_finetune.jsonl'}: mapping: ids not in the file: 'nope'"
    )
    assert not store.has_dataset("b")
    store.close()
