"""HTML and JSON renderers, and writing the report files atomically into a folder."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from trajudge.core import InputError, atomic_write_bytes
from trajudge.report._model import Report
from trajudge.report.render._figures import figures
from trajudge.report.render._text import _title, render_markdown
from trajudge.report.sections._sections import sections

FORMATS = ("md", "html", "json")
FILE_NAMES = {"md": "report.md", "html": "report.html", "json": "report.json"}

_ENV = Environment(
    loader=PackageLoader("trajudge.report", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    keep_trailing_newline=True,
)


def render_json(report: Report) -> str:
    """Every number of the report as JSON (NaN is null; strict JSON, no NaN tokens)."""
    return json.dumps(report.to_dict(), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def render_html(report: Report, pngs: dict[str, tuple[str, bytes]] | None = None) -> str:
    """A self-contained page: inline CSS, plots as base64 PNG, every text escaped."""
    figs = figures(report) if pngs is None else pngs
    data: dict[str, dict[str, Any]] = {
        name: {"title": title, "data": base64.b64encode(png).decode("ascii")}
        for name, (title, png) in figs.items()
    }
    template = _ENV.get_template("report.html.j2")
    return template.render(
        title=_title(report), report=report, sections=sections(report), figures=data
    )


def parse_formats(text: str | Sequence[str]) -> list[str]:
    """``"md,html,json"`` -> ``["md", "html", "json"]`` (InputError naming --format)."""
    parts = text.split(",") if isinstance(text, str) else list(text)
    out = [p.strip().lower() for p in parts if p.strip()]
    bad = [p for p in out if p not in FORMATS]
    if bad or not out:
        raise InputError(
            "--format", reason=f"unknown format {', '.join(bad) or repr(text)} (md, html, json)"
        )
    return list(dict.fromkeys(out))


def write_report(report: Report, out: str | Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write report.md / report.html / report.json (and figures/*.png for the Markdown).

    Everything is rendered in memory first, then each file is written through a temporary
    file and a rename: a failure never leaves a partial file. Returns the paths written.
    """
    fmts = parse_formats(formats)
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(str(folder), field="--out", reason="exists and is not a folder")
    pngs = figures(report) if ("html" in fmts or "md" in fmts) else {}
    files: dict[Path, bytes] = {}
    if "md" in fmts:
        links = {title: f"figures/{name}.png" for name, (title, _) in pngs.items()}
        files[folder / FILE_NAMES["md"]] = render_markdown(report, links).encode()
        for name, (_, png) in pngs.items():
            files[folder / "figures" / f"{name}.png"] = png
    if "html" in fmts:
        files[folder / FILE_NAMES["html"]] = render_html(report, pngs).encode()
    if "json" in fmts:
        files[folder / FILE_NAMES["json"]] = render_json(report).encode()
    try:
        for parent in sorted({path.parent for path in files}):
            parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            str(folder), field="--out", reason=f"cannot create folder: {exc}"
        ) from None
    for path, data in files.items():
        atomic_write_bytes(path, data)
    return list(files)
