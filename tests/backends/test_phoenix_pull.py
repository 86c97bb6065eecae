"""``trajudge import phoenix+http://...`` on a real Phoenix server: the same trajectory as the
same run's OTLP file, incremental pulls, and one line with exit code 2 for every fault."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.testing

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from _phoenix import TRACES, Phoenix, TracedRun
from trajudge.cli import app
from trajudge.store import Store
from trajudge.trajectories import Trajectory, read_trajectories

sys.path.insert(0, str(TRACES))
import scenario as S

runner = typer.testing.CliRunner()


def pull(*args: str) -> typer.testing.Result:
    return runner.invoke(app, ["import", *args])


def _comparable(t: Trajectory) -> dict[str, Any]:
    """A trajectory less what Phoenix does not keep: the resource's service name, and time
    below the microsecond (each time truncated: the latency to within 2 µs)."""
    d = t.model_dump(mode="json")
    d["metadata"].pop("service_name", None)
    d["usage"]["latency_s"] = pytest.approx(d["usage"]["latency_s"], abs=2e-6)
    return d


def test_a_pull_builds_what_the_otlp_file_of_the_same_run_builds(
    traced_run: TracedRun, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    result = pull(traced_run.url, "--db", db)
    assert result.exit_code == 0, result.output
    assert "pulled 2 traces" in result.output and "1 added" in result.output
    store = Store(db)
    [pulled] = store.trajectories("airline")
    store.close()
    [from_file] = read_trajectories(traced_run.file, fmt="otel").trajectories
    assert _comparable(pulled) == _comparable(from_file)
    assert from_file.metadata["service_name"] == "airline-support"
    # and both are what the script did (scenario.py), not only equal to each other
    expected = S.expected(tool_error=f"Error: {S.ERROR_CANCEL}")
    user_turns = [m.content for m in pulled.messages if m.role == "user"]
    assert user_turns == expected["user_turns"]
    steps = [
        {"tool": s.tool, "args": s.args, "ok": s.ok, "output": s.output, "error": s.error}
        for s in pulled.steps
    ]
    assert steps == [
        {"tool": e["tool"], "args": e["args"], "ok": e["ok"], "output": e.get("output"),
         "error": e.get("error")}
        for e in expected["steps"]
    ]  # fmt: skip
    assert pulled.usage.prompt_tokens == sum(i for i, _ in S.USAGE) == 970
    assert pulled.usage.completion_tokens == sum(o for _, o in S.USAGE) == 112
    assert pulled.final_answer == S.DONE
    assert pulled.id == "conv-phoenix-0" and len(pulled.metadata["trace_ids"]) == 2


def test_a_second_pull_takes_only_what_is_new(phoenix: Phoenix, tmp_path: Path) -> None:
    file = tmp_path / "more.jsonl"
    phoenix.trace_run("incremental", file, n=1, first=0)
    db = f"sqlite:///{tmp_path / 's.db'}"
    url = f"phoenix+{phoenix.url}/incremental"
    first = pull(url, "--db", db, "--dataset", "inc")
    assert first.exit_code == 0 and "pulled 2 traces" in first.output, first.output
    again = pull(url, "--db", db, "--dataset", "inc")
    assert again.exit_code == 0 and "pulled 0 traces" in again.output, again.output
    phoenix.trace_run("incremental", file, n=1, first=1)
    third = pull(url, "--db", db, "--dataset", "inc")
    assert "pulled 2 traces" in third.output and "1 added, 0 updated" in third.output, third.output
    store = Store(db)
    ids = sorted(t.id for t in store.trajectories("inc"))
    store.close()
    assert ids == ["conv-phoenix-0", "conv-phoenix-1"]
    # the OTLP file of both runs reads as the same two trajectories
    from_file = sorted(t.id for t in read_trajectories(file, fmt="otel").trajectories)
    assert from_file == ids


def test_a_conversation_continued_later_is_read_whole(phoenix: Phoenix, tmp_path: Path) -> None:
    """Two more turns under a stored conversation's id: the trajectory is rebuilt from all four
    traces (fetched from the server), not from the two new ones alone."""
    file = tmp_path / "cont.jsonl"
    db = f"sqlite:///{tmp_path / 's.db'}"
    url = f"phoenix+{phoenix.url}/continued"
    phoenix.trace_run("continued", file)
    assert pull(url, "--db", db).exit_code == 0
    phoenix.trace_run("continued", file)  # the same conversation id again
    result = pull(url, "--db", db)
    assert "pulled 4 traces" in result.output and "1 updated" in result.output, result.output
    store = Store(db)
    [t] = store.trajectories("continued")
    store.close()
    [from_file] = read_trajectories(file, fmt="otel").trajectories
    assert _comparable(t) == _comparable(from_file)
    assert len(t.metadata["trace_ids"]) == 4
    # both runs' model calls are counted: the script's tokens twice
    assert t.usage.prompt_tokens == 2 * sum(i for i, _ in S.USAGE)
    assert t.usage.completion_tokens == 2 * sum(o for _, o in S.USAGE)


def _one_line_exit_2(result: typer.testing.Result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    for n in needles:
        assert n in lines[0], lines[0]


def test_faults_are_one_line_exit_2_and_store_nothing(
    phoenix: Phoenix, traced_run: TracedRun, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    from _postgres import free_port

    down = f"phoenix+http://127.0.0.1:{free_port()}/airline"
    _one_line_exit_2(pull(down, "--db", db), "cannot reach the Phoenix server", down)
    unknown = f"phoenix+{phoenix.url}/no-such-project"
    # the projects that exist are named
    _one_line_exit_2(pull(unknown, "--db", db), "no project 'no-such-project'", "airline")
    # a wrong path before the project: Phoenix answers it with its web page, not an API
    _one_line_exit_2(pull(f"phoenix+{phoenix.url}/ui/airline", "--db", db), "not a Phoenix server")
    # credentials in the URL are never shown
    secret = f"phoenix+http://user:s3cret-pw@127.0.0.1:{free_port()}/airline"
    result = pull(secret, "--db", db)
    _one_line_exit_2(result, "cannot reach")
    assert "s3cret-pw" not in result.output and "user:" not in result.output
    _one_line_exit_2(pull(traced_run.url, "--since", "yesterday", "--db", db), "--since")
    _one_line_exit_2(pull(traced_run.url, "--per-turn", "--db", db), "--per-turn")
    store = Store(db)
    assert store.datasets() == []
    store.close()


def test_a_page_failing_mid_pull_resumes_from_the_last_complete_page(
    phoenix: Phoenix, tmp_path: Path
) -> None:
    from _faulty_proxy import FaultyProxy
    from trajudge.backends import parse_backend_url, pull_phoenix
    from trajudge.core import InputError

    written = phoenix.trace_run("paged", tmp_path / "paged.jsonl", n=3)
    assert written == 3 * (2 + len(S.USAGE))  # per conversation: two turn spans, five calls
    db = f"sqlite:///{tmp_path / 's.db'}"
    with FaultyProxy(phoenix.url) as proxy:
        url = parse_backend_url(f"phoenix+{proxy.url}/paged", kinds=("phoenix",), need_name=True)
        # the server goes down once a page is stored (a page is one request, and one more
        # when it holds a trace whose root came earlier)
        proxy.fail("/spans", 4, sticky=True)  # down from the fourth request on
        store = Store(db)
        try:
            pull_phoenix(store, url, "paged", page=5)
            raise AssertionError("the pull did not fail")
        except InputError as exc:
            assert "complete page" in str(exc) and "the next pull resumes" in str(exc), str(exc)
        saved = store.pull_cursor("paged", url.shown)
        assert saved is not None
        stored_before = {t.id: t for t in store.trajectories("paged")}
        proxy.heal()
        proxy.seen.clear()
        summary = pull_phoenix(store, url, "paged", page=5)
        # the next pull asked first for the page where the failed one stopped
        first_spans = next(p for p in proxy.seen if "/spans" in p)
        assert f"cursor={saved}" in first_spans.replace("%3D", "=")
        resumed = {t.id: t for t in store.trajectories("paged")}
        store.close()
    assert summary.pages >= 1
    # the end state equals one clean pull straight from the server
    clean = Store(f"sqlite:///{tmp_path / 'clean.db'}")
    pull_phoenix(
        clean,
        parse_backend_url(f"phoenix+{phoenix.url}/paged", kinds=("phoenix",), need_name=True),
        "paged",
    )
    expected = {t.id: t for t in clean.trajectories("paged")}
    clean.close()
    assert sorted(resumed) == sorted(expected) == [f"conv-phoenix-{k}" for k in range(3)]
    for k, t in resumed.items():
        assert t.model_dump() == expected[k].model_dump()
    # what the failed pull had stored was whole traces: each is the clean one or a part of its
    # conversation with fewer turns, never a trace without its model calls
    for k, t in stored_before.items():
        assert set(t.metadata["trace_ids"]) <= set(expected[k].metadata["trace_ids"])
        assert t.usage.prompt_tokens in (sum(i for i, _ in S.USAGE[:2]), 970)


def test_phoenix_own_otlp_dump_reads_as_the_same_trajectory(
    phoenix: Phoenix, traced_run: TracedRun, tmp_path: Path
) -> None:
    """Phoenix's ``/spans/otlpv1`` spells out every AnyValue field, the unset ones null: the
    integers (token counts) are read, not taken for the null string value."""
    import httpx

    r = httpx.get(f"{phoenix.url}/v1/projects/airline/spans/otlpv1", params={"limit": 1000})
    scope = {"scope": {"name": "phoenix"}, "spans": r.json()["data"]}
    doc = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [scope]}]}
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(doc))
    [dumped] = read_trajectories(dump, fmt="otel").trajectories
    [from_file] = read_trajectories(traced_run.file, fmt="otel").trajectories
    assert _comparable(dumped) == _comparable(from_file)
    assert dumped.usage.prompt_tokens == 970


def test_a_trace_without_its_root_span_waits_for_the_next_pull(
    phoenix: Phoenix, tmp_path: Path
) -> None:
    """Spans reach Phoenix as they end, the root last: a pull that sees a trace without its
    root leaves it (and the cursor at its first span) for the next pull, which reads it whole."""
    import subprocess
    import time

    db = f"sqlite:///{tmp_path / 's.db'}"
    url = f"phoenix+{phoenix.url}/open"
    proc = subprocess.Popen(
        [str(phoenix.python), "gen_phoenix_open.py", phoenix.otlp, "open"],
        cwd=TRACES, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "child"
        deadline = time.monotonic() + 120
        while len(phoenix.spans("open")) < 1:
            assert time.monotonic() < deadline, "the child span never reached Phoenix"
            time.sleep(0.2)
        early = pull(url, "--db", db)
        assert early.exit_code == 0, early.output
        assert "pulled 0 traces" in early.output and "1 trace still open" in early.output
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "root"
    finally:
        proc.wait(timeout=120)
    deadline = time.monotonic() + 120
    while len(phoenix.spans("open")) < 2:
        assert time.monotonic() < deadline, "the root span never reached Phoenix"
        time.sleep(0.2)
    late = pull(url, "--db", db)
    assert "pulled 1 trace " in late.output and "1 added" in late.output, late.output
    store = Store(db)
    [t] = store.trajectories("open")
    store.close()
    assert [s.tool for s in t.steps] == ["get_reservation_details"]
    assert t.steps[0].args == {"reservation_id": "ABC123"}
    assert len(t.metadata["root_span_ids"]) == 1


def test_a_busy_server_is_asked_again_and_the_pull_completes(
    phoenix: Phoenix, tmp_path: Path
) -> None:
    """A page answered 503 (a proxy in front of a busy server), then 429 with Retry-After: each
    is asked again, and the pull ends as one straight from the server."""
    from _faulty_proxy import FaultyProxy
    from trajudge.backends import parse_backend_url, pull_phoenix

    phoenix.trace_run("busy", tmp_path / "busy.jsonl", n=2)
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    clean = Store(f"sqlite:///{tmp_path / 'clean.db'}")
    try:
        with FaultyProxy(phoenix.url) as proxy:
            url = parse_backend_url(f"phoenix+{proxy.url}/busy", kinds=("phoenix",), need_name=True)
            proxy.fail("/spans", 2, status=503)
            pull_phoenix(store, url, "busy", page=5)
            assert sum("/spans" in p for p in proxy.seen) >= 3  # the second one twice
            proxy.seen.clear()
            proxy.fail("/spans", 1, status=429, headers={"Retry-After": "0"})
            again = pull_phoenix(store, url, "busy", page=5)
            assert again.added == 0
            assert [p for p in proxy.seen if "/spans" in p][:2] == [
                next(p for p in proxy.seen if "/spans" in p)
            ] * 2  # the one answered 429, asked again as it was
        direct = f"phoenix+{phoenix.url}/busy"
        pull_phoenix(clean, parse_backend_url(direct, kinds=("phoenix",), need_name=True), "busy")
        got = {t.id: t.model_dump() for t in store.trajectories("busy")}
        assert got == {t.id: t.model_dump() for t in clean.trajectories("busy")}
        assert len(got) == 2
    finally:
        store.close()
        clean.close()
