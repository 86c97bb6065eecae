"""The lean Parquet rows of the rule checks against the models they stand in for.

The contract (trajudge.trajectories._lean): a row the lean reader accepts is one the strict
models accept, with the same values; a row the models refuse, the lean reader refuses too, so
the caller's model gives today's error. Checked on hand-picked rows (hostile and unusual) and
on 600 seeded random mutations of a full row; and through a file, error for error.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trajudge.core import InputError
from trajudge.trajectories import (
    LeanTrajectory,
    Message,
    Step,
    Trajectory,
    Usage,
    iter_lean_block,
    iter_parquet_block,
    write_parquet,
)
from trajudge.trajectories._lean import lean_trajectory
from trajudge.trajectories._parquet import JSON_COLUMNS, _row, _trajectory

FILE = Path("runs.parquet")
SCALARS = ("id", "task_id", "trial", "input", "final_answer", "outcome", "intent")
STEP_FIELDS = ("tool", "args", "ok", "output", "error", "approved", "tokens", "latency_ms")
USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "turns")


def _full() -> Trajectory:
    return Trajectory(
        id="r7",
        task_id="t1",
        trial=2,
        input="book a flight",
        messages=[
            Message(role="user", content="book"),
            Message(role="assistant", steps=[0, 1]),
            Message(role="tool", step=0),
            Message(role="tool", step=1),
            Message(role="assistant", content="done", name="bot"),
        ],
        steps=[
            Step(tool="search", args={"q": [1, {"x": None}]}, output="ok", tokens=3),
            Step(tool="réserver", ok=False, error="boom", approved=True, latency_ms=2.5),
        ],
        final_answer='{"answer": 1}',
        outcome=True,
        usage=Usage(prompt_tokens=10, completion_tokens=5, cost_usd=0.5, latency_s=1.0, turns=2),
        intent="booking",
        files_before={"a.txt": "h1"},
        files_after={"a.txt": "h2"},
        metadata={"seed": 1, "tags": ["x"]},
    )


def _view(t: Trajectory | LeanTrajectory) -> list[Any]:
    """Every value the rule checks may read, with its type (``repr``: 3 is not 3.0)."""
    return [
        [repr(getattr(t, k)) for k in (*SCALARS, "files_before", "files_after", "metadata")],
        [[repr(getattr(s, k)) for k in STEP_FIELDS] for s in t.steps],
        [repr(getattr(t.usage, k)) for k in (*USAGE_FIELDS, "total_tokens")],
    ]


def _both(row: dict[str, Any]) -> tuple[Any, Any]:
    """(lean view or None, model view or the model's error text)."""
    lean = lean_trajectory(copy.deepcopy(row), 200)
    try:
        model: Any = _view(_trajectory(FILE, "row 7", copy.deepcopy(row), 200))
    except InputError as exc:
        model = str(exc)
    return (None if lean is None else _view(lean)), model


def _agree(row: dict[str, Any]) -> bool:
    """The contract on one row; True when the lean reader took it."""
    lean, model = _both(row)
    if lean is None:
        return False
    assert lean == model, row
    return True


def _with(column: str, edit: Any) -> dict[str, Any]:
    row = _row(_full())
    value = json.loads(row[column])
    edit(value)
    row[column] = json.dumps(value)
    return row


def test_a_clean_row_is_taken_with_the_model_s_values() -> None:
    assert _agree(_row(_full()))
    assert _agree(_row(Trajectory(id="x", task_id="t")))  # every default
    row = _row(_full())
    for col in JSON_COLUMNS:
        row[col] = None  # absent columns: the defaults
    assert _agree(row)
    # an int where the model wants a float becomes that float; steps with keys left out
    assert _agree(_with("usage", lambda u: u.update(latency_s=3, cost_usd=0)))
    assert _agree(_with("steps", lambda s: s.__setitem__(0, {"tool": "t", "latency_ms": 7})))


HOSTILE: list[tuple[str, Any]] = [
    ("ok as text", lambda r: _with("steps", lambda s: s[0].update(ok="yes"))),
    ("ok as a number", lambda r: _with("steps", lambda s: s[0].update(ok=1))),
    ("empty tool", lambda r: _with("steps", lambda s: s[0].update(tool=""))),
    ("tool a lone surrogate", lambda r: _with("steps", lambda s: s[0].update(tool="\ud800"))),
    ("args null", lambda r: _with("steps", lambda s: s[0].update(args=None))),
    ("args a list", lambda r: _with("steps", lambda s: s[0].update(args=[1]))),
    ("unknown step key", lambda r: _with("steps", lambda s: s[0].update(color="red"))),
    ("negative tokens", lambda r: _with("steps", lambda s: s[0].update(tokens=-1))),
    ("tokens a bool", lambda r: _with("steps", lambda s: s[0].update(tokens=True))),
    ("latency NaN", lambda r: _with("steps", lambda s: s[0].update(latency_ms=float("nan")))),
    ("latency past float", lambda r: _with("steps", lambda s: s[0].update(latency_ms=10**400))),
    ("step a string", lambda r: _with("steps", lambda s: s.__setitem__(0, "search"))),
    ("steps an object", lambda r: {**_row(_full()), "steps": '{"tool": "a"}'}),
    ("steps bad JSON", lambda r: {**_row(_full()), "steps": "[{not json"}),
    ("steps too deep", lambda r: {**_row(_full()), "steps": "[" * 300 + "]" * 300}),
    ("steps as bytes", lambda r: {**_row(_full()), "steps": b"[]"}),
    ("usage key", lambda r: _with("usage", lambda u: u.update(money=1))),
    ("usage null", lambda r: {**_row(_full()), "usage": "null"}),
    ("metadata a list", lambda r: {**_row(_full()), "metadata": "[]"}),
    ("files value a number", lambda r: _with("files_after", lambda f: f.update(b=1))),
    ("message role", lambda r: _with("messages", lambda m: m[0].update(role="robot"))),
    ("message links a missing step", lambda r: _with("messages", lambda m: m[1].update(steps=[5]))),
    ("a step made twice", lambda r: _with("messages", lambda m: m[4].update(steps=[0]))),
    ("a user turn answers", lambda r: _with("messages", lambda m: m[0].update(step=0))),
    ("messages null", lambda r: {**_row(_full()), "messages": "null"}),
    ("trial negative", lambda r: {**_row(_full()), "trial": -1}),
    ("input null", lambda r: {**_row(_full()), "input": None}),
    ("id empty", lambda r: {**_row(_full()), "id": ""}),
    ("no id", lambda r: {k: v for k, v in _row(_full()).items() if k != "id"}),
    ("outcome a number", lambda r: {**_row(_full()), "outcome": 1}),
]


@pytest.mark.parametrize(("name", "make"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_row_is_left_to_the_model_which_names_the_fault(name: str, make: Any) -> None:
    lean, model = _both(make(None))
    assert lean is None, name
    assert isinstance(model, str) and model.startswith(f"{FILE}: row 7: "), model


POOL: list[Any] = [
    None, True, False, 0, -1, 7, 2**60, 10**400, 1.5, -0.5, 0.0, float("nan"), float("inf"),
    "", "x", "é", "\ud800", [], [1], {}, {"a": 1}, {"tool": "t"},
]  # fmt: skip


def _mutate(rng: random.Random, value: Any) -> Any:
    """``value`` with one random container entry replaced, removed or added."""
    if not isinstance(value, dict | list) or not value or rng.random() < 0.3:
        return rng.choice(POOL)
    key = rng.choice(list(value.keys()) if isinstance(value, dict) else range(len(value)))
    roll = rng.random()
    if roll < 0.1 and isinstance(value, dict):
        del value[key]
    elif roll < 0.2 and isinstance(value, dict):
        value[rng.choice(["tool", "ok", "x", "step", "steps", "turns"])] = rng.choice(POOL)
    else:
        value[key] = _mutate(rng, value[key])
    return value


def test_random_mutations_keep_the_contract() -> None:
    rng = random.Random(2029)
    taken = 0
    for _ in range(600):
        row = _row(_full())
        col = rng.choice([*JSON_COLUMNS, *SCALARS])
        if col in JSON_COLUMNS and row[col] is not None:
            row[col] = json.dumps(_mutate(rng, json.loads(row[col])))
        else:
            row[col] = rng.choice(POOL)
        taken += _agree(row)
    assert 50 < taken < 550  # both sides of the contract were exercised


def test_through_a_file_error_for_error(tmp_path: Path) -> None:
    trajs = [_full().model_copy(update={"id": f"r{i}", "trial": i}) for i in range(6)]
    path = tmp_path / "runs.parquet"
    write_parquet(path, trajs, row_group_rows=3)
    lean = list(iter_lean_block(path, 1, 3))
    assert all(isinstance(t, LeanTrajectory) for t in lean)
    assert [_view(t) for t in lean] == [_view(t) for t in iter_parquet_block(path, 1, 3)]
    table = pq.read_table(path)
    steps = table.column("steps").to_pylist()
    steps[4] = json.dumps([{"tool": "a", "tokens": "3"}])
    bad = tmp_path / "bad.parquet"
    col = table.schema.get_field_index("steps")
    pq.write_table(table.set_column(col, "steps", [steps]), bad, row_group_size=3)
    errors = []
    for read in (iter_lean_block, iter_parquet_block):
        with pytest.raises(InputError) as err:
            list(read(bad, 1, 3))
        errors.append(str(err.value))
    assert errors[0] == errors[1] and "row 4: steps[0].tokens" in errors[0]
    # a text column that is not UTF-8 (a file trajudge did not write) names its row
    ids = pa.array([b"ok", b"\xff"] * 3, pa.large_binary()).view(pa.large_string())
    pq.write_table(table.set_column(0, "id", ids), bad, row_group_size=3)
    with pytest.raises(InputError) as err:
        list(iter_lean_block(bad, 0, 0))
    assert (err.value.record, err.value.field) == ("row 1", "id")
