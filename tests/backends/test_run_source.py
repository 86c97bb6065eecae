"""``trajudge run`` with ``dataset.source:`` (a real Phoenix project) and ``export:`` (an OTLP
file and the same Phoenix): pull, check, judge with the fake LLM on loopback, report, write
back; a second run pulls nothing, calls no model and writes nothing twice (read back from the
server); a new trace is pulled, judged and written back alone. The expected span ids come from
the OTLP file the scripted agent wrote, never from trajudge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer.testing
from _run_config import otlp_events, otlp_roots, run_config
from fake_llm import FakeLLM

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from _phoenix import Phoenix
from trajudge.cli import app

N = 3  # conversations traced before the first run
runner = typer.testing.CliRunner()


def _annotations(phoenix: Phoenix, project: str, span_ids: list[str]) -> list[dict[str, Any]]:
    from trajudge.backends import parse_backend_url
    from trajudge.backends._phoenix import PhoenixClient

    url = parse_backend_url(f"phoenix+{phoenix.url}/{project}", kinds=("phoenix",), need_name=True)
    with PhoenixClient(url) as client:
        return client.annotations(sorted(span_ids))


def test_run_pulls_judges_reports_and_writes_back_once(
    phoenix: Phoenix, passing_llm: FakeLLM, tmp_path: Path
) -> None:
    traced = tmp_path / "traced.jsonl"
    phoenix.trace_run("ci", traced, n=N)
    evals = tmp_path / "evals.jsonl"
    config = run_config(tmp_path, passing_llm, f"phoenix+{phoenix.url}/ci",
                     [f"otlp-file:{evals}", f"phoenix+{phoenix.url}"])  # fmt: skip
    db = f"sqlite:///{tmp_path / 's.db'}"
    first = runner.invoke(app, ["run", str(config), "--db", db])
    assert first.exit_code == 0, first.output
    roots = otlp_roots(traced)  # a conversation's turns are traces of their own
    assert len(roots) >= N
    assert (
        f"pulled {len(roots)} traces from phoenix+{phoenix.url}/ci: {N} trajectories ({N} added"
        in first.output
    ), first.output
    assert len(passing_llm.requests) == N  # one pointwise call per conversation, no swap
    assert f"exported {N} judgments and 0 labels to otlp-file:{evals}: {N} written" in first.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["dataset"] == "ci"
    events = otlp_events(evals)
    assert len(events) == N
    for trace, span, score in events:
        assert roots[trace] == span  # on the root span of its own trace
        assert score == 4.0
    annotations = _annotations(phoenix, "ci", list(roots.values()))
    assert len(annotations) == N
    assert {a["annotator_kind"] for a in annotations} == {"LLM"}
    assert all(a["result"]["score"] == 4.0 and a["result"]["label"] == "pass" for a in annotations)

    text = evals.read_text()
    again = runner.invoke(app, ["run", str(config), "--db", db])
    assert again.exit_code == 0, again.output
    assert f"pulled 0 traces from phoenix+{phoenix.url}/ci" in again.output
    assert len(passing_llm.requests) == N  # nothing new to judge
    assert "0 written" in again.output and f"{N} already there" in again.output
    assert evals.read_text() == text
    assert len(_annotations(phoenix, "ci", list(roots.values()))) == N

    phoenix.trace_run("ci", traced, n=1, first=N)  # one new conversation
    third = runner.invoke(app, ["run", str(config), "--db", db])
    assert third.exit_code == 0, third.output
    new = len(otlp_roots(traced)) - len(roots)
    roots = otlp_roots(traced)
    assert f"pulled {new} traces from phoenix+{phoenix.url}/ci: 1 trajectory (1 added" in (
        third.output
    )
    # (the scripted conversations say the same words: its judgment may come from the cache)
    assert f"exported {N + 1} judgments and 0 labels to otlp-file:{evals}: 1 written" in (
        third.output
    ), third.output
    assert len(otlp_events(evals)) == N + 1
    assert len(_annotations(phoenix, "ci", list(roots.values()))) == N + 1


@pytest.mark.parametrize(
    ("export", "needle"),
    [
        (["somewhere"], "export: entry 0: unknown target 'somewhere'"),
        (["jaeger+http://127.0.0.1:1"], "unknown backend 'jaeger'"),
        (["otlp-file:"], "otlp-file: needs a path"),
    ],
)
def test_a_bad_export_target_is_refused_before_anything_runs(
    phoenix: Phoenix, passing_llm: FakeLLM, tmp_path: Path, export: list[str], needle: str
) -> None:
    config = run_config(tmp_path, passing_llm, f"phoenix+{phoenix.url}/ci", export)
    result = runner.invoke(app, ["run", str(config), "--db", f"sqlite:///{tmp_path / 's.db'}"])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and needle in result.output, result.output
    assert not (tmp_path / "s.db").exists() and not (tmp_path / "out").exists()
    assert passing_llm.requests == []


def test_a_bad_source_is_one_line_without_its_credentials(
    passing_llm: FakeLLM, tmp_path: Path
) -> None:
    from _postgres import free_port

    port = free_port()
    for source, needle in (
        (f"phoenix+http://bob:s3cret@127.0.0.1:{port}", "no project in the URL"),
        (f"jaeger+http://bob:s3cret@127.0.0.1:{port}/p", "unknown backend 'jaeger'"),
        (f"phoenix+http://bob:s3cret@127.0.0.1:{port}/p", "cannot reach the Phoenix server"),
    ):
        config = run_config(tmp_path, passing_llm, source, [])
        result = runner.invoke(app, ["run", str(config), "--db", f"sqlite:///{tmp_path / 's.db'}"])
        assert result.exit_code == 2, result.output
        # one error line, after the header of the phase it stopped in (a server that does not
        # answer is found when the pull starts; a URL that cannot be one, with the config)
        lines = [ln for ln in result.output.strip().splitlines() if " import " not in ln]
        assert len(lines) == 1 and lines[0].startswith("error: "), result.output
        assert needle in lines[0]
        assert "s3cret" not in result.output and "bob" not in result.output
    assert not (tmp_path / "out").exists() and passing_llm.requests == []
