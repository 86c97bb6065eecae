"""Each page under AppTest with seeded session state and a temporary SQLite store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from labeling_helpers import DATASET, IMG, LINK, PASSWORD, SCRIPT, sign_in_as
from streamlit.testing.v1 import AppTest

from trajudge.labeling_app import AppConfig, app_script
from trajudge.labeling_app import _state as S
from trajudge.labeling_app.auth._manage import add_account
from trajudge.labeling_app.auth._session import SESSION
from trajudge.labeling_app.auth._signin import FAILED, SignedIn
from trajudge.store import Store

RUBRIC = "trajectory_reasonableness"
PAGES = {
    "login": "from trajudge.labeling_app.auth._page_signin import page_login\npage_login()",
    "label": "from trajudge.labeling_app.pages._page_label import page_label\npage_label()",
    "review": "from trajudge.labeling_app.pages._page_review import page_review\npage_review()",
    "export": "from trajudge.labeling_app.pages._page_misc import page_export\npage_export()",
}


def run_page(
    page: str,
    url: str,
    *,
    annotator: str | None = "ann",
    role: str = "annotator",
    config: dict[str, Any] | None = None,
    **state: Any,
) -> AppTest:
    """Run one page with seeded state; ``config`` overrides fields of the app's config."""
    at = AppTest.from_string(PAGES[page], default_timeout=60)
    at.session_state[S.CONFIG] = AppConfig(
        **{"db_url": url, "dataset": DATASET, "overlap": 1.0, **(config or {})}
    )
    if annotator is not None:
        sign_in_as(at, url, annotator, role)
    for k, v in state.items():
        at.session_state[k] = v
    return at.run()


def rich_texts(at: AppTest) -> list[str]:
    """Everything a page renders as Markdown (where HTML or links could come alive)."""
    out: list[str] = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "info", "success"):
        out += [str(e.value) for e in getattr(at, kind)]
    out += [str(e.value) for e in at.warning] + [str(e.value) for e in at.error]
    out += [str(e.label) for e in at.expander] + [str(b.label) for b in at.button]
    return out


def plain_texts(at: AppTest) -> str:
    return "\n".join([str(e.value) for e in at.code] + [str(e.value) for e in at.text])


def session_of(at: AppTest) -> SignedIn | None:
    found = at.session_state.get(SESSION, None)
    return found if isinstance(found, SignedIn) else None


def my_rows(store: Store, annotator: str = "ann") -> list[dict[str, Any]]:
    frame = store.labels_frame(DATASET)
    return frame[frame["annotator"] == annotator].to_dict(orient="records")


def test_login_lists_no_names_and_says_one_thing_for_every_failure(
    store_url: str, store: Store
) -> None:
    add_account(store, "alice", password=PASSWORD)
    store.save_label(DATASET, "t001", RUBRIC, "alice", 4.0, note="ALICE-NOTE")
    at = run_page("login", store_url, annotator=None)
    assert not at.exception
    # no list of names: nothing on the page says who has an account or labeled
    assert not at.selectbox and "alice" not in "\n".join([*rich_texts(at), plain_texts(at)])
    messages = []
    for name, given in [("alice", "nope"), ("nobody", PASSWORD), ("<b>bad</b>", PASSWORD)]:
        at.text_input(key="login-name").input(name)
        at.text_input(key="login-password").input(given)
        at.button(key="login-go").click().run()
        assert at.session_state[S.ANNOTATOR] is None and session_of(at) is None
        messages += [e.value for e in at.error]
    assert messages == [FAILED] * 3
    at.text_input(key="login-name").input("alice")
    at.text_input(key="login-password").input(PASSWORD)
    at.button(key="login-go").click().run()
    assert at.session_state[S.ANNOTATOR] == "alice"
    assert session_of(at) is not None and session_of(at).name == "alice"
    assert at.session_state[S.DATASET] == DATASET


