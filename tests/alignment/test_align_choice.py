"""``trajudge align`` chooses the method to save on dev, and refuses to save what dev rejects.

Every figure is recomputed in ``cv_worlds`` from the calls and labels written to the store,
with scikit-learn alone (GroupKFold over the dev tasks, each method refitted per fold,
``cohen_kappa_score`` of the pooled out-of-fold verdicts), never read from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv_worlds as w
import numpy as np
import pytest
import typer.testing
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import cohen_kappa_score

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.evalset import split_of
from trajudge.store import Store

pytestmark = pytest.mark.timeout(600)
runner = typer.testing.CliRunner()
NOISE_CHECKS = ("a", "b", "c")


def _store(tmp_path: Path, items: object, rules: tuple[str, ...] = ()) -> str:
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    w.write(store, items, rules)  # type: ignore[arg-type]
    store.close()
    return url


def _align(url: str, *extra: str) -> typer.testing.Result:
    args = ["align", w.DATASET, "--judge", w.JUDGE, "--db", url, "--dev-share", str(w.SHARE),
            "--salt", w.SALT, "--n-boot", "100", *extra]  # fmt: skip
    return runner.invoke(app, args)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _last_line(result: typer.testing.Result) -> str:
    return [line for line in result.output.splitlines() if line.strip()][-1]


def _saved(url: str) -> list[dict[str, object]]:
    store = Store(url)
    try:
        return store.aligned_judges()
    finally:
        store.close()


def test_a_clean_judge_whose_methods_lose_on_dev_is_refused(tmp_path: Path) -> None:
    items = w.clean(0, NOISE_CHECKS)
    cv = w.cross_validated(w.dev(items), [f"{c}" for c in NOISE_CHECKS])
    # the world is what it claims: a clean judge, and every method loses on dev (the stack
    # most: three noise checks on 30 items), as the stack did on the holdout
    assert cv["judge"] > 0.9 and cv["stack"] < cv["judge"] - 0.15
    assert cv["threshold"] < cv["judge"] and cv["calibrate"] < cv["judge"]
    url = _store(tmp_path, items, NOISE_CHECKS)
    result = _align(url, "--method", "threshold,calibrate,stack")
    assert result.exit_code == 1, result.output
    judge = f"{cv['judge']:.2f}"
    refusal = _last_line(result)
    assert refusal == (
        f"not saved: calibrate is worse than the judge as it stands on dev (κ "
        f"{cv['calibrate']:.2f} against {judge}); threshold is worse than the judge as it stands "
        f"on dev (κ {cv['threshold']:.2f} against {judge}); stack (reported only, never saved): "
        f"κ {cv['stack']:.2f}; κ cross-validated in 5 folds over the 10 dev tasks"
    ), refusal
    assert refusal in result.stderr  # the refusal is the error line, on stderr
    out = _flat(result.output)
    row = (
        f"stack (optional) │ — │ {cv['stack']:.2f} │ {judge} │ reported only; worse than the judge"
    )
    assert row in out, out
    assert "Aligned judge j-aligned (not saved) of judge j" in out
    assert _saved(url) == []  # nothing reached the store
    # asked for by name, a method dev says is worse is refused all the same
    asked = _align(url, "--method", "threshold,calibrate", "--use", "threshold")
    assert asked.exit_code == 1 and _saved(url) == []
    assert _last_line(asked) == (
        f"not saved: threshold is worse than the judge as it stands on dev (κ "
        f"{cv['threshold']:.2f} against {judge}); κ cross-validated in 5 folds over the 10 dev "
        "tasks"
    )
    # and the stack can never be asked for: one line, bad input
    stack = _align(url, "--method", "threshold,stack", "--use", "stack")
    assert stack.exit_code == 2 and len(stack.output.strip().splitlines()) == 1, stack.output
    assert "use: stack is never saved" in _flat(stack.output)


def test_a_clean_judge_no_method_beats_is_saved_no_worse(tmp_path: Path) -> None:
    items = w.clean(11, NOISE_CHECKS)
    cv = w.cross_validated(w.dev(items), NOISE_CHECKS)
    assert cv["judge"] > 0.9 and cv["stack"] < cv["judge"] - 0.2  # the 0.92 -> 0.68
    assert cv["calibrate"] == cv["threshold"] == cv["judge"]  # a tie: no worse
    url = _store(tmp_path, items, NOISE_CHECKS)
    result = _align(url, "--method", "threshold,calibrate,stack")
    assert result.exit_code == 0, result.output
    out = _flat(result.output)
    judge = f"{cv['judge']:.2f}"
    assert (
        f"Saved: calibrate, the best on dev of calibrate and threshold (a tie goes to calibrate): "
        f"5-fold cross-validated κ {judge} against the judge's {judge}" in out
    ), out
    assert "no better than the judge but no worse" in out
    row = (
        f"stack (optional) │ — │ {cv['stack']:.2f} │ {judge} │ reported only; worse than the judge"
    )
    assert row in out, out
    (record,) = _saved(url)
    assert record["rule"]["method"] == "calibrate"  # type: ignore[index]
    kappa = record["choice"]["dev_cv"]["kappa"]  # type: ignore[index]
    for m in ("threshold", "calibrate", "stack"):
        assert kappa[m] == pytest.approx(cv[m], abs=1e-12)


def test_a_lenient_judge_gets_the_threshold_dev_chooses_and_it_is_saved(tmp_path: Path) -> None:
    items = w.lenient(4)
    d = w.dev(items)
    cv = w.cross_validated(d)
    # a threshold shift helps this judge, and on dev it helps more than calibration does
    assert cv["threshold"] > cv["calibrate"] and cv["threshold"] > cv["judge"] + 0.1
    url = _store(tmp_path, items)
    result = _align(url, "--method", "threshold,calibrate")
    assert result.exit_code == 0, result.output
    out = _flat(result.output)
    assert (
        f"Saved: threshold, the best on dev of threshold and calibrate: 5-fold cross-validated "
        f"κ {cv['threshold']:.2f} against the judge's {cv['judge']:.2f} on the same {len(d)} "
        f"labelled dev items ({d['task_id'].nunique()} tasks, whole tasks per fold)." in out
    ), out
    assert "saved aligned judge j-aligned version 1 (threshold)" in out
    (record,) = _saved(url)
    choice = record["choice"]  # type: ignore[index]
    assert choice["method"] == "threshold" and choice["refusal"] is None
    assert choice["dev_cv"]["judge_kappa"] == pytest.approx(cv["judge"], abs=1e-12)
    for m in ("threshold", "calibrate"):
        assert choice["dev_cv"]["kappa"][m] == pytest.approx(cv[m], abs=1e-12)
    # the saved cut is the one fitted on all of dev; the holdout measures it, untouched
    cut = w._kappa_cut(d["score"].to_numpy(float), d["label"].to_numpy())
    assert record["rule"]["threshold"] == cut  # type: ignore[index]
    hold = items[[split_of(t, w.SHARE, w.SALT) == "holdout" for t in items["task_id"]]]
    y = (hold["level"] >= w.PASS).astype(int)
    after = ((hold["ab"] + hold["ba"]) / 2 >= cut).astype(int)
    k = record["methods"]["threshold"]["verdicts"]["kappa"]  # type: ignore[index]
    assert k["after"]["value"] == pytest.approx(cohen_kappa_score(y, after), abs=1e-12)


def test_a_cut_off_the_scale_is_flagged_everywhere_and_never_saved(tmp_path: Path) -> None:
    items = w.rarely_passing()
    d = w.dev(items)
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    iso.fit(d["score"], d["label"])
    assert iso.predict(np.arange(1.0, 5.5, 0.5)).max() < 0.5  # no score reaches p = 0.5
    url = _store(tmp_path, items)
    never = "can never pass on this 1..5 scale: every item is a fail"
    result = _align(url, "--method", "calibrate")
    assert result.exit_code == 1, result.output
    out = _flat(result.output)
    assert ("Its verdict would have been: calibrated probability of pass >= 0.5 (isotonic on "
            f"the mean score), the same as mean score >= 6.00: {never}.") in out  # fmt: skip
    assert _last_line(result) == f"not saved: calibrate fits mean score >= 6.00, which {never}"
    assert _saved(url) == []
    # beside a threshold that dev finds no worse, the threshold is saved and the flag shows
    # in every format the alignment is shown in: terminal, Markdown, HTML and JSON
    both = _align(url, "--method", "threshold,calibrate")
    assert both.exit_code == 0, both.output
    assert f"calibrate │ mean score >= 6.00: {never} │ " in _flat(both.output), both.output
    (record,) = _saved(url)
    assert record["rule"]["method"] == "threshold"  # type: ignore[index]
    out_dir = tmp_path / "report"
    report = runner.invoke(app, ["report", w.DATASET, "--db", url, "--out", str(out_dir),
                                 "--format", "md,html,json", "--n-boot", "20"])  # fmt: skip
    assert report.exit_code == 0, report.output
    assert f"mean score >= 6.00: {never}" in _flat(report.output)
    assert f"| calibrate | mean score >= 6.00: {never} |" in (out_dir / "report.md").read_text()
    assert never in (out_dir / "report.html").read_text()
    (aligned,) = json.loads((out_dir / "report.json").read_text())["alignment"]
    rows = {r["method"]: r for r in aligned["choice"]["rows"]}
    assert rows["calibrate"]["flag"] == never and rows["threshold"]["flag"] is None
    assert rows["calibrate"]["decision"] == "degenerate threshold"


def test_a_cut_every_score_passes_is_flagged_and_refused(tmp_path: Path) -> None:
    # the inverted judge: no cut agrees better than passing everything (kappa 0), so the
    # threshold fitted on dev is its lowest score, 1, and every score on the scale passes
    url = _store(tmp_path, w.inverted())
    result = _align(url, "--method", "threshold")
    assert result.exit_code == 1, result.output
    flag = "passes every score on this 1..5 scale: every item passes"
    assert _last_line(result) == f"not saved: threshold fits mean score >= 1.00, which {flag}"
    assert (
        f"Its verdict would have been: mean score >= 1.00 (the threshold fitted on dev): {flag}."
        in _flat(result.output)
    )
    assert _saved(url) == []


def test_a_holdout_that_contradicts_dev_is_reported_not_used(tmp_path: Path) -> None:
    items = w.drifting()
    d = w.dev(items)
    cv = w.cross_validated(d)
    assert cv["threshold"] > cv["judge"]  # dev says the shifted cut is better
    url = _store(tmp_path, items)
    result = _align(url, "--method", "threshold")
    assert result.exit_code == 0, result.output  # dev decides: saved
    (record,) = _saved(url)
    assert record["rule"]["threshold"] == 5.0  # type: ignore[index]
    # the holdout (exact scores, level-4 passes scored 4) says the opposite
    hold = items[[split_of(t, w.SHARE, w.SALT) == "holdout" for t in items["task_id"]]]
    y = (hold["level"] >= w.PASS).astype(int)
    before = cohen_kappa_score(y, (hold["ab"] >= w.PASS).astype(int))
    after = cohen_kappa_score(y, (hold["ab"] >= 5.0).astype(int))
    assert before == 1.0 and after < before
    assert (
        f"The holdout disagrees with dev: threshold's κ there is {before:.2f} -> {after:.2f}, "
        "a loss" in _flat(result.output)
    ), result.output
    report = runner.invoke(app, ["report", w.DATASET, "--db", url, "--out", str(tmp_path / "r"),
                                 "--format", "json", "--n-boot", "20"])  # fmt: skip
    assert report.exit_code == 0, report.output
    summary = [line for line in report.output.splitlines() if "aligned judge j-aligned" in line]
    assert summary and "The holdout disagrees with dev." in _flat(" ".join(summary))


def test_one_dev_task_is_too_few_to_choose_by_and_says_so(tmp_path: Path) -> None:
    items = w.lenient(4)
    tasks = sorted(set(items["task_id"]))
    share = next(s / 100 for s in range(1, 50)
                 if sum(split_of(t, s / 100, w.SALT) == "dev" for t in tasks) == 1)  # fmt: skip
    url = _store(tmp_path, items)
    result = runner.invoke(app, ["align", w.DATASET, "--judge", w.JUDGE, "--db", url,
                                 "--dev-share", str(share), "--salt", w.SALT,
                                 "--method", "threshold"])  # fmt: skip
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "cross-fitting needs >= 2 folds and >= 2 tasks, got 1 tasks" in _flat(result.output)
    assert _saved(url) == []


def test_trajudge_run_says_why_nothing_was_saved_and_goes_on(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from trajudge.config import TrajudgeConfig
    from trajudge.pipeline import RunSummary
    from trajudge.pipeline._phases import _align

    items = w.clean(0, NOISE_CHECKS)  # every method loses on dev (the first test)
    url = _store(tmp_path, items, NOISE_CHECKS)
    cfg = TrajudgeConfig.model_validate(
        {"align": {"judge": w.JUDGE, "methods": ["threshold", "calibrate"],
                   "dev_share": w.SHARE, "salt": w.SALT}}
    )  # fmt: skip
    summary, text = RunSummary(dataset=w.DATASET), io.StringIO()
    store = Store(url)
    try:
        _align(store, w.DATASET, cfg, {}, None, None, summary, Console(file=text, width=400), 50)
    finally:
        store.close()
    assert summary.aligned is None and summary.exit_code == 0  # the report decides the exit
    assert summary.align_refused is not None
    assert summary.align_refused.startswith("not saved: calibrate is worse than the judge")
    assert summary.to_dict()["align_refused"] == summary.align_refused
    assert f"align: {summary.align_refused}" in text.getvalue()
    assert _saved(url) == []


def _with_dev_tasks(items: object, n_dev: int) -> object:
    """``items`` with ``n_dev`` of its dev tasks (by the split's own hash) and every holdout
    task."""
    frame = items  # a DataFrame from cv_worlds
    tasks = sorted(set(frame["task_id"]))  # type: ignore[index]
    dev = [t for t in tasks if split_of(t, dev_share=w.SHARE, salt=w.SALT) == "dev"]
    keep = set(dev[:n_dev]) | {t for t in tasks if t not in dev}
    return frame[frame["task_id"].isin(keep)]  # type: ignore[index]


def test_two_dev_tasks_are_too_few_to_choose_a_method(tmp_path: Path) -> None:
    """With two dev tasks each fold fits on one task and is scored on the other: whatever the
    figures, nothing is saved, and the refusal says why and what to do."""
    items = _with_dev_tasks(w.lenient(), 2)
    dev_tasks = {
        t for t in items["task_id"] if split_of(t, dev_share=w.SHARE, salt=w.SALT) == "dev"
    }  # type: ignore[index]
    assert len(dev_tasks) == 2
    url = _store(tmp_path, items)
    result = _align(url, "--method", "threshold,calibrate")
    assert result.exit_code == 1, result.output
    assert _last_line(result) == (
        "not saved: dev holds 2 tasks, and telling a method from the judge by cross-validation "
        "takes at least 3 (whole tasks per fold): label more tasks or give dev a larger share "
        "(--dev-share)"
    )
    assert _saved(url) == []
    # three dev tasks: the same world is judged on its figures, not refused for its size
    three = tmp_path / "three"
    three.mkdir()
    url3 = _store(three, _with_dev_tasks(w.lenient(), 3))
    assert "takes at least 3" not in _align(url3, "--method", "threshold,calibrate").output
