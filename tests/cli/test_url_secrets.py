"""A judge's api_base with credentials in it (a userinfo password, a key in the query) never
reaches the store, the report files or the terminal: the URL is shown with the password as
``***`` and the key's value as ``[redacted]``; the judge configuration's hash still covers
the real URL (two passwords are two configurations). Real CLI runs against the fake server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer.testing
from test_judge import _dataset, _load_fake

from trajudge.cli import app
from trajudge.store import Store

runner = typer.testing.CliRunner()
PASSWORD = "Pw-SECRET-6d1f"
QUERY_KEY = "QK-SECRET-88aa"


@pytest.fixture(scope="module")
def fake() -> Any:
    server = _load_fake().FakeLLM().start()
    yield server
    server.stop()


def test_url_credentials_stay_out_of_store_reports_and_terminal(fake: Any, tmp_path: Path) -> None:
    path = tmp_path / "trajudge.db"
    url = f"sqlite:///{path}"
    _dataset(url)
    host = fake.api_base.removeprefix("http://")
    outputs = []
    for api_base in (f"http://judge:{PASSWORD}@{host}", f"{fake.api_base}?api-key={QUERY_KEY}"):
        judge = ["--judge", "f=openai/fake:trajectory_reasonableness", "--api-base", api_base]
        result = runner.invoke(app, ["judge", "ds", *judge, "--no-cache", "--db", url])
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    out = tmp_path / "report"
    report = runner.invoke(
        app, ["report", "ds", "--db", url, "--out", str(out), "--format", "md,html,json"]
    )
    assert report.exit_code in (0, 1), report.output
    outputs.append(report.output)
    configs = Store(url).judgments_frame("ds")["judge_config"].dropna().unique()
    assert len(configs) == 2 and len(set(Store(url).judgments_frame("ds")["config_sha256"])) == 2
    assert any(f"http://judge:***@{host}" in c for c in configs), configs
    assert any("?api-key=[redacted]" in c for c in configs), configs
    written = [path.read_bytes(), *(f.read_bytes() for f in out.rglob("*") if f.is_file())]
    for wal in tmp_path.glob("trajudge.db-*"):
        written.append(wal.read_bytes())
    for secret in (PASSWORD, QUERY_KEY):
        assert all(secret.encode() not in blob for blob in written), secret
        assert all(secret not in text for text in outputs), secret
    md = (out / "report.md").read_text()  # it names one of the two configurations
    # (Markdown escapes the brackets of [redacted]: they are text there, not a link)
    assert f"http://judge:***@{host}" in md or "/v1?api-key=\\[redacted\\]" in md, md
