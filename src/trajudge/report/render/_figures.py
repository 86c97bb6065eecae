"""The report's plots as PNG bytes (matplotlib's Agg canvas: no display, no pyplot state)."""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING

from trajudge.calibration import Estimate
from trajudge.report._model import Report
from trajudge.report.sections._alignment import reliability_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_DPI = 110


def _png(fig: Figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def _ok(est: Estimate | None) -> bool:
    return est is not None and not math.isnan(est.value)


def _err(est: Estimate) -> tuple[list[float], list[float]]:
    if math.isnan(est.low) or math.isnan(est.high):
        return [0.0], [0.0]
    return [max(est.value - est.low, 0.0)], [max(est.high - est.value, 0.0)]


def kappa_figure(report: Report) -> bytes | None:
    """Cohen's kappa per judge with its 95% interval; the labellers' ceiling as a line."""
    rows = [(j.name, j.calibration.kappa) for j in report.judges]
    if not rows:
        return None
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 0.6 + 0.45 * len(rows)))
    ax = fig.add_subplot()
    for y, (_, est) in enumerate(rows):
        if _ok(est):
            lo, hi = _err(est)
            ax.errorbar([est.value], [y], xerr=[lo, hi], fmt="o", color="#1f5f8b", capsize=4)
        else:
            ax.text(0.0, y, "undefined", va="center", ha="center", color="#888888")
    for c in report.ceilings:
        if not math.isnan(c.agreement.mean_kappa):
            ax.axvline(c.agreement.mean_kappa, color="#c0392b", ls="--", lw=1, label="ceiling")
    ax.axvline(0.0, color="#999999", lw=0.8)
    ax.set_yticks(range(len(rows)), [n for n, _ in rows])
    ax.set_xlim(-1.0, 1.0)
    ax.invert_yaxis()
    ax.set_xlabel(f"Cohen's κ vs {report.labels_phrase} (95% interval)")
    if report.ceilings:
        ax.legend(loc="lower left", fontsize=8)
    return _png(fig)


def pass_k_figure(report: Report) -> bytes | None:
    """pass^k against k for every verdict source, with bootstrap intervals over tasks."""
    fig = pass_k_plot(report)
    return None if fig is None else _png(fig)


def pass_k_plot(report: Report) -> Figure | None:
    """:func:`pass_k_figure`'s figure. The legend sits right of the axes: inside, it covered
    the points at pass^k = 1.0 (a gate source, a perfect task set) wherever it was put."""
    sources = report.all_sources()
    if not sources:
        return None
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.0))
    ax = fig.add_subplot()
    width = 0.6 / max(len(sources), 1)
    for i, src in enumerate(sources):
        ks = [k for k in report.ks if _ok(src.pass_hat.get(k))]
        if not ks:
            continue
        xs = [k + (i - (len(sources) - 1) / 2) * width for k in ks]
        ests = [src.pass_hat[k] for k in ks]
        lo = [_err(e)[0][0] for e in ests]
        hi = [_err(e)[1][0] for e in ests]
        ax.errorbar(
            xs, [e.value for e in ests], yerr=[lo, hi], fmt="-o", capsize=3, label=src.title
        )
    ax.set_xticks(report.ks)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("k")
    ax.set_ylabel("pass^k (95% interval)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return fig


def confusion_figure(report: Report) -> bytes | None:
    """Each judge's confusion matrix against the labels (rows: labels, columns: judge)."""
    judges = [j for j in report.judges if sum(map(sum, j.calibration.confusion))]
    if not judges:
        return None
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2.8 * len(judges), 2.9))
    for i, row in enumerate(judges):
        ax = fig.add_subplot(1, len(judges), i + 1)
        m = row.calibration.confusion
        ax.imshow(m, cmap="Blues")
        for r in range(2):
            for c in range(2):
                ax.text(c, r, str(m[r][c]), ha="center", va="center", fontsize=12)
        ax.set_xticks([0, 1], ["fail", "pass"])
        ax.set_yticks([0, 1], ["fail", "pass"])
        ax.set_xlabel(f"judge {row.name}")
        if i == 0:
            ax.set_ylabel("labels")
    return _png(fig)


def flip_figure(report: Report) -> bytes | None:
    """Share of verdicts that flip when the presentation order is swapped, per judge."""
    rows = [(j.name, j.calibration.flip_rate) for j in report.judges]
    rows = [(n, e) for n, e in rows if e is not None and _ok(e)]
    if not rows:
        return None
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 0.6 + 0.45 * len(rows)))
    ax = fig.add_subplot()
    for y, (_, est) in enumerate(rows):
        assert est is not None
        lo, hi = _err(est)
        ax.barh([y], [est.value], xerr=[lo, hi], color="#e67e22", capsize=4)
    ax.set_yticks(range(len(rows)), [n for n, _ in rows])
    ax.set_xlim(0.0, 1.0)
    ax.invert_yaxis()
    ax.set_xlabel("flip rate under order swap (95% interval)")
    return _png(fig)


def _reliability(report: Report) -> bytes | None:

    return reliability_figure(report)


FIGURES = {
    "kappa": ("Agreement with the labels", kappa_figure),
    "pass_k": ("pass^k by verdict source", pass_k_figure),
    "confusion": ("Confusion matrices", confusion_figure),
    "flips": ("Position flips", flip_figure),
    "reliability": ("Reliability diagrams on the holdout (alignment)", _reliability),
}


def figures(report: Report) -> dict[str, tuple[str, bytes]]:
    """Every plot that applies: name -> (title, PNG bytes)."""
    out: dict[str, tuple[str, bytes]] = {}
    for name, (title, make) in FIGURES.items():
        png = make(report)
        if png is not None:
            out[name] = (title, png)
    return out