def test_entry_file_signs_in_with_an_invite_then_asks_for_a_password(
    store_url: str, store: Store
) -> None:
    _, token = add_account(store, "ann")
    assert token is not None
    at = AppTest.from_file(str(app_script()), default_timeout=60)
    at.session_state[S.CONFIG] = AppConfig(db_url=store_url, dataset=DATASET)
    at.run()
    assert not at.exception
    assert [t.value for t in at.title] == ["trajudge · human labels"]
    at.text_input(key="login-name").input("ann")
    at.text_input(key="login-password").input(token)
    at.button(key="login-go").click().run()
    assert not at.exception
    # signed in with the invite: a password first, nothing else
    assert [t.value for t in at.title] == ["Choose your password"]
    assert not any(b.label == "Next" for b in at.button)
    at.text_input(key="new-password").input("short")
    at.text_input(key="new-password-2").input("short")
    at.button(key="set-password-go").click().run()
    assert any("at least 10" in e.value for e in at.error)
    at.text_input(key="new-password").input(PASSWORD)
    at.text_input(key="new-password-2").input(PASSWORD)
    at.button(key="set-password-go").click().run()
    assert not at.exception
    # the label page is the default page now; the invite is used up
    assert any(b.label == "Next" for b in at.button)
    account = store.account("ann")
    assert account is not None and account.secret_kind == "password"


def test_xss_sample_is_shown_as_inert_text(store_url: str, store: Store) -> None:
    store.save_rule_results(
        DATASET,
        [
            {
                "trajectory_id": "xss",
                "spec_sha256": "s",
                "gates_passed": False,
                "score": 0.5,
                "data": {"results": [{"check": "forbidden", "passed": False, "detail": LINK}]},
            }
        ],
    )
    at = run_page("label", store_url, **{S.CURRENT: "xss", S.CURSOR: 1, S.SHOW_JUDGES: True})
    assert not at.exception
    shown = plain_texts(at)
    for payload in (SCRIPT, IMG, LINK):
        assert payload in shown  # the content is there, verbatim, as text or code
    for text in rich_texts(at):
        for bad in ("<script", "onerror", "javascript:", "<img"):
            assert bad not in text, text
    # the rule check's detail is on its line of the rule text, as text
    assert any("FAIL" in t.value and "forbidden" in t.value and LINK in t.value for t in at.text)


def test_judges_are_hidden_unless_turned_on(store_url: str, store: Store) -> None:
    store.add_judgment(
        DATASET,
        {
            "trajectory_id": "xss",
            "judge": "gpt-judge",
            "rubric_id": RUBRIC,
            "rubric_version": "v",
            "model": "m",
            "mode": "pointwise",
            "order": "ab",
            "sample": 0,
            "score": 2.0,
            "reasoning": "REASONING-MARKER",
        },
    )
    state = {S.CURRENT: "xss", S.CURSOR: 1}
    # a server started with --show-judges: each annotator can still turn the verdicts off
    at = run_page("label", store_url, config={"show_judges": True}, **state)
    assert "Judge verdicts" in [s.value for s in at.subheader]
    assert "REASONING-MARKER" in plain_texts(at)
    at.toggle(key=S.SHOW_JUDGES).set_value(False).run()
    assert "REASONING-MARKER" not in plain_texts(at)
    assert "Judge verdicts" not in [s.value for s in at.subheader]
    at.toggle(key=S.SHOW_JUDGES).set_value(True).run()
    assert "REASONING-MARKER" in plain_texts(at)


def test_label_save_next_back_and_edit(store_url: str, store: Store) -> None:
    at = run_page("label", store_url)
    first = at.session_state[S.CURRENT]
    assert first is not None
    assert [b.label for b in at.button][:5] == [
        "1 · unreasonable",
        "2 · mostly wrong",
        "3 · partly right",
        "4 · reasonable",
        "5 · ideal",
    ]
    assert [p.proto.text for p in at.get("progress")] == [
        "You: 0 / 12 labeled",
        "Everyone: 0 / 12 items have a label",
    ]
    # Next without a label does not move on
    next_btn = next(b for b in at.button if b.label == "Next")
    next_btn.click().run()
    assert at.session_state[S.CURRENT] == first
    assert any("label or skip" in w.value for w in at.warning)
    at.text_area(key=S.widget_key("note", first)).input("looks fine").run()
    at.button(key="value-4").click().run()
    rows = my_rows(store)
    assert [(r["trajectory_id"], r["value"], r["note"]) for r in rows] == [
        (first, 4.0, "looks fine")
    ]
    # the unsure flag re-saves the label at once, keeping the old version as history
    at.checkbox(key=S.widget_key("unsure", first)).check().run()
    (row,) = my_rows(store)
    assert row["unsure"] and len(store.label_history(int(row["id"]))) == 1
    next(b for b in at.button if b.label == "Next").click().run()
    second = at.session_state[S.CURRENT]
    assert second not in (None, first)
    assert [p.proto.text for p in at.get("progress")] == [
        "You: 1 / 12 labeled",
        "Everyone: 1 / 12 items have a label",
    ]
    # back to the first item: its label is shown and can be edited (history kept)
    next(b for b in at.button if b.label == "Back").click().run()
    assert at.session_state[S.CURRENT] == first
    assert any("Your label: 4 · reasonable" in i.value for i in at.info)
    at.button(key="value-2").click().run()
    (row,) = my_rows(store)
    assert row["value"] == 2.0
    assert [h["value"] for h in store.label_history(int(row["id"]))] == [4.0, 4.0]
    assert [h["unsure"] for h in store.label_history(int(row["id"]))] == [False, True]
    # the earlier versions, as the annotator saw them (level text, flags)
    (shown,) = [d.value for d in at.dataframe]
    assert list(shown["label"]) == ["4 · reasonable", "4 · reasonable"]
    assert list(shown["unsure"]) == [False, True]


