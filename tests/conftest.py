"""Shared fixtures: the public datasets in ../shared/data and a temporary store.

``db_url`` is a temporary SQLite file; in the test files listed in ``BOTH_BACKENDS`` it is
parametrised over SQLite and a fresh database on a real PostgreSQL server (tests/_postgres.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _demo import Workspace, make_demo
from _postgres import ROLE_PASSWORD, PostgresServer, start_server
from _shared import EXAMPLE_TAU_BENCH, TAU_BENCH_FILE, TAU_BENCH_SIZE, require_shared

# Test files (or folders) under tests/ whose ``db_url`` tests run on both backends.
BOTH_BACKENDS = (
    "store/",
    "labeling_app/",
    "judges/test_batch.py",
    "judges/test_provider_batch.py",
    "judges/test_provider_batch_vertex.py",
    "judges/test_provider_batch_bedrock.py",
    "judges/test_ray.py",
    "cli/test_labels.py",
)
_TESTS = Path(__file__).parent


@pytest.fixture(autouse=True)
def _main_module_kept() -> Iterator[None]:
    """Streamlit's AppTest runs its script as ``__main__`` and leaves it there; a plain spawn
    pool started later in the same test process (Ray's, a library's) would re-run that script
    in its workers (trajudge's own pools set it aside: tests/rules/test_parquet_main.py). Each
    test ends with the ``__main__`` it started with."""
    main = sys.modules.get("__main__")
    yield
    if main is not None and sys.modules.get("__main__") is not main:
        sys.modules["__main__"] = main


@pytest.fixture(autouse=True)
def _sigint_kept(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test ends with the SIGINT disposition it started with: one left ignored in a
    pytest-xdist worker was inherited by every process the later tests of that worker started
    (a Ctrl-C test's driver then ignored the signal and hung). The test that changed it is
    named in the warnings summary, so that it can be made to restore what it changes."""
    handler = signal.getsignal(signal.SIGINT)
    yield
    if handler is not None and signal.getsignal(signal.SIGINT) is not handler:
        signal.signal(signal.SIGINT, handler)
        warnings.warn(f"{request.node.nodeid} left SIGINT changed (restored)", stacklevel=1)


@pytest.fixture
def shared_data() -> Path:
    return require_shared()


@pytest.fixture
def tau_bench_file() -> Path:
    """The τ-bench gpt-4o airline file: the project's own MIT copy in examples/ (so these
    tests run in a user's clone too), else ../shared/data."""
    if EXAMPLE_TAU_BENCH.is_file() and EXAMPLE_TAU_BENCH.stat().st_size == TAU_BENCH_SIZE:
        return EXAMPLE_TAU_BENCH
    return require_shared(TAU_BENCH_FILE)


# Tests that share one expensive, machine-wide resource run in one pytest-xdist worker, one
# after another: the embedded model's server takes both cores (two at once would each run at
# a third of the speed), a second Ray cluster of 2 CPUs on a 2-core machine starves both,
# and Ray's tests ran 7 to 15 times slower beside the model's server (about twice as slow
# beside ordinary tests). So both go to one group; the session fixtures (demo_workspace,
# ray_cluster) start once, in its worker. xdist hands out the largest group first, so the
# other worker works through everything else meanwhile.
_SERIAL_MARKERS = ("local_llm", "ray")
_SERIAL_GROUP = "serial"


def _serial(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(m) is not None for m in _SERIAL_MARKERS)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _serial(item):
            item.add_marker(pytest.mark.xdist_group(_SERIAL_GROUP))


@pytest.hookimpl(trylast=True)  # after xdist tagged the node ids with their group
def pytest_collection_finish(session: pytest.Session) -> None:
    if not session.config.getoption("loadgroup", default=False):
        return
    untagged = [i.nodeid for i in session.items if _serial(i) and "@" not in i.nodeid]
    if untagged:  # a pytest / xdist pair that drops the groups would split them silently
        pytest.exit(f"--dist loadgroup did not group {untagged[0]}: check the pytest pin", 3)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """(xdist, in the controller) hand each worker the terminal size the run was started with."""
    node.workerinput["terminal_env"] = {k: os.environ.get(k) for k in ("COLUMNS", "LINES")}


def pytest_configure(config: pytest.Config) -> None:
    # an xdist worker starts with COLUMNS=80 and LINES=24 whatever the run had; the CLI sizes
    # its tables by COLUMNS when it is set, so the outputs the tests compare would wrap at 80
    for key, value in getattr(config, "workerinput", {}).get("terminal_env", {}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "db_backend" not in metafunc.fixturenames:
        return
    where = metafunc.definition.path.relative_to(_TESTS).as_posix()
    if where.startswith(BOTH_BACKENDS):
        backends = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
        metafunc.parametrize("db_backend", backends, indirect=True)


@pytest.fixture(scope="session")
def demo_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A scratch checkout on which ``make demo`` ran, with the real embedded judge
    (tests/_demo.py); once per session, for every test that follows the README from there."""
    pytest.importorskip("xllamacpp")
    return make_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session (skipped where absent, unless CI requires it)."""
    server = start_server()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def db_backend(request: pytest.FixtureRequest) -> str:
    """``sqlite`` or ``postgres``: the backend behind ``db_url``."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture
def db_url(db_backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A store URL: a temporary SQLite file, or a fresh PostgreSQL database."""
    if db_backend == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        with server.database() as url:
            yield url
    else:
        yield f"sqlite:///{tmp_path / 'trajudge.db'}"


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """One local Ray cluster (2 CPUs) for every test that needs one (tests marked ``ray``).

    Skipped where ray is absent (a clone without the ``ray`` extra); CI, which installs the
    dev extras, sets TRAJUDGE_REQUIRE_SHARED=1 and gets a failure instead.
    """
    try:
        import ray
    except ImportError:
        if os.environ.get("TRAJUDGE_REQUIRE_SHARED") == "1":
            pytest.fail("ray is required in CI (pip install 'trajudge[ray]')")
        pytest.skip("ray is not installed (pip install 'trajudge[ray]')")
    # the workers' environment, as on a team's nodes: the store password comes from
    # PGPASSWORD, never with the calls (RayEngine strips it from the store URL)
    # address="local": a new cluster of the tests' own, never one already running on the
    # machine (ray.init() joins the last one it finds); its own short temp dir (Ray's socket
    # paths must stay under 108 bytes), so two test sessions never share /tmp/ray
    temp_dir = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        logging_level="WARNING",
        runtime_env={"env_vars": {"PGPASSWORD": ROLE_PASSWORD}},
        _temp_dir=temp_dir,
    )
    yield ray
    ray.shutdown()
    shutil.rmtree(temp_dir, ignore_errors=True)
