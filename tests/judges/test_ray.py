"""The Ray engine on a real local Ray cluster, against the fake OpenAI-compatible server.

One cluster (2 CPUs) for the whole module. Every test compares with the local engine run on
the same plan: the stored judgments must be the same, column for column (all but the row
id, the creation time and the measured latency). The tests taking ``db_url`` run on SQLite
(the workers return their results to the driver, which writes them) and on the real
PostgreSQL server (the workers write the judgments themselves), the local engine's run on
the same backend.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from fake_llm import FakeLLM
from test_batch import SPECS, TRAJECTORIES
from typer.testing import CliRunner

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.core import InputError
from trajudge.judges import (
    BatchSummary,
    Judge,
    JudgeSpec,
    LocalEngine,
    RayEngine,
    make_engine,
    score_dataset,
)
from trajudge.store import Store

pytestmark = [pytest.mark.timeout(600), pytest.mark.ray]


def _judges(fake: FakeLLM, **kw: Any) -> list[Judge]:
    base = {
        "model": "openai/fake",
        "api_base": fake.api_base,
        "retry_backoff_s": 0.01,
        "max_retries": 1,
        "concurrency": 4,
    }
    specs = [
        {"name": "point", "rubric": "trajectory_reasonableness", "samples": 2},
        {"name": "ref", "rubric": "trajectory_reasonableness_reference"},
        {"name": "pair", "rubric": "trajectory_preference"},
    ]
    return [Judge(JudgeSpec.model_validate({**base, **s, **kw})) for s in specs]


def _store(path: Path | str) -> Store:
    store = Store(path if isinstance(path, str) else f"sqlite:///{path}")
    store.import_dataset("ds", TRAJECTORIES, SPECS)
    return store


@pytest.fixture
def local_url(db_backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A second store on the backend of ``db_url``, for the local engine's run."""
    if db_backend == "postgres":
        with request.getfixturevalue("postgres_server").database() as url:
            yield url
    else:
        yield f"sqlite:///{tmp_path / 'local.db'}"


def _direct(store: Store) -> bool:
    """Whether the Ray workers write to ``store`` themselves (PostgreSQL)."""
    return store.sql_engine.dialect.name == "postgresql"


def _rows(store: Store) -> list[dict[str, Any]]:
    """Every stored judgment, without the columns that differ between two runs."""
    with store.sql_engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT * FROM judgments")).mappings().all()
    out = [
        {k: v for k, v in row.items() if k not in ("id", "created_at", "latency_s")} for row in rows
    ]
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _faults(fake: FakeLLM) -> None:
    """Faults tied to the request (not to its arrival order): task 4's prompts always get a
    500 (stored as errors after the retry), task 3's first attempt is not JSON (the retry
    succeeds), and task 1's pairwise prompt gets a 400 (no retry)."""
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def action(body: dict[str, Any]) -> str | None:
        user = "".join(m.get("content") or "" for m in body["messages"] if m["role"] == "user")
        key = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with lock:
            seen[key] = seen.get(key, 0) + 1
            first = seen[key] == 1
        if "task 4" in user:
            return "500"
        if "task 3" in user and first:
            return "garbage"
        if "task 1" in user and '"verdict"' in json.dumps(body.get("response_format")):
            return "400"
        return None

    fake.action_for = action


def _local(fake: FakeLLM, path: Path | str) -> tuple[BatchSummary, list[dict[str, Any]]]:
    store = _store(path)
    _faults(fake)
    summary = score_dataset(store, "ds", _judges(fake), engine=LocalEngine(4))
    rows = _rows(store)
    store.close()
    return summary, rows


def test_same_judgments_as_the_local_engine_under_faults(
    ray_cluster: Any, fake_llm: FakeLLM, db_url: str, local_url: str
) -> None:
    local, expected = _local(fake_llm, local_url)
    local_calls = fake_llm.calls
    fake_llm.reset()
    store = _store(db_url)
    _faults(fake_llm)
    engine = make_engine("ray", store=store, dataset="ds", judges=_judges(fake_llm))
    assert isinstance(engine, RayEngine)
    summary = score_dataset(store, "ds", _judges(fake_llm), engine=engine)
    got = _rows(store)
    # PostgreSQL: every judgment was written by the worker that made it (the URL they got
    # carries no password: they read it from PGPASSWORD); SQLite: none
    if _direct(store):
        assert engine.sink is not None and "pw-trajudge" not in engine.sink[0]
        assert "pw-trajudge" in db_url
    assert engine.direct_writes == (summary.judged + summary.errors if _direct(store) else 0)
    # the faults did happen, and landed on the same judgments
    errors = [r for r in expected if r["error"] is not None]
    assert errors and any("InternalServerError" in r["error"] for r in errors)
    assert any(r["error"] is None and r["trajectory_id"].startswith("3-") for r in expected)
    assert got == expected
    assert fake_llm.calls == local_calls  # the same requests, the same retries
    assert (summary.planned, summary.judged, summary.errors) == (
        local.planned,
        local.judged,
        local.errors,
    )
    # resume: nothing but the errors is planned again
    fake_llm.reset()
    again = score_dataset(store, "ds", _judges(fake_llm), engine=RayEngine(4))
    assert again.resumed == local.planned - local.errors
    assert fake_llm.calls == local.errors and again.errors == 0
    store.close()


