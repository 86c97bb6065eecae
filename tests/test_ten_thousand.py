"""`trajudge check`, `trajudge report` and the labeling app on 10,000 stored trajectories.

The store holds the 200 τ-bench airline runs cloned 50 times under new ids (each task then has
200 trials), so every expected figure follows from the 200 originals by hand. On main,
`check` died after 30 s with "database is locked" (its streaming read held the write lock while
it saved its first batch of results), and a report or a page view waited behind any open read.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from math import comb
from pathlib import Path

import pytest
import typer.testing
from streamlit.testing.v1 import AppTest

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.labeling_app import AppConfig
from trajudge.labeling_app import _state as S
from trajudge.labeling_app.auth._manage import add_account
from trajudge.labeling_app.auth._session import SESSION
from trajudge.labeling_app.auth._signin import SignedIn
from trajudge.rules import run_checks
from trajudge.store import Store
from trajudge.trajectories import TaskSpec, Trajectory, from_tau_bench

pytestmark = pytest.mark.slow

N = 10_000
DS = "big"
FORBID = "defaults:\n  forbidden_tools: [cancel_reservation]\n"
runner = typer.testing.CliRunner()


@pytest.fixture(scope="module")
def originals(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Trajectory], Path]:
    """The 200 τ-bench runs and a store file holding their 10,000 clones (built once)."""
    from _shared import EXAMPLE_TAU_BENCH

    trajs, specs = from_tau_bench(EXAMPLE_TAU_BENCH)
    assert len(trajs) == 200
    clones = [
        t.model_copy(update={"id": f"c{i}", "trial": (i // 200) * 100 + t.trial})
        for i, t in ((i, trajs[i % 200]) for i in range(N))
    ]
    path = tmp_path_factory.mktemp("big") / "big.db"
    store = Store(f"sqlite:///{path}")
    assert store.import_dataset(DS, clones, specs).added == N
    store.close()  # the last connection folds the WAL into the file: a plain copy is whole
    return trajs, path


@pytest.fixture
def big_url(originals: tuple[list[Trajectory], Path], tmp_path: Path) -> str:
    """A private copy of the 10,000-trajectory store for one test."""
    path = tmp_path / "big.db"
    shutil.copyfile(originals[1], path)
    return f"sqlite:///{path}"


@contextmanager
def _open_stream(url: str) -> Iterator[None]:
    """Another connection in the middle of a streaming read (a check, a page, an export)."""
    stream = Store(url).iter_trajectories(DS, batch=100)
    next(stream)
    try:
        yield
    finally:
        stream.close()


def test_check_stores_a_result_for_each_of_10000(originals, big_url, tmp_path) -> None:
    trajs, _ = originals
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(FORBID, encoding="utf-8")
    # check streams the trajectories while it saves results in batches of 500
    result = runner.invoke(app, ["check", DS, "--db", big_url, "--spec", str(spec_file)])
    assert result.exit_code == 0, result.output
    # the same checks on the 200 originals, run in memory: each clone must match its original
    specs = Store(big_url).task_specs(DS)
    forbid = {"forbidden_tools": ["cancel_reservation"]}
    expected = [
        run_checks(t, specs.get(t.task_id, TaskSpec()).model_copy(update=forbid)) for t in trajs
    ]
    n_failed = sum(not r.gates_passed for r in expected)
    assert 0 < n_failed < 200
    assert f"{N} trajectories:" in result.output
    assert f"{50 * n_failed} with a failed gate" in result.output
    stored = Store(big_url).rule_results(DS)
    assert len(stored) == N
    for i in (0, 1, 199, 200, 4321, N - 1):
        assert stored[f"c{i}"]["gates_passed"] == expected[i % 200].gates_passed, i
        assert stored[f"c{i}"]["score"] == pytest.approx(expected[i % 200].score), i


def test_report_on_10000_while_another_connection_reads(originals, big_url, tmp_path) -> None:
    trajs, _ = originals
    out = tmp_path / "r"
    args = ["report", DS, "--db", big_url, "--out", str(out), "--format", "json"]
    with _open_stream(big_url):
        result = runner.invoke(app, [*args, "--n-boot", "20", "--k", "1,2"])
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    got = doc["sources"]["outcome"]["pass^k"]
    # by hand: each task has 4 original trials with c successes, so 200 clones with 50c;
    # pass^k = mean over tasks of C(50c, k) / C(200, k)
    succ: dict[str, int] = {}
    for t in trajs:
        succ[t.task_id] = succ.get(t.task_id, 0) + bool(t.outcome)
    for k in (1, 2):
        want = sum(comb(50 * c, k) / comb(200, k) for c in succ.values()) / len(succ)
        assert got[str(k)]["value"] == pytest.approx(want, abs=1e-12)
        assert got[str(k)]["n"] == 50


def test_label_page_on_10000_while_another_connection_reads(big_url: str) -> None:
    at = AppTest.from_string(
        "from trajudge.labeling_app.pages._page_label import page_label\npage_label()",
        default_timeout=300,
    )
    at.session_state[S.CONFIG] = AppConfig(db_url=big_url, dataset=DS, overlap=1.0)
    # signed in as the sign-in page leaves it: an account of the store and its session
    store = Store(big_url)
    try:
        account = (
            store.account("ann")
            or add_account(store, "ann", "annotator", password="pw 1234 5678")[0]
        )
    finally:
        store.close()
    at.session_state[SESSION] = SignedIn(
        "ann", "annotator", account.epoch, "password", time.time() + 3600
    )
    at.session_state[S.ANNOTATOR] = "ann"
    with _open_stream(big_url):
        at.run()
        assert not at.exception
        assert f"You: 0 / {N} labeled" in [p.proto.text for p in at.get("progress")]
        first = at.session_state[S.CURRENT]
        at.button(key="value-4").click().run()
        assert not at.exception
        next(b for b in at.button if b.label == "Next").click().run()
        assert not at.exception
    frame = Store(big_url).labels_frame(DS)
    assert list(zip(frame["trajectory_id"], frame["value"], strict=True)) == [(first, 4.0)]
    assert f"You: 1 / {N} labeled" in [p.proto.text for p in at.get("progress")]
