"""Renderers: self-contained escaped HTML, Markdown table, strict JSON, atomic files."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

from trajudge.report import (
    Report,
    build_report,
    print_report,
    render_html,
    render_json,
    render_markdown,
    write_report,
)

sys.path.insert(0, str(Path(__file__).parent))
import report_helpers as h

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    url = f"sqlite:///{tmp_path_factory.mktemp('render') / 'store.db'}"
    store = h.make_store(url, judge_names=(EVIL, "beta"))
    return build_report(store, "ds", ks=[1, 2], n_boot=30, fail_under=["kappa>=0.99"])


def test_html_is_self_contained_and_escaped(report: Report) -> None:
    html = render_html(report)
    assert EVIL not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html, re.IGNORECASE)
    assert "http://" not in html and "https://" not in html
    assert "<link" not in html and "<script" not in html
    # the figures are there, inline
    assert len(re.findall(r'src="data:image/png;base64,[A-Za-z0-9+/=]{200,}"', html)) >= 3
    assert "<style>" in html


def test_markdown_has_the_table_and_escapes(report: Report) -> None:
    md = render_markdown(report)
    # brackets are escaped in every cell (a user string could hold a link): \[ renders as [
    assert "| source | κ \\[95% CI\\] | TPR | TNR | errors | pass^1 | pass^2 |" in md
    assert "| source | AC1 | agreement | flip rate | $ / 1k judgments | median latency (s) " in md
    assert "| pass@1 | pass@2 |" in md
    assert EVIL not in md and "&lt;script>" in md
    assert "## Bias flags" in md and "## CI gates" in md


def test_json_is_strict_and_complete(report: Report) -> None:
    text = render_json(report)
    assert "NaN" not in text
    d = json.loads(text)
    assert {j["name"] for j in d["judges"]} == {EVIL, "beta"}
    assert d["passed"] is False and d["gate_failures"]
    assert set(d["sources"]) == {f"judge:{EVIL}", "judge:beta", "outcome", "rules", "human"}


def test_terminal_prints_names_verbatim(report: Report) -> None:
    console = Console(record=True, width=200)
    print_report(report, console)
    text = console.export_text()
    assert EVIL in text  # Rich markup is not parsed: the name shows as typed
    assert "Judges and verdict sources" in text


def test_write_report_writes_every_file(report: Report, tmp_path: Path) -> None:
    out = tmp_path / "r"
    paths = write_report(report, out, ["md", "html", "json"])
    names = {p.relative_to(out).as_posix() for p in paths}
    assert {"report.md", "report.html", "report.json"} <= names
    assert any(n.startswith("figures/") and n.endswith(".png") for n in names)
    assert json.loads((out / "report.json").read_text())["dataset"] == "ds"
    assert not list(out.glob(".*.tmp"))
    md = (out / "report.md").read_text()
    for link in re.findall(r"\]\((figures/[^)]+)\)", md):
        assert (out / link).is_file()


def test_write_report_only_requested_formats(report: Report, tmp_path: Path) -> None:
    paths = write_report(report, tmp_path / "j", "json")
    assert [p.name for p in paths] == ["report.json"]