def test_recent_labels_open_an_earlier_item(store_url: str) -> None:
    at = run_page("label", store_url)
    first = at.session_state[S.CURRENT]
    assert not at.selectbox  # the list is drawn only while its expander is open
    at.button(key="value-4").click().run()
    next(b for b in at.button if b.label == "Next").click().run()
    second = at.session_state[S.CURRENT]
    at.button(key="value-2").click().run()
    at.session_state[S.RECENT_OPEN] = True  # the annotator opens "Your recent labels"
    at.run()
    pick = at.selectbox(key="open-pick")
    assert pick.options == [second, first]  # the latest first
    pick.select(first).run()
    next(b for b in at.button if b.label == "Open").click().run()
    assert at.session_state[S.CURRENT] == first
    assert at.session_state[S.VISITED] == [first, second]  # Back returns to the second
    assert [m.value for m in at.info] == ["Your label: 4 · reasonable"]


def test_skip_saves_a_skipped_label_and_moves_on(store_url: str, store: Store) -> None:
    at = run_page("label", store_url)
    first = at.session_state[S.CURRENT]
    next(b for b in at.button if b.label == "Skip").click().run()
    assert at.session_state[S.CURRENT] not in (None, first)
    (row,) = my_rows(store)
    assert row["trajectory_id"] == first and row["skipped"] and pd.isna(row["value"])


def test_queue_done(store_url: str, store: Store) -> None:
    for t in store.trajectory_keys(DATASET):
        store.save_label(DATASET, t[0], RUBRIC, "ann", 3.0)
    at = run_page("label", store_url)
    assert at.session_state[S.CURRENT] is None
    assert any("queue is done" in s.value for s in at.success)


def test_review_and_adjudication(store_url: str, store: Store) -> None:
    store.save_label(DATASET, "t001", RUBRIC, "ann", 5.0, note=SCRIPT)
    store.save_label(DATASET, "t001", RUBRIC, "bob", 1.0)
    store.save_label(DATASET, "t002", RUBRIC, "ann", 5.0)
    store.add_judgment(
        DATASET,
        {
            "trajectory_id": "t002",
            "judge": "j",
            "rubric_id": RUBRIC,
            "rubric_version": "v",
            "model": "m",
            "mode": "pointwise",
            "order": "ab",
            "sample": 0,
            "score": 1.0,
            "reasoning": IMG,
        },
    )
    at = run_page("review", store_url, role="adjudicator")
    assert not at.exception
    judge_table, human_table = at.dataframe[0].value, at.dataframe[1].value
    assert judge_table["trajectory_id"].tolist() == ["t002"]
    assert human_table["trajectory_id"].tolist() == ["t001"]
    assert SCRIPT in plain_texts(at) and IMG in plain_texts(at)
    for text in rich_texts(at):
        assert "<script" not in text and "<img" not in text
    at.radio(key="human-adj-value-t001").set_value(3)
    at.text_area(key="human-adj-note-t001").input("middle ground")
    next(b for b in at.button if b.label == "Save adjudication" and "human" in str(b.key)).click()
    at.run()
    frame = store.labels_frame(DATASET)
    adj = frame[frame["adjudication"]].to_dict(orient="records")
    assert [(r["trajectory_id"], r["annotator"], r["value"], r["note"]) for r in adj] == [
        ("t001", "ann", 3.0, "middle ground")
    ]
    at.run()
    assert at.dataframe[1].value["adjudicated"].tolist() == [True]


