"""Native JSONL and Parquet: exact round trips, atomic writes, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trajudge.core import InputError
from trajudge.trajectories import (
    Step,
    Trajectory,
    Usage,
    read_jsonl,
    read_parquet,
    write_jsonl,
    write_parquet,
)


def sample() -> list[Trajectory]:
    return [
        Trajectory(
            id="a-0",
            task_id="a",
            trial=0,
            input="Book a flight to Zürich ✈",
            steps=[
                Step(
                    tool="search",
                    args={"q": "ZRH", "n": 3, "nested": {"b": [1, 2.5, None], "a": True}},
                    output="found 3",
                    tokens=12,
                    latency_ms=12.25,
                    call_id="c1",
                ),
                Step(tool="book", args={}, ok=False, error="Error: sold out", approved=False),
            ],
            final_answer="Sorry, sold out.",
            outcome=False,
            usage=Usage(prompt_tokens=100, completion_tokens=7, cost_usd=0.0013, latency_s=2.5),
            intent="book",
            files_before={"a.txt": "h1"},
            files_after={"a.txt": "h2", "b.txt": "h3"},
            metadata={"model": "gpt-4o", "x": None, "scores": [0.1, 1e-300, 12345678901234567890]},
        ),
        Trajectory(id="a-1", task_id="a", trial=1),
        Trajectory(id="b-0", task_id="b", input="", metadata={"empty": {}}),
    ]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_round_trip_is_exact(tmp_path: Path, fmt: str) -> None:
    items = sample()
    path = tmp_path / f"runs.{fmt}"
    if fmt == "jsonl":
        write_jsonl(path, items)
        back = read_jsonl(path)
    else:
        write_parquet(path, items)
        back = read_parquet(path)
    assert back == items
    assert [t.content_hash() for t in back] == [t.content_hash() for t in items]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_ten_megabyte_output_round_trips(tmp_path: Path, fmt: str) -> None:
    big = "x" * (10 * 1024 * 1024) + "é"
    items = [Trajectory(id="big", task_id="t", steps=[Step(tool="dump", output=big)])]
    path = tmp_path / f"big.{fmt}"
    (write_jsonl if fmt == "jsonl" else write_parquet)(path, items)
    back = (read_jsonl if fmt == "jsonl" else read_parquet)(path)
    assert back[0].steps[0].output == big


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_failed_write_leaves_previous_file_and_no_temp(
    tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / f"runs.{fmt}"
    writer = write_jsonl if fmt == "jsonl" else write_parquet
    writer(path, sample()[:1])
    before = path.read_bytes()
    renamed: list[tuple[Path, Path]] = []

    def failing_replace(src: str | Path, dst: str | Path) -> None:
        renamed.append((Path(src), Path(dst)))
        assert Path(src).stat().st_size > 0  # the new content was fully written first
        raise OSError("disk on fire")

    monkeypatch.setattr("trajudge.trajectories._io.os.replace", failing_replace)
    with pytest.raises(OSError, match="disk on fire"):
        writer(path, sample())
    src, dst = renamed[0]
    assert src.parent == tmp_path and dst == path  # temp file beside the target: atomic rename
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_jsonl_file_is_one_object_per_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    write_jsonl(path, sample())
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    assert json.loads(lines[1]) == {
        "id": "a-1",
        "task_id": "a",
        "trial": 1,
        "input": "",
        "steps": [],
        "usage": {},
        "metadata": {},
    }


def write_lines(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GOOD = '{"id": "a-0", "task_id": "a", "steps": [{"tool": "search"}]}'


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ('{"id": "a-1", "task_id": "a", "trial": 1, ', "line 2: invalid JSON: Expecting"),
        (
            '{"id": "a-1", "task_id": "a", "trial": 1, "steps": [{"tool": "x", "ok": "no"}]}',
            "line 2: steps[0].ok: Input should be a valid boolean",
        ),
        (
            '{"id": "a-1", "task_id": "a", "trial": "1"}',
            "line 2: trial: Input should be a valid integer",
        ),
        ('{"task_id": "a", "trial": 1}', "line 2: id: Field required"),
        ('{"id": "a-1", "trial": 1}', "line 2: task_id: Field required"),
        ('{"id": "a-1", "task_id": "a", "trial": 1, "colour": 1}', "line 2: colour: Extra inputs"),
        ('["a-1"]', "line 2: expected a JSON object, got a list"),
        (
            '{"id": "a-1", "task_id": "a", "trial": 0}',
            "line 2: task_id/trial: duplicate (task_id, trial) = ('a', 0) (first at line 1)",
        ),
        ('{"id": "a-0", "task_id": "a", "trial": 1}', "line 2: id: duplicate id 'a-0'"),
    ],
)
def test_jsonl_errors_name_file_line_and_field(tmp_path: Path, bad: str, expected: str) -> None:
    path = write_lines(tmp_path, GOOD, bad)
    with pytest.raises(InputError) as info:
        read_jsonl(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {expected}")
    assert "\n" not in message


def test_jsonl_empty_and_blank_files_are_errors(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("  \n\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_jsonl(path)
    assert str(info.value) == f"{path}: the file is empty"


def test_jsonl_non_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(GOOD.encode() + b'\n{"id": "b", "task_id": "caf\xe9"}\n')
    with pytest.raises(InputError) as info:
        read_jsonl(path)
    # offset of 0xe9: len(GOOD) + 1 (newline) + len('{"id": "b", "task_id": "caf') = 27
    assert str(info.value) == (
        f"{path}: line 2: not valid UTF-8 (byte 0xe9 at offset {len(GOOD) + 1 + 27})"
    )


def test_jsonl_skips_blank_lines_but_counts_them(tmp_path: Path) -> None:
    path = write_lines(tmp_path, GOOD, "", '{"id": "b", "task_id": "b", "trial": "x"}')
    with pytest.raises(InputError) as info:
        read_jsonl(path)
    assert str(info.value).startswith(f"{path}: line 3: trial:")


def test_parquet_errors(tmp_path: Path) -> None:
    path = tmp_path / "runs.parquet"
    write_parquet(path, sample())
    table = pq.read_table(path)
    # bad JSON in a nested column of the second row
    steps = table.column("steps").to_pylist()
    steps[1] = "[{"
    bad = table.set_column(table.schema.get_field_index("steps"), "steps", pa.array(steps))
    pq.write_table(bad, path)
    with pytest.raises(InputError) as info:
        read_parquet(path)
    assert str(info.value).startswith(f"{path}: row 1: steps: invalid JSON:")

    # a wrong type inside the JSON column
    steps[1] = '[{"tool": "x", "ok": "yes"}]'
    bad = table.set_column(table.schema.get_field_index("steps"), "steps", pa.array(steps))
    pq.write_table(bad, path)
    with pytest.raises(InputError) as info:
        read_parquet(path)
    assert str(info.value) == f"{path}: row 1: steps[0].ok: Input should be a valid boolean"

    pq.write_table(table.drop_columns(["task_id"]), path)
    with pytest.raises(InputError) as info:
        read_parquet(path)
    assert str(info.value) == f"{path}: task_id: missing column"

    path.write_bytes(b"not parquet at all")
    with pytest.raises(InputError) as info:
        read_parquet(path)
    assert str(info.value).startswith(f"{path}: not a readable Parquet file")


def test_a_conversation_round_trips_through_jsonl_and_parquet(tmp_path: Path) -> None:
    from trajudge.trajectories import Message, read_jsonl, read_parquet, write_jsonl, write_parquet

    t = Trajectory(
        id="c-0",
        task_id="c",
        input="Cancel ABC123.",
        messages=[
            Message(role="system", content="policy"),
            Message(role="user", content="Cancel ABC123."),
            Message(role="assistant", content="Sure?"),
            Message(role="user", content="yes"),
            Message(role="assistant", steps=[0]),
            Message(role="tool", step=0),
        ],
        steps=[Step(tool="cancel", args={"id": "ABC123"}, output="ok")],
    )
    plain = Trajectory(id="p-0", task_id="p")
    write_jsonl(tmp_path / "a.jsonl", [t, plain])
    write_parquet(tmp_path / "a.parquet", [t, plain])
    assert read_jsonl(tmp_path / "a.jsonl") == [t, plain]
    assert read_parquet(tmp_path / "a.parquet") == [t, plain]
    # a trajectory without a conversation is stored exactly as before messages existed
    assert "messages" not in json.loads(plain.model_dump_json())


@pytest.mark.parametrize(
    ("messages", "reason"),
    [
        ([{"role": "assistant", "steps": [1]}], "messages[0].steps: no step 1 (there are 1)"),
        ([{"role": "user", "steps": [0]}], "messages[0].steps: only an assistant turn"),
        (
            [{"role": "assistant", "steps": [0]}, {"role": "assistant", "steps": [0]}],
            "messages[1].steps: step 0 is already made by messages[0]",
        ),
        ([{"role": "tool", "step": 3}], "messages[0].step: no step 3 (there are 1)"),
    ],
)
def test_bad_links_between_turns_and_steps_are_named(
    tmp_path: Path, messages: list[dict[str, object]], reason: str
) -> None:
    from trajudge.core import InputError
    from trajudge.trajectories import read_jsonl

    path = tmp_path / "bad.jsonl"
    record = {"id": "a", "task_id": "a", "steps": [{"tool": "x"}], "messages": messages}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_jsonl(path)
    assert reason in str(info.value)
    assert str(info.value).startswith(f"{path}: line 1:")
