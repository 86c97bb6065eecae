"""Terminal (Rich) and Markdown renderers."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from trajudge.report._model import Report
from trajudge.report.sections._section import Section
from trajudge.report.sections._sections import sections


def _title(report: Report) -> str:
    where = f"dataset {report.dataset}" if report.dataset else "calibration tables"
    return f"trajudge report: {where}"


def print_report(report: Report, console: Console) -> None:
    """The report in the terminal: summary lines, then each section (no markup parsing)."""
    console.print(Text(_title(report), style="bold"))
    for line in report.summary:
        console.print(Text("• " + line), soft_wrap=True)
    print_sections(sections(report, compact=True), console)


def print_sections(secs: Iterable[Section], console: Console) -> None:
    """Sections in the terminal: a title, its lines, its table (no markup parsing)."""
    for sec in secs:
        console.print()
        console.print(Text(sec.title, style="bold underline"))
        for line in sec.lines:
            style = "red" if line.startswith("FAILED") else None
            console.print(Text(line, style=style or ""), soft_wrap=True)
        if sec.header:
            table = Table(show_lines=False)
            for i, col in enumerate(sec.header):
                table.add_column(Text(col), justify="left" if i == 0 else "right", overflow="fold")
            for row in sec.rows:
                table.add_row(*(Text(c) for c in row))
            console.print(table)


_MD_ESCAPES = str.maketrans(
    {"\\": "\\\\", "|": "\\|", "[": "\\[", "]": "\\]", "`": "\\`", "\n": " ", "<": "&lt;"}
)


def _md_cell(text: str) -> str:
    """A user-supplied string as inert Markdown text: no link or image (``[x](...)``,
    ``![x](...)``), no code span, no HTML tag, no table cell break, one line."""
    return text.translate(_MD_ESCAPES)


def _md_table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    out = ["| " + " | ".join(_md_cell(h) for h in header) + " |"]
    out.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return out


def render_markdown(report: Report, figures: dict[str, str] | None = None) -> str:
    """The report as GitHub-flavoured Markdown; ``figures`` maps a title to an image path."""
    lines = [f"# {_md_cell(_title(report))}", "", f"_created {report.created_at}_", ""]
    lines += [f"- {_md_cell(line)}" for line in report.summary]
    for sec in sections(report):
        lines += ["", f"## {_md_cell(sec.title)}", ""]
        lines += [_md_cell(line) + "  " for line in sec.lines]
        if sec.header:
            lines += ["", *_md_table(sec.header, sec.rows)]
    if figures:
        lines += ["", "## Figures", ""]
        lines += [f"![{_md_cell(title)}]({path})" for title, path in figures.items()]
    return "\n".join(lines) + "\n"