def test_export_page_offers_three_formats(store_url: str, store: Store) -> None:
    store.save_label(DATASET, "t001", RUBRIC, "ann", 5.0)
    at = run_page("export", store_url)
    assert not at.exception
    downloads = at.get("download_button")
    assert [d.proto.label for d in downloads] == [
        "Download CSV",
        "Download JSONL",
        "Download PARQUET",
    ]
    assert len(at.dataframe[0].value) == 1


BINARY = """
id: task_success
description: Did the agent complete the task?
scale:
  kind: binary
  levels:
    - {value: 1, label: pass, anchor: The task is done.}
    - {value: 0, label: fail, anchor: The task is not done.}
criteria:
  - {id: policy, description: The agent followed the policy.}
"""


def test_keyboard_shortcuts_binary_and_ordinal(store_url: str, store: Store, tmp_path: Any) -> None:
    at = run_page("label", store_url)
    keys = {b.label: b.proto.shortcut for b in at.button}
    assert [keys[f"{v} · {n}"] for v, n in [(1, "unreasonable"), (5, "ideal")]] == ["1", "5"]
    assert (keys["Next"], keys["Skip"], keys["Back"]) == ("n", "s", "b")  # stored normalised
    rubric = tmp_path / "task_success.yaml"
    rubric.write_text(BINARY)
    at = AppTest.from_string(PAGES["label"], default_timeout=60)
    at.session_state[S.CONFIG] = AppConfig(db_url=store_url, dataset=DATASET, rubric=str(rubric))
    sign_in_as(at, store_url, "bin")
    at.run()
    keys = {b.label: b.proto.shortcut for b in at.button}
    assert (keys["1 · pass"], keys["0 · fail"]) == ("p", "f")
    tid = at.session_state[S.CURRENT]
    # the criteria are drawn once switched on; a value given before the verdict is saved with it
    assert not at.radio
    at.toggle(key=S.SHOW_CRITERIA).set_value(True).run()
    at.radio(key=S.widget_key("crit", tid, "policy")).set_value(0).run()
    at.button(key="value-0").click().run()
    (row,) = my_rows(store, "bin")
    assert (row["rubric_id"], row["value"], row["criteria"]) == (
        "task_success",
        0.0,
        '{"policy": 0}',
    )


def test_sign_out_forgets_the_annotator(store_url: str) -> None:
    at = run_page("label", store_url)
    assert at.session_state[S.CURRENT] is not None
    at.button(key="sign-out").click().run()
    assert at.session_state[S.ANNOTATOR] is None and at.session_state[S.CURRENT] is None
    assert session_of(at) is None
    assert any("Sign in first" in w.value for w in at.warning)
    events = [(e["name"], e["event"]) for e in Store(store_url).sign_in_log()]
    assert events[0] == ("ann", "signed out")


def _leading_json(text: str) -> Any:
    try:
        return json.JSONDecoder().raw_decode(text)[0]
    except ValueError:
        return None


@pytest.mark.shared
def test_real_tau_bench_trajectories_render(tau_bench_file: Any, db_url: str) -> None:
    from trajudge.trajectories import from_tau_bench

    trajectories, specs = from_tau_bench(tau_bench_file)
    store = Store(db_url)
    store.import_dataset("tau", trajectories[:20], specs)
    at = AppTest.from_string(PAGES["label"], default_timeout=60)
    at.session_state[S.CONFIG] = AppConfig(db_url=db_url, dataset="tau", overlap=1.0)
    sign_in_as(at, db_url, "ann")
    at.run()
    assert not at.exception
    tid = at.session_state[S.CURRENT]
    shown = next(t for t in trajectories if t.id == tid)
    assert shown.input in plain_texts(at)
    # every step: one block, its header line, then its arguments as JSON
    steps = [str(c.value) for c in at.code if str(c.value).startswith("Step ")]
    assert len(steps) == len(shown.steps)
    for i, (block, step) in enumerate(zip(steps, shown.steps, strict=True), start=1):
        header, _, rest = block.partition("\n")
        assert header.startswith(f"Step {i}: {step.tool} · "), header
        assert _leading_json(rest) == step.args, i
    at.button(key="value-3").click().run()
    assert store.labels_frame("tau")["trajectory_id"].tolist() == [tid]


