"""A reference-mode rubric's item shows its reference beside it, as the judges saw it.

The rubric tells annotators about a candidate and a reference; the Label page showed the
candidate alone (issue: "two trajectories, one of them a reference" while the app shows one).
Real τ-bench trajectories and task specs; the reference is the task spec's expected calls,
or the trajectory the judgments of the rubric name; the judgments' verdicts stay hidden.
"""

from __future__ import annotations

from typing import Any

from labeling_helpers import sign_in_as
from streamlit.testing.v1 import AppTest
from test_app_pages import PAGES, plain_texts

from trajudge.labeling_app import AppConfig
from trajudge.labeling_app import _state as S
from trajudge.store import Store

RUBRIC = "trajectory_reasonableness_reference"


def _label_page(db_url: str, dataset: str) -> AppTest:
    at = AppTest.from_string(PAGES["label"], default_timeout=60)
    at.session_state[S.CONFIG] = AppConfig(
        db_url=db_url, dataset=dataset, overlap=1.0, rubric=RUBRIC
    )
    sign_in_as(at, db_url, "ann")
    return at.run()


def _reference_steps(at: AppTest, candidate_steps: int) -> list[str]:
    """The step blocks below the item's own (``at.code`` is in page order)."""
    blocks = [str(c.value) for c in at.code if str(c.value).startswith("Step ")]
    return blocks[candidate_steps:]


def test_the_task_specs_expected_calls_are_shown_beside_the_item(
    tau_bench_file: Any, db_url: str
) -> None:
    from trajudge.trajectories import from_tau_bench

    trajectories, specs = from_tau_bench(tau_bench_file)
    store = Store(db_url)
    store.import_dataset("tau", trajectories[:8], specs)
    at = _label_page(db_url, "tau")
    assert not at.exception
    tid = at.session_state[S.CURRENT]
    shown = next(t for t in trajectories if t.id == tid)
    expected = specs[shown.task_id].reference or []
    assert expected, "the first tasks of the τ-bench file expect actions"
    texts = plain_texts(at)
    assert "Reference: the calls the task spec expects" in texts
    steps = _reference_steps(at, len(shown.steps))
    assert [s.split("\n", 1)[0].split(":")[1].split("·")[0].strip() for s in steps] == [
        c.tool for c in expected
    ]
    assert "Reference" in [str(s.value) for s in at.subheader]


def test_the_reference_the_judgments_name_is_shown_without_their_verdicts(
    tau_bench_file: Any, db_url: str
) -> None:
    from trajudge.trajectories import from_tau_bench

    trajectories, _ = from_tau_bench(tau_bench_file)
    task = [t for t in trajectories if t.task_id == trajectories[0].task_id]  # its 4 trials
    store = Store(db_url)
    store.import_dataset("tau", task, {})  # no spec: the judges compared with a trial
    for t in task:
        other = task[1].id if t.id != task[1].id else task[2].id
        store.add_judgment(
            "tau",
            {
                "trajectory_id": t.id,
                "other_id": other,
                "judge": "j",
                "rubric_id": RUBRIC,
                "rubric_version": "v",
                "model": "m",
                "mode": "reference",
                "order": "ab",
                "sample": 0,
                "score": 5.0,
                "verdict": "pass",
                "reasoning": "SECRET-VERDICT-REASONING",
            },
        )
    at = _label_page(db_url, "tau")
    assert not at.exception
    tid = at.session_state[S.CURRENT]
    other = task[1].id if tid != task[1].id else task[2].id
    texts = plain_texts(at)
    assert f"Reference: trajectory {other} " in texts
    ref = next(t for t in task if t.id == other)
    shown = next(t for t in task if t.id == tid)
    assert len(_reference_steps(at, len(shown.steps))) == len(ref.steps)
    assert "SECRET-VERDICT-REASONING" not in texts  # blind: ids only, never verdicts
