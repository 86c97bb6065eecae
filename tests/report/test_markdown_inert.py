"""The Markdown report keeps user-supplied strings as text: a task id or intent holding image
or link syntax (``![x](http://...)``, ``[x](javascript:...)``), a code span or an HTML tag
renders as those characters, never as an image fetched, a link or markup. Checked by parsing
the written report.md with markdown-it (CommonMark + GFM tables, Rich's own Markdown parser)."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt
from typer.testing import CliRunner

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory

IMAGE = "![x](http://evil.example/pixel.png)"
LINK = "[x](javascript:alert(1))"
HOSTILE = [IMAGE, LINK, "`code` <img src=x onerror=alert(1)>", "a|b"]


def _tokens(text: str) -> list[object]:
    out = []
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        out += [token, *(token.children or [])]
    return out


def test_hostile_task_ids_and_intents_stay_text_in_report_md(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'trajudge.db'}"
    items = [
        Trajectory(
            id=f"r{i}-{trial}",
            task_id=task,
            trial=trial,
            input="hi",
            intent=task,
            steps=[Step(tool="search")],
            outcome=float(trial == 0),  # unstable: the report lists these task ids
        )
        for i, task in enumerate(HOSTILE)
        for trial in (0, 1)
    ]
    Store(url).import_dataset("ds", items)
    out = tmp_path / "out"
    args = ["report", "ds", "--db", url, "--out", str(out), "--format", "md"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code in (0, 1), res.output
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "evil.example" in text and "javascript:alert" in text  # the ids are in it, as text
    tokens = _tokens(text)
    images = [t.attrGet("src") for t in tokens if t.type == "image"]  # type: ignore[attr-defined]
    assert all(str(src).startswith("figures/") for src in images), images  # only our plots
    links = [t.attrGet("href") for t in tokens if t.type == "link_open"]  # type: ignore[attr-defined]
    assert links == [], links
    assert not [t for t in tokens if t.type in ("html_inline", "html_block", "code_inline")]
