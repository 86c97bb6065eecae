"""One contract for every provider's batch results: each line is its own result.

The same faults, over OpenAI, Azure OpenAI, Anthropic, Vertex AI and Bedrock (each provider's
fake writes its own result format, and ``mangle`` breaks it as a provider could): a line that
is not JSON, a JSON value that is not an object, an answer whose body is not an object, a
request answered twice with different answers, a line that names no request. Each time the
valid answers are stored, the broken line's request alone is stored as an error (never a
pass or a fail), and the next run submits that one request again and completes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from fake_llm import FakeLLM
from test_batch import _store
from test_provider_batch import (
    ANTHROPIC_KEY_ENV,
    AZURE_KEY_ENV,
    _anthropic_judge,
    _azure_judge,
    _engine,
)
from test_provider_batch_bedrock import _bedrock_judge, aws  # noqa: F401  (a fixture)
from test_provider_batch_vertex import _key_pem, _vertex_judge, vertex  # noqa: F401  (fixtures)

from trajudge.judges import Judge, score_dataset
from trajudge.judges.engines.batch._vertex import LABEL

pytestmark = pytest.mark.timeout(300)
Record = dict[str, Any]


@dataclass(frozen=True)
class Provider:
    name: str
    judge: Callable[..., Judge]
    fixture: str | None  # the provider's cloud on the fake (credentials, endpoints)
    get_id: Callable[[Record], str]
    set_id: Callable[[Record, str], None]
    break_body: Callable[[Record], None]  # the answer of a 200 made a non-object
    requests: Callable[[FakeLLM], int]  # requests the provider received in batches, so far


def _set(path: tuple[str, ...]) -> Callable[[Record, Any], None]:
    def put(record: Record, value: Any) -> None:
        for key in path[:-1]:
            record = record[key]
        record[path[-1]] = value

    return put


def _get(path: tuple[str, ...]) -> Callable[[Record], Any]:
    def get(record: Record) -> Any:
        for key in path:
            record = record[key]
        return record

    return get


PROVIDERS = [
    Provider(
        "openai",
        lambda fake, name, rubric: _local_openai(fake, name, rubric),
        None,
        _get(("custom_id",)),
        _set(("custom_id",)),
        lambda r: _set(("response", "body"))(r, "not an object"),
        lambda fake: len(fake.batches.input_bodies()),
    ),
    Provider(
        "azure",
        _azure_judge,
        None,
        _get(("custom_id",)),
        _set(("custom_id",)),
        lambda r: _set(("response", "body"))(r, ["not", "an", "object"]),
        lambda fake: len(fake.batches.input_bodies()),
    ),
    Provider(
        "anthropic",
        _anthropic_judge,
        None,
        _get(("custom_id",)),
        _set(("custom_id",)),
        lambda r: _set(("result", "message"))(r, "not an object"),
        lambda fake: len(fake.anthropic.input_params()),
    ),
    Provider(
        "vertex",
        _vertex_judge,
        "vertex",
        _get(("request", "labels", LABEL)),
        _set(("request", "labels", LABEL)),
        lambda r: _set(("response",))(r, "not an object"),
        lambda fake: len(fake.vertex.input_rows()),
    ),
    Provider(
        "bedrock",
        _bedrock_judge,
        "aws",
        _get(("recordId",)),
        _set(("recordId",)),
        lambda r: _set(("modelOutput",))(r, 42),
        lambda fake: len(fake.bedrock.inputs()),
    ),
]


def _local_openai(fake: FakeLLM, name: str, rubric: str) -> Judge:
    from test_batch import _judge

    return _judge(fake, name, rubric)


def _first(edit: Callable[[Record], None]) -> Callable[[list[str]], list[str]]:
    def mangle(lines: list[str]) -> list[str]:
        record = json.loads(lines[0])
        edit(record)
        return [json.dumps(record), *lines[1:]]

    return mangle


def _cases(p: Provider) -> dict[str, tuple[Callable[[list[str]], list[str]], str | None]]:
    """Each fault: how it breaks the result lines (the first line's request is the one
    hit), and what the error of that request says (None: it is no fault)."""

    def duplicate(lines: list[str]) -> list[str]:
        other = json.loads(lines[1])  # another request's answer, under the first's id
        p.set_id(other, p.get_id(json.loads(lines[0])))
        return [*lines, json.dumps(other)]

    return {
        "not JSON": (lambda lines: [lines[0][:-3], *lines[1:]], "is not JSON"),  # cut short
        "not an object": (
            lambda lines: [json.dumps([json.loads(lines[0])]), *lines[1:]],
            "is a JSON array, not an object",
        ),
        "body not an object": (_first(p.break_body), ""),
        "answered twice": (duplicate, "answered twice with different answers"),
        "names no request": (
            lambda lines: ["{this line names no request", *lines[1:]],
            "could not be matched to a request",
        ),
        "answered twice alike": (lambda lines: [*lines, lines[0]], None),  # one answer
    }


FAULTS = [
    "not JSON",
    "not an object",
    "body not an object",
    "answered twice",
    "names no request",
    "answered twice alike",
]


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("provider", PROVIDERS, ids=[p.name for p in PROVIDERS])
def test_a_bad_result_line_is_an_error_for_its_request_alone(
    provider: Provider,
    fault: str,
    fake_llm: FakeLLM,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    if provider.fixture is not None:
        request.getfixturevalue(provider.fixture)
    monkeypatch.setenv(AZURE_KEY_ENV, "azure-test-key")
    monkeypatch.setenv(ANTHROPIC_KEY_ENV, "anthropic-test-key")
    store = _store(f"sqlite:///{tmp_path / 's.db'}")
    judge = provider.judge(fake_llm, "point", "trajectory_reasonableness")
    mangle, says = _cases(provider)[fault]
    for fake in (fake_llm.batches, fake_llm.anthropic, fake_llm.vertex, fake_llm.bedrock):
        fake.mangle = mangle

    # every answer its own (a duplicate line then contradicts the first)
    fake_llm.decide = lambda user, verdict: {
        **verdict,
        "reasoning": hashlib.sha256(user.encode()).hexdigest()[:12],
    }

    first = score_dataset(store, "ds", [judge], engine=_engine(store))
    if says is None:
        assert (first.planned, first.judged, first.errors) == (7, 7, 0), first
        return
    # 8 trajectories, one stopped by its gate: 7 requests, the first line's request broken
    assert (first.planned, first.judged, first.errors) == (7, 6, 1), first
    frame = store.judgments_frame("ds")
    failed = frame[frame["error"].notna()]
    assert len(failed) == 1 and failed["score"].isna().all() and failed["verdict"].isna().all()
    (error,) = failed["error"]
    assert says in error and "\n" not in error, error
    assert frame[frame["error"].isna()]["verdict"].notna().sum() == 6
    sent = provider.requests(fake_llm)
    assert sent == 7

    for fake in (fake_llm.batches, fake_llm.anthropic, fake_llm.vertex, fake_llm.bedrock):
        fake.mangle = None
    second = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (second.resumed, second.judged, second.errors) == (6, 1, 0), second
    assert provider.requests(fake_llm) == sent + 1  # only the error was submitted again
    frame = store.judgments_frame("ds")
    assert len(frame) == 7 and frame["error"].isna().all()
    store.close()


def test_lines_split_at_newlines_only_and_bad_bytes_are_charged_to_their_request() -> None:
    """A JSON text may hold U+2028 or a form feed raw (str.splitlines would cut there); a line
    that is not UTF-8 is an error for the request it names; the rest are read."""
    from trajudge.judges.engines.batch._lines import ResultLines

    lines = ResultLines("b1", "custom_id", lambda r: r.get("custom_id"))
    answer = {"custom_id": "r0", "text": "one\u2028two\x0cthree\u0085four"}
    data = (
        json.dumps(answer, ensure_ascii=False).encode()
        + b'\n{"custom_id": "r1", "text": "\xff\xfe"}\r\n\n'
        + b'{"custom_id": "r2"}'  # the last line without its newline
    )
    lines.read("output file f", data)
    assert lines.records["r0"] == answer and lines.records["r2"] == {"custom_id": "r2"}
    assert "r1" not in lines.records
    assert lines.broken["r1"].startswith("its result (output file f line 2) is not UTF-8")
    assert lines.stray == []
