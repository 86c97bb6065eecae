"""The report says what degenerate figures mean and what to do next (issue: a newcomer saw
κ = 0 and "more labels needed: n/a" from the embedded model with no word on why)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from trajudge.report import build_report
from trajudge.report.sections._summary import summary_lines

sys.path.insert(0, str(Path(__file__).parent))
import report_helpers as h


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path_factory.mktemp('guide') / 'store.db'}"
    return build_report(h.make_store(url), "ds", ks=[1, 2], n_boot=40, seed=1)


def test_a_judge_with_one_verdict_for_everything_is_explained(report) -> None:  # type: ignore[no-untyped-def]
    # beta says "pass" to every item it judged (report_helpers), alpha errs both ways
    text = "\n".join(report.summary)
    assert (
        "judge beta passes every item it judged (TPR 1.00, TNR 0.00): its κ is 0 whatever "
        "the labels, so more labels cannot make it agree" in text
    )
    assert "judge alpha passes every" not in text and "judge alpha fails every" not in text
    assert "embedded offline model" not in text


def test_the_embedded_model_is_called_a_stand_in_with_the_lines_for_a_real_judge(
    report,  # type: ignore[no-untyped-def]
) -> None:
    alpha = next(j for j in report.judges if j.judge == "alpha")
    local = dataclasses.replace(
        report, judges=[dataclasses.replace(alpha, models=["local/gemma-3-270m"])]
    )
    (line,) = [x for x in summary_lines(local) if "embedded" in x]
    assert "local/gemma-3-270m" in line and "270M-parameter Gemma 3 base model" in line
    assert "`model: openai/gpt-4o-mini` and `api_key_env: OPENAI_API_KEY`" in line
