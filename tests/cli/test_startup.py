"""Start-up cost: ``import trajudge``, ``trajudge --help`` and ``trajudge import`` leave the
heavy numerical libraries unimported (they load on first use, inside the functions that
need them).

Each case runs in a fresh interpreter (the test process has imported everything already) and
prints the top-level modules it ended with; speed itself is measured in
benchmarks/memory_peak.py, not asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TAU_FILE = ROOT / "examples" / "tau_airline" / "gpt-4o-airline.json"
HEAVY = {"sklearn", "scipy", "matplotlib"}

# runs the CLI in process, then reports which of the watched packages got imported
_PROBE = """
import json, sys
watched = {watched!r}
if sys.argv[1:] == ["--import-only"]:
    import trajudge
else:
    from trajudge.cli import main
    sys.argv = ["trajudge", *sys.argv[1:]]
    try:
        main()
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise
print("MODULES " + json.dumps(sorted(m for m in watched if m in sys.modules)))
"""


def _imported(args: list[str], watched: set[str], cwd: Path) -> set[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("TRAJUDGE_DB", None)
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE.format(watched=sorted(watched)), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def test_import_trajudge_loads_no_heavy_library(tmp_path: Path) -> None:
    # the public names are there, but nothing behind them is imported until one is used
    assert _imported(["--import-only"], HEAVY | {"pandas", "sqlalchemy"}, tmp_path) == set()


def test_import_trajudge_loads_only_the_lazy_tables_of_the_base_room(tmp_path: Path) -> None:
    """The base room is lazy too: ``import trajudge`` runs none of its modules but the lazy
    helper (tempfile, json and datetime behind them cost about 45 ms)."""
    core = {f"trajudge.core.{m}" for m in ("_errors", "_files", "_json", "_time", "_words")}
    assert _imported(["--import-only"], core | {"tempfile"}, tmp_path) == set()


def test_help_loads_no_heavy_library(tmp_path: Path) -> None:
    # nor pandas and SQLAlchemy: listing the commands opens no store and reads no table; nor
    # pydantic: no trajectory, option or config model is built to list them
    watched = HEAVY | {"pandas", "sqlalchemy", "pydantic"}
    assert _imported(["--help"], watched, tmp_path) == set()


def test_import_command_loads_no_heavy_library(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    assert _imported(["import", str(TAU_FILE), "--db", db], HEAVY, tmp_path) == set()
    # the import really ran: the 200 trajectories are in the store
    from trajudge.store import Store

    store = Store(db)
    try:
        assert store.count_trajectories("gpt-4o-airline") == 200
    finally:
        store.close()


def test_a_cached_judge_run_loads_no_client_and_no_report(tmp_path: Path) -> None:
    """Every call of a new dataset served from the response cache: no request is sent, so
    neither litellm nor instructor is loaded (seconds of import), nor the report, the
    pipeline or matplotlib, which a judge run never draws."""
    sys.path.insert(0, str(ROOT / "tests" / "judges"))
    from fake_llm import FakeLLM

    from trajudge.store import Store
    from trajudge.trajectories import Trajectory

    db = f"sqlite:///{tmp_path / 'store.db'}"
    runs = [
        Trajectory(id=f"t{i}", task_id=f"task{i // 2}", trial=i % 2, input="help", final_answer="a")
        for i in range(6)
    ]
    store = Store(db)
    try:
        store.import_dataset("first", runs, {})
        store.import_dataset("again", runs, {})
    finally:
        store.close()
    server = FakeLLM().start()
    try:
        judge = "j=openai/fake:trajectory_reasonableness"
        options = ["--db", db, "--cache", str(tmp_path / "cache.db"), "--judge", judge]
        options += ["--api-base", server.api_base]
        watched = HEAVY | {"litellm", "instructor", "trajudge.pipeline", "trajudge.report"}
        assert "litellm" in _imported(["judge", "first", *options], watched, tmp_path)
        calls = server.calls
        assert calls == 6
        assert _imported(["judge", "again", *options], watched, tmp_path) == set()
        assert server.calls == calls  # every call of "again" came from the cache
    finally:
        server.stop()


@pytest.mark.parametrize(
    "package",
    [
        "trajudge",
        "trajudge.alignment",
        "trajudge.evalset",
        "trajudge.judges",
        "trajudge.labeling_app",
        "trajudge.store",
        "trajudge.trajectories",
    ],
)
def test_every_public_name_of_a_lazy_package_resolves(package: str) -> None:
    import importlib

    mod = importlib.import_module(package)
    public = set(mod.__all__) - {"__version__"}
    assert public == set(mod._EXPORTS)
    assert public <= set(dir(mod))
    for name in sorted(public):
        value = getattr(mod, name)
        # the object the lazy name stands for is the one its module defines
        home = importlib.import_module(mod._EXPORTS[name])
        assert value is getattr(home, name), name


def test_an_unknown_name_is_an_attribute_error() -> None:
    import trajudge

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        trajudge.nope  # noqa: B018