def _wait_for(predicate: Any, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_a_killed_worker_loses_and_duplicates_nothing(
    ray_cluster: Any, fake_llm: FakeLLM, db_url: str, local_url: str
) -> None:
    _, expected = _local(fake_llm, local_url)
    fake_llm.reset()
    store = _store(db_url)
    _faults(fake_llm)
    fake_llm.default = "block"  # every request without a fault waits for release()
    engine = RayEngine(4, workers=2, store=store, dataset="ds")
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["summary"] = score_dataset(store, "ds", _judges(fake_llm), engine=engine)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    # both workers have calls blocked in the server
    _wait_for(lambda: engine.pool is not None and fake_llm.in_flight >= 4, "4 calls in flight")
    pool = engine.pool
    assert pool is not None
    busy = next(s for s in pool.slots if s.in_flight > 0)
    pid = ray_cluster.get(busy.handle.pid.remote())
    os.kill(pid, signal.SIGKILL)
    _wait_for(lambda: pool.replaced >= 1, "the dead worker to be replaced")
    fake_llm.release()
    thread.join(300)
    assert not thread.is_alive() and "error" not in box
    assert box["summary"].planned == len(expected)
    got = _rows(store)
    assert got == expected  # nothing lost, nothing written twice, the same errors
    if _direct(store):  # the workers wrote what they judged (the killed one's calls again)
        assert engine.direct_writes == len(expected)
    store.close()


@pytest.mark.postgres
def test_a_worker_that_cannot_write_leaves_its_judgments_to_the_driver(
    ray_cluster: Any, fake_llm: FakeLLM, postgres_server: Any
) -> None:
    """The workers' store URL names a database that does not exist: every worker write
    fails, and the driver writes the judgments instead: none is lost."""
    with postgres_server.database() as local_url, postgres_server.database() as url:
        _, expected = _local(fake_llm, local_url)
        fake_llm.reset()
        store = _store(url)
        _faults(fake_llm)
        engine = RayEngine(4, store=store, dataset="ds")
        assert engine.sink is not None
        engine.sink = (postgres_server.url("no_such_database"), "ds")
        summary = score_dataset(store, "ds", _judges(fake_llm), engine=engine)
        assert engine.direct_writes == 0 and summary.planned == len(expected)
        assert _rows(store) == expected
        store.close()


def test_rate_limit_is_shared_by_the_workers(
    ray_cluster: Any, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    starts: list[float] = []
    lock = threading.Lock()

    def record(body: dict[str, Any]) -> str | None:
        with lock:
            starts.append(time.monotonic())
        return None

    def judge(rpm: float | None) -> Judge:
        spec = JudgeSpec(
            name="point",
            model="openai/fake",
            api_base=fake_llm.api_base,
            rubric="trajectory_reasonableness",
            rpm=rpm,
            concurrency=8,
        )
        return Judge(spec)

    engine = RayEngine(8, workers=2, keep_workers=True)
    try:
        # warm the workers up first (their first call sets up litellm's HTTP client, which
        # would hold early requests back and send them together)
        score_dataset(_store(tmp_path / "warm.db"), "ds", [judge(None)], engine=engine)
        fake_llm.action_for = record
        store = _store(tmp_path / "ray.db")
        summary = score_dataset(store, "ds", [judge(60)], engine=engine)  # a start a second
    finally:
        engine.close()
    assert summary.judged == 7 and len(starts) == 7
    # two workers each spacing its own starts 1 s apart would fit 7 starts in 3 s; one limit
    # for the cluster needs 6 x 1 = 6 s (less the jitter between start and arrival)
    assert max(starts) - min(starts) >= 4.5
    store.close()


def test_cli_engine_option_and_config(ray_cluster: Any, fake_llm: FakeLLM, tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    _store(db).close()
    config = tmp_path / "trajudge.yaml"
    config.write_text(
        "engine: ray\n"
        "judges:\n"
        f"  - {{name: point, model: openai/fake, api_base: '{fake_llm.api_base}',"
        " rubric: trajectory_reasonableness}\n"
    )
    result = CliRunner().invoke(
        app, ["judge", "ds", "--config", str(config), "--db", f"sqlite:///{db}", "--no-cache"]
    )
    assert result.exit_code == 0, result.output
    assert "judged 7 of 7 calls" in result.output and fake_llm.calls == 7
    bad = CliRunner().invoke(
        app, ["judge", "ds", "--config", str(config), "--db", f"sqlite:///{db}", "--engine", "x"]
    )
    assert (
        bad.exit_code == 2
        and "unknown engine 'x': choose local, processes, ray, batch" in bad.output
    )


def test_engine_selection_refuses_what_it_cannot_do() -> None:
    with pytest.raises(InputError, match="applies to --engine ray"):
        make_engine("local", address="auto")
    with pytest.raises(InputError, match="unknown engine 'spark'"):
        make_engine("spark")
    assert isinstance(make_engine("ray", concurrency=3), RayEngine)


def test_kept_workers_serve_the_next_run_with_new_judges(
    ray_cluster: Any, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    engine = RayEngine(4, workers=2, keep_workers=True)
    try:
        first = _store(tmp_path / "a.db")
        score_dataset(first, "ds", _judges(fake_llm), engine=engine)
        assert engine.pool is not None
        pids = sorted(ray_cluster.get([s.handle.pid.remote() for s in engine.pool.slots]))
        second = _store(tmp_path / "b.db")
        # new Judge objects (a new run, a new event loop) on the same workers
        score_dataset(second, "ds", _judges(fake_llm), engine=engine)
        again = sorted(ray_cluster.get([s.handle.pid.remote() for s in engine.pool.slots]))
        assert again == pids
        assert _rows(second) == _rows(first)
        slots = list(engine.pool.slots)
    finally:
        engine.close()
    assert engine.pool is None
    with pytest.raises(ray_cluster.exceptions.RayActorError):
        ray_cluster.get(slots[0].handle.pid.remote())


def test_config_engine_is_checked_against_the_known_engines(tmp_path: Path) -> None:
    from trajudge.config import parse_config

    cfg = parse_config({"engine": "ray", "address": "ray://head:10001"}, tmp_path / "t.yaml")
    assert (cfg.engine, cfg.address) == ("ray", "ray://head:10001")
    assert parse_config({}, tmp_path / "t.yaml").engine == "local"
    with pytest.raises(InputError) as err:
        parse_config({"engine": "spark"}, tmp_path / "t.yaml")
    assert err.value.field == "engine" and "unknown engine 'spark'" in err.value.reason


def test_a_worker_that_misbehaves_gives_errors_never_verdicts(
    ray_cluster: Any, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """The driver checks what each worker answers: a score of 999 on the 1..5 scale (task 1's
    answers), a worker whose task raises (task 3) and one that answers nothing (task 4) are
    stored as errors naming what happened, never as a pass or a fail, and the run goes on."""
    from trajudge.judges.engines._ray_worker import WorkerActor

    class Misbehaving(WorkerActor):  # a local class: Ray ships it to the workers by value
        async def call(self, idx: int, key: str, messages: Any, params: Any) -> Any:
            user = "".join(m.get("content") or "" for m in messages if m["role"] == "user")
            if "task 3" in user:
                raise RuntimeError("worker bug")
            if "task 4" in user:
                return None
            return await super().call(idx, key, messages, params)

    fake_llm.decide = lambda user, verdict: (
        {**verdict, "score": 999} if "task 1" in user else verdict
    )
    store = _store(tmp_path / "s.db")
    (point, *_) = _judges(fake_llm)
    engine = RayEngine(2, workers=1)
    engine.worker_class = Misbehaving
    summary = score_dataset(store, "ds", [point], engine=engine)
    with store.sql_engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT t.task_id, j.verdict, j.score, j.error FROM judgments j "
                "JOIN trajectories t ON t.id = j.trajectory_id"
            )
        ).all()
    store.close()
    by_task: dict[str, list[Any]] = {}
    for task, verdict, score, error in rows:
        by_task.setdefault(task, []).append((verdict, score, error))
    for task, expected in (("1", "score"), ("3", "raised RuntimeError"), ("4", "answered nothing")):
        assert by_task[task], task
        for verdict, score, error in by_task[task]:
            assert (verdict, score) == (None, None), (task, verdict, score)
            assert error is not None and expected in error and "\n" not in error, (task, error)
    assert all(error is None and verdict is not None for verdict, _, error in by_task["2"])
    assert summary.errors == sum(len(by_task[t]) for t in ("1", "3", "4"))
