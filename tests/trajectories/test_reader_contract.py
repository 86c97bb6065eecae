"""The reader contract: every reader proves it lost nothing.

Each reader has a census (``trajudge.trajectories._census``): a walk over the raw source,
written apart from the reader, that counts the tool calls, failed calls, user messages and
tokens the source holds. Reading a file compares it with what was built, and a difference
refuses the file unless the caller accepts that loss by name. Here every reader is run on the
files its real tool wrote (``tests/fixtures``), the census is checked against what the
generator recorded doing (``manifest.json``: an independent count), and a reader made to drop
a call is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.core import InputError
from trajudge.trajectories import read_trajectories
from trajudge.trajectories._census import LOSSES, Held
from trajudge.trajectories._read_functions import Source
from trajudge.trajectories._readers import BY_NAME, READERS, Reader

FIXTURES = Path(__file__).parents[1] / "fixtures"
ROOT = Path(__file__).parents[2]


def _manifest(folder: str) -> dict[str, Any]:
    return json.loads((FIXTURES / folder / "manifest.json").read_text(encoding="utf-8"))


def _scenario(expected: dict[str, Any]) -> Held:
    """What the generator's manifest says one scripted run did."""
    steps = expected["steps"]
    return Held(
        tool_calls=len(steps),
        failed_calls=sum(1 for s in steps if s.get("ok") is False),
        user_messages=len(expected["user_turns"]),
        prompt_tokens=expected.get("prompt_tokens"),
        completion_tokens=expected.get("completion_tokens"),
    )


def _sum(runs: list[Held]) -> Held:
    out = Held()
    for r in runs:
        out.tool_calls += r.tool_calls
        out.failed_calls += r.failed_calls
        out.user_messages += r.user_messages
        out.add_tokens(r.prompt_tokens, r.completion_tokens)
    return out


_TOKENS = {"prompt_tokens", "completion_tokens"}
# the manifests of these folders have shapes of their own, read below
_OWN_SHAPE = {"inspect", "openhands", "swe_agent", "tau2", "claude_code"}


def _cases() -> Iterator[tuple[str, Path, Held | None]]:
    """(format, file, what the generator did or None where only census = built is checked)."""
    # every folder whose manifest records one scripted run per file in the common shape
    for manifest in sorted(FIXTURES.glob("*/manifest.json")):
        if manifest.parent.name in _OWN_SHAPE:
            continue
        for name, entry in _manifest(manifest.parent.name).items():
            expected = entry.get("expected", {})
            if "format" in entry and "steps" in expected and "user_turns" in expected:
                yield entry["format"], manifest.parent / name, _scenario(expected)
            elif "format" in entry and "steps" in expected and "user_turns_contain" in expected:
                # CrewAI wraps each task in a prompt of its own: one user turn per task output
                turns = {"user_turns": entry["task_outputs"]}
                yield entry["format"], manifest.parent / name, _scenario({**expected, **turns})
    for name, entry in _manifest("inspect").items():
        epochs = entry["expected"]["epochs"]
        turns = entry["expected"].get("user_turns")
        runs = [_scenario({"user_turns": turns or [None], **e}) for e in epochs]
        yield "inspect", FIXTURES / "inspect" / name, None if turns is None else _sum(runs)
    oh = _manifest("openhands")["events"]["expected"]
    yield "openhands", FIXTURES / "openhands" / "events", _scenario(oh)
    for f in sorted((FIXTURES / "openhands" / "public").glob("*.json")):
        yield "openhands", f, None
    swe = _manifest("swe_agent")["demo__calc-1.traj"]["expected"]
    yield (
        "swe-agent",
        FIXTURES / "swe_agent" / "demo__calc-1.traj",
        # the file's token counts are SWE-agent's own model stats, which the manifest lacks
        Held(tool_calls=len(swe["steps"]), user_messages=1, unknown=_TOKENS),
    )
    yield "swe-agent", FIXTURES / "swe_agent" / "public" / "function_calling_simple.traj", None
    tau2 = _manifest("tau2")["results.json"]
    plans = tau2["plans"]
    played = [plans[plan] for _, plan in tau2["played"]]
    yield (
        "tau2-bench",
        FIXTURES / "tau2" / "results.json",
        _sum(
            [
                Held(
                    tool_calls=len(p["steps"]),
                    failed_calls=len(p["failed_steps"]),
                    user_messages=len(p["user_turns"]),
                    prompt_tokens=p["agent_prompt_tokens"],
                    completion_tokens=p["agent_completion_tokens"],
                )
                for p in played
            ]
        ),
    )
    yield "tau-bench", ROOT / "examples" / "tau_airline" / "gpt-4o-airline.json", None
    for version in ("v2", "v2-background"):
        cc = _manifest(f"claude_code/{version}")
        main, sub = cc["main"], cc["subagent"]
        for name, run, turns in (
            (cc["files"][0], main, cc["user_turns"]),
            (cc["files"][1], sub, [sub["prompt"]]),
        ):
            tokens = run["tokens"]
            prompt = sum(
                tokens[k]
                for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            )
            yield (
                "claude-code",
                FIXTURES / "claude_code" / version / name,
                _scenario(
                    {
                        "steps": run["calls"],
                        "user_turns": turns,
                        "prompt_tokens": prompt,
                        "completion_tokens": tokens["output_tokens"],
                    }
                ),
            )


CASES = list(_cases())


def test_every_reader_is_checked_on_a_file_its_tool_wrote(tmp_path: Path) -> None:
    # a reader added without a real fixture here fails this test
    covered = {fmt for fmt, _, _ in CASES} | {"jsonl", "parquet"}
    assert covered == {r.name for r in READERS}
    assert all(r.census or r.census_file for r in READERS)


