"""The HTML report at a laptop's 1,280 px, in a real browser (Debian chromium): the headline
table (κ beside pass^k) shows every column without a horizontal scroll, no table hides a
column behind one, and a flag's evidence wraps instead of running off the page; the pass^k
plot's legend covers no point. (At 1,280 px the one main table was 1,886 px wide: pass^3,
pass^4 and every pass@k were behind a scroll.)"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from trajudge.calibration import Estimate
from trajudge.report import build_report, render_html
from trajudge.report._model import Flag
from trajudge.report.render._figures import pass_k_plot

sys.path.insert(0, str(Path(__file__).parent))
import report_helpers as h

CHROMIUM = Path("/usr/bin/chromium")
EVIDENCE = (
    "scores moved by +0.95 on average when the candidate was shown second instead of first "
    "(20 pairs); the judge prefers whichever trajectory it reads last, on every task"
)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path_factory.mktemp('layout') / 'store.db'}"
    built = build_report(h.make_store(url), "ds", ks=[1, 2, 3, 4], n_boot=60, seed=1)
    flag = Flag(
        "alpha",
        "order_shift",
        Estimate(0.95, 0.8, 1.0, 20, 0.95),
        "flagged when the whole 95% interval lies outside [-0.25, 0.25]",
        EVIDENCE,
    )
    return dataclasses.replace(built, flags=[flag])


@pytest.mark.browser
def test_every_table_fits_a_1280_px_window(report, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    if not CHROMIUM.exists():
        pytest.fail("Debian chromium is required (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(report, {}), encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_file.as_uri())
            tables = page.eval_on_selector_all(
                "table",
                """ts => ts.map(t => ({
                    head: [...t.querySelectorAll('th')].map(th => th.textContent),
                    scroll: t.scrollWidth, client: t.clientWidth,
                    right: Math.max(...[...t.querySelectorAll('th, td')].map(
                        c => c.getBoundingClientRect().right)),
                }))""",
            )
        finally:
            browser.close()
    assert tables, "no table rendered"
    for t in tables:
        assert t["scroll"] <= t["client"] + 1, (t["head"], t["scroll"], t["client"])
        assert t["right"] <= 1280, (t["head"], t["right"])
    main = next(t for t in tables if "pass^4" in t["head"])
    assert main["head"][:2] == ["source", "κ [95% CI]"]
    assert any("evidence" in t["head"] for t in tables)


def test_the_pass_k_legend_covers_no_point(report) -> None:  # type: ignore[no-untyped-def]
    fig = pass_k_plot(report)
    assert fig is not None
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    (ax,) = fig.axes
    legend = ax.get_legend().get_window_extent(canvas.get_renderer())
    for line in ax.get_lines():
        for x, y in ax.transData.transform(line.get_xydata()):
            assert not legend.contains(x, y), (line.get_label(), x, y)
    assert not legend.overlaps(ax.get_window_extent(canvas.get_renderer()))