def test_label_page_shows_every_user_turn_as_inert_text(store_url: str, store: Store) -> None:
    from trajudge.trajectories import Message, Step, Trajectory

    conv = Trajectory(
        id="conv",
        task_id="conv",
        input=f"Cancel ABC123 {SCRIPT}",
        messages=[
            Message(role="user", content=f"Cancel ABC123 {SCRIPT}"),
            Message(role="assistant", content="Shall I cancel it? Please answer yes or no."),
            Message(role="user", content=f"yes {IMG}"),
            Message(role="assistant", steps=[0]),
            Message(role="tool", step=0),
            Message(role="assistant", content="Cancelled."),
        ],
        steps=[Step(tool="cancel_reservation", args={"id": "ABC123"}, output=LINK)],
    )
    store.import_dataset(DATASET, [conv])
    at = run_page("label", store_url, **{S.CURRENT: "conv", S.CURSOR: 0})
    assert not at.exception
    shown = plain_texts(at)
    for text in (f"Cancel ABC123 {SCRIPT}", "Shall I cancel it?", f"yes {IMG}", LINK):
        assert text in shown
    assert shown.index("Shall I cancel it?") < shown.index(f"yes {IMG}") < shown.index(LINK)
    for text in rich_texts(at):
        for bad in ("<script", "onerror", "javascript:", "<img"):
            assert bad not in text, text


def test_criteria_are_kept_when_switched_off(store_url: str, store: Store) -> None:
    """Criteria are drawn only while switched on; a label saved while they are off keeps the
    criteria stored with the item (their widgets are gone, not their values)."""
    at = run_page("label", store_url)
    tid = at.session_state[S.CURRENT]
    at.toggle(key=S.SHOW_CRITERIA).set_value(True).run()
    at.radio(key=S.widget_key("crit", tid, "arguments")).set_value(2).run()
    at.button(key="value-4").click().run()
    (row,) = my_rows(store)
    assert (row["value"], row["criteria"]) == (4.0, '{"arguments": 2}')
    at.toggle(key=S.SHOW_CRITERIA).set_value(False).run()
    assert not at.radio
    at.button(key="value-5").click().run()
    at.checkbox(key=S.widget_key("unsure", tid)).check().run()
    (row,) = my_rows(store)
    assert (row["value"], row["criteria"], row["unsure"]) == (5.0, '{"arguments": 2}', True)
    # shown again, the stored values are in the widgets, and clearing one is saved
    at.toggle(key=S.SHOW_CRITERIA).set_value(True).run()
    assert at.radio(key=S.widget_key("crit", tid, "arguments")).value == 2
    at.radio(key=S.widget_key("crit", tid, "arguments")).set_value(None).run()
    (row,) = my_rows(store)
    assert (row["value"], row["criteria"]) == (5.0, None)


def test_a_long_system_message_is_collapsed_and_a_failed_call_is_marked(
    store_url: str, store: Store
) -> None:
    from trajudge.trajectories import read_trajectories

    # τ-bench task 0, trial 0: the 6,156-character airline policy, and a failed booking call
    data = read_trajectories(Path(__file__).parents[2] / "examples/tau_airline/gpt-4o-airline.json")
    tau = next(t for t in data.trajectories if t.task_id == "0" and t.trial == 0)
    (policy,) = [m.content or "" for m in tau.messages if m.role == "system"]
    assert len(policy) > 6000 and any(not s.ok for s in tau.steps)
    store.import_dataset(DATASET, [tau])
    at = run_page("label", store_url, **{S.CURRENT: tau.id, S.CURSOR: 0})
    assert not at.exception
    first_lines = "\n".join(policy.splitlines()[:3])[:400]
    blocks = [str(c.value) for c in at.code]
    # the page shows the policy's first lines; the whole text only inside the expander
    (shown,) = [b for b in blocks if b.startswith("system:")]
    assert shown.startswith(f"system:\n{first_lines}") and len(shown) < 600
    (whole,) = [e for e in at.expander if str(e.label).startswith("Whole system message")]
    assert str(whole.label) == f"Whole system message ({len(policy):,} characters)"
    assert [str(c.value) for c in whole.code] == [policy.rstrip("\n")]  # st.code trims it
    n_failed = sum(not s.ok for s in tau.steps)
    marks = [m for m in at.markdown if "failed call" in str(m.value)]
    assert len(marks) == n_failed
    assert sum("✗ FAILED" in b for b in blocks) == n_failed
