"""``trajudge align --feature expected_score`` on judgments whose expected scores were read
from token log-probabilities (the fake server reports them in OpenAI's shape).

The judge writes 4 for GOOD (labelled 5) and TRICKY (labelled 2, a fail) runs alike, so no
cut on the sampled score tells them apart; its token probabilities do: GOOD 4 (0.9) or 5
(0.1), expected 4.1; TRICKY 4 (0.5) or 2 (0.5), expected 3.0; BAD 1 (1.0), expected 1.0.
Both ``calibrate`` and ``threshold`` read ``--feature``. On the expected score they separate
the kinds on the holdout (κ = 1): the threshold's dev candidates are 1.0, 3.0 and 4.1, and
only a cut at 4.1 passes the GOOD runs alone. On the sampled score they cannot (κ as
before): the candidates are 1 (everything passes, κ = 0) and 4 (the rubric's own cut).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import typer.testing
import yaml
from align_project import DATASET, LABEL, RUBRIC, SHOWN, kind, trajectories
from fake_llm import FakeLLM, token_logprobs
from sklearn.metrics import cohen_kappa_score

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.evalset import split_of
from trajudge.judges import Judge, JudgeSpec, score_dataset
from trajudge.store import Store

pytestmark = pytest.mark.timeout(600)
runner = typer.testing.CliRunner()

SCORE = {"GOOD": 4, "TRICKY": 4, "BAD": 1}
TOKENS = {
    "GOOD": [(" 4", [(" 4", 0.9), (" 5", 0.1)])],
    "TRICKY": [(" 4", [(" 4", 0.5), (" 2", 0.5)])],
    "BAD": [(" 1", [(" 1", 1.0)])],
}
EXPECTED = {"GOOD": 4 * 0.9 + 5 * 0.1, "TRICKY": 4 * 0.5 + 2 * 0.5, "BAD": 1.0}


def _decide(user: str, verdict: dict[str, Any]) -> dict[str, Any]:
    shown = SHOWN.search(user)
    assert shown is not None
    k = kind(shown.group(1))
    return {**verdict, "reasoning": k, "score": SCORE[k]}


def _logprobs(content: str) -> list[dict[str, Any]]:
    return token_logprobs(content, {"score": TOKENS[json.loads(content)["reasoning"]]})


def test_align_on_expected_scores_separates_what_the_sampled_score_cannot(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    judge = {"name": "lp", "model": "openai/fake", "api_base": fake_llm.api_base,
             "rubric": RUBRIC, "max_retries": 0, "logprobs": True}  # fmt: skip
    config = tmp_path / "trajudge.yaml"
    config.write_text(yaml.safe_dump({"judges": [judge], "cache": str(tmp_path / "c.db")}))
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    trajs = trajectories(24)
    store.import_dataset(DATASET, trajs)
    fake_llm.decide, fake_llm.logprobs = _decide, _logprobs
    summary = score_dataset(store, DATASET, [Judge(JudgeSpec.model_validate(judge))])
    assert summary.errors == 0 and summary.judged == len(trajs)
    frame = store.judgments_frame(DATASET).set_index("trajectory_id")
    for t in trajs:
        k = kind(t.input or "")
        assert frame.loc[t.id, "expected_score"] == pytest.approx(EXPECTED[k])
        store.save_label(DATASET, t.id, RUBRIC, "ann", LABEL[k])
    store.close()

    hold = [t for t in trajs if split_of(t.task_id, 0.5) == "holdout"]
    y = [int(LABEL[kind(t.input or "")] >= 4) for t in hold]
    before = [int(SCORE[kind(t.input or "")] >= 4) for t in hold]  # the rubric's cut: 4
    k0 = f"{cohen_kappa_score(y, before):.2f}"
    assert k0 != "1.00"
    after: dict[tuple[str, str], str] = {}
    for method in ("calibrate", "threshold"):
        for feature in ("expected_score", "score"):
            name = f"lp-{method}-{feature}"
            args = ["align", DATASET, "--judge", "lp", "--config", str(config), "--db", url,
                    "--method", method, "--dev-share", "0.5", "--feature", feature,
                    "--name", name, "--n-boot", "200"]  # fmt: skip
            result = runner.invoke(app, args)
            assert result.exit_code == 0, result.output
            out = " ".join(result.output.split())
            m = re.search(rf"{method} │ κ │ {k0} \[[^]]+\] │ ([\d.-]+) \[", out)
            assert m is not None, out
            after[method, feature] = m.group(1)
            store = Store(url)
            record = store.aligned_judge(name)
            store.close()
            assert record is not None and record["rule"]["feature"] == feature
            if method == "threshold":
                cut = EXPECTED["GOOD"] if feature == "expected_score" else 4.0
                assert record["rule"]["threshold"] == pytest.approx(cut)
    assert after == {
        ("calibrate", "expected_score"): "1.00",
        ("calibrate", "score"): k0,
        ("threshold", "expected_score"): "1.00",
        ("threshold", "score"): k0,
    }


def test_expected_score_missing_is_one_line_naming_judge_and_field(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    judge = {  # no logprobs: no expected score
        "name": "plain",
        "model": "openai/fake",
        "api_base": fake_llm.api_base,
        "rubric": RUBRIC,
        "max_retries": 0,
    }
    config = tmp_path / "trajudge.yaml"
    config.write_text(yaml.safe_dump({"judges": [judge], "cache": str(tmp_path / "c.db")}))
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    trajs = trajectories(8)
    store.import_dataset(DATASET, trajs)
    fake_llm.decide = _decide
    summary = score_dataset(store, DATASET, [Judge(JudgeSpec.model_validate(judge))])
    assert summary.errors == 0
    n_calls = len(store.judgments_frame(DATASET))
    assert n_calls == len(trajs)  # pointwise, one sample: one call each
    for t in trajs:
        store.save_label(DATASET, t.id, RUBRIC, "ann", LABEL[kind(t.input or "")])
    store.close()
    for method in ("threshold", "calibrate"):
        args = ["align", DATASET, "--judge", "plain", "--config", str(config), "--db", url,
                "--method", method, "--feature", "expected_score"]  # fmt: skip
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert result.output == (
            f"error: --feature: judge 'plain': {n_calls} of {n_calls} calls have no "
            "expected_score (judged without `logprobs: true`, or the provider returned no "
            "token probabilities): use --feature score\n"
        )