@pytest.mark.parametrize(
    ("fmt", "path", "expected"),
    CASES,
    ids=[f"{fmt}:{p.parent.name}/{p.name}" for fmt, p, _ in CASES],
)
def test_the_census_agrees_with_the_generator_and_the_reader(
    fmt: str, path: Path, expected: Held | None
) -> None:
    result = read_trajectories(path)
    assert result.fmt == fmt
    assert result.losses == []
    held = result.held
    assert held is not None
    if expected is None:
        return
    for name in LOSSES:
        if name in held.unknown or name in expected.unknown:
            continue
        want, got = getattr(expected, name), getattr(held, name)
        if name in held.floor:
            assert (got or 0) <= (want or 0), name  # the census's floor holds for the truth
        else:
            assert got == want, name


def test_native_files_count_what_they_hold(tmp_path: Path) -> None:
    from trajudge.trajectories import write_jsonl, write_parquet

    runs = read_trajectories(FIXTURES / "traces" / "litellm_chat.json").trajectories
    for path, write in (
        (tmp_path / "a.jsonl", write_jsonl),
        (tmp_path / "a.parquet", write_parquet),
    ):
        write(path, runs)
        result = read_trajectories(path)
        assert result.held == Held(3, 1, 2, 970, 112)  # the scenario: 3 calls, 1 failed, 2 turns


def _lossy(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make ``name``'s reader drop the last step of every trajectory it reads."""
    reader = BY_NAME[name]

    def read(src: Source) -> Iterator[tuple[str, Any]]:
        for label, t in reader.read(src):
            if t.steps:
                keep = len(t.steps) - 1
                messages = [
                    m.model_copy(update={"steps": [s for s in m.steps if s < keep]})
                    for m in t.messages
                    if m.step != keep
                ]
                t = t.model_copy(update={"steps": t.steps[:keep], "messages": messages})
            yield label, t

    lossy = Reader(**{**reader.__dict__, "read": read})
    monkeypatch.setitem(BY_NAME, name, lossy)
    monkeypatch.setattr(
        "trajudge.trajectories._readers.READERS",
        tuple(lossy if r.name == name else r for r in READERS),
    )
    monkeypatch.setattr(
        "trajudge.trajectories.reading._read.READERS",
        tuple(lossy if r.name == name else r for r in READERS),
    )


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("openai", FIXTURES / "traces" / "litellm_chat.json"),
        ("otel", FIXTURES / "traces" / "openinference_smolagents_parallel.jsonl"),
        ("tau2-bench", FIXTURES / "tau2" / "results.json"),
        ("openhands", FIXTURES / "openhands" / "events"),
    ],
)
def test_a_reader_that_drops_a_call_is_refused(
    monkeypatch: pytest.MonkeyPatch, name: str, path: Path
) -> None:
    _lossy(monkeypatch, name)
    with pytest.raises(InputError) as err:
        read_trajectories(path)
    assert err.value.field == "tool_calls"
    assert "--accept-loss tool_calls" in str(err.value)
    result = read_trajectories(path, accept_loss=["tool_calls", "failed_calls"])
    assert [loss.name for loss in result.losses][:1] == ["tool_calls"]


def test_import_refuses_a_loss_and_stores_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _lossy(monkeypatch, "openai")
    db = f"sqlite:///{tmp_path / 't.db'}"
    src = FIXTURES / "traces" / "litellm_chat.json"
    runner = CliRunner()
    refused = runner.invoke(app, ["import", str(src), "--task-id", "t", "--db", db])
    assert refused.exit_code == 2, refused.output
    line = refused.output.strip()
    assert "\n" not in line
    assert "tool_calls" in line and "the source holds 3 tool calls, 2 were read" in line
    listed = runner.invoke(app, ["reliability", "litellm_chat", "--db", db])
    assert listed.exit_code == 2  # no such dataset: nothing was stored
    taken = runner.invoke(
        app, ["import", str(src), "--task-id", "t", "--db", db, "--accept-loss", "tool_calls"]
    )
    assert taken.exit_code == 0, taken.output
    assert "accepted loss: the source holds 3 tool calls, 2 were read" in taken.output


def test_an_unknown_loss_name_is_refused(tmp_path: Path) -> None:
    out = CliRunner().invoke(
        app,
        [
            "import",
            str(FIXTURES / "traces" / "litellm_chat.json"),
            "--accept-loss",
            "steps",
            "--db",
            f"sqlite:///{tmp_path / 't.db'}",
        ],
    )
    assert out.exit_code == 2
    assert "unknown loss 'steps'" in out.output


def test_a_census_that_breaks_refuses_instead_of_passing(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(label: str, value: Any, held: Held) -> None:
        raise KeyError("x")

    monkeypatch.setattr("trajudge.trajectories.readers.chat._census_chat.census_openai", broken)
    from trajudge.trajectories._readers import resolve

    resolve.cache_clear()
    try:
        with pytest.raises(InputError, match="cannot count what the source holds: record 0"):
            read_trajectories(FIXTURES / "traces" / "litellm_chat.json")
    finally:
        resolve.cache_clear()


def test_a_run_config_accepts_only_known_losses(tmp_path: Path) -> None:
    from trajudge.config import load_config

    good = tmp_path / "good.yaml"
    good.write_text("dataset:\n  path: runs.jsonl\n  accept_loss: [tool_calls]\n", encoding="utf-8")
    assert load_config(good).dataset.accept_loss == ["tool_calls"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("dataset:\n  path: runs.jsonl\n  accept_loss: [steps]\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_config(bad)
    assert "dataset.accept_loss" in str(err.value) and "unknown loss 'steps'" in str(err.value)
