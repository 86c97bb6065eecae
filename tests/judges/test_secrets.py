"""API keys never reach the disk, the logs or the screen, even when a provider quotes them.

The end-to-end test runs `trajudge judge` against a real HTTP server on loopback that answers
401 quoting the credentials it received (as some gateways do), then reads every file the run
wrote, every log record and the command's output.
"""

from __future__ import annotations

import logging
import secrets
from pathlib import Path

import pytest
import typer.testing
from fake_llm import FakeLLM

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.core import InputError
from trajudge.judges import Judge, JudgeSpec, ResponseCache
from trajudge.store import Store, install_log_redaction, redact, register_secret
from trajudge.trajectories import Step, Trajectory

pytestmark = pytest.mark.timeout(300)
runner = typer.testing.CliRunner()


def _traj(i: int) -> Trajectory:
    return Trajectory(
        id=f"t{i}", task_id="1", trial=i, input="book a flight", steps=[Step(tool="search")]
    )


def _files_text(folder: Path) -> str:
    """Every byte under ``folder`` (SQLite files, WAL and journal included), as text."""
    return "".join(
        p.read_bytes().decode("latin-1") for p in sorted(folder.rglob("*")) if p.is_file()
    )


def test_a_key_quoted_in_a_401_is_in_no_file_log_or_output(
    fake_llm: FakeLLM,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = "sk-live-" + secrets.token_hex(20)
    # a header value that matches no key pattern: only the known-value redaction catches it
    gateway = "gw" + secrets.token_hex(12)
    monkeypatch.setenv("TRAJUDGE_TEST_SECRET_KEY", key)
    monkeypatch.setenv("TRAJUDGE_TEST_GATEWAY", gateway)
    work = tmp_path / "run"
    work.mkdir()
    db = f"sqlite:///{work / 'store.db'}"
    Store(db).import_dataset("ds", [_traj(0), _traj(1)])
    config = tmp_path / "trajudge.yaml"
    config.write_text(
        f"db: {db}\n"
        f"cache: {work / 'cache.db'}\n"
        "dataset: {name: ds}\n"
        "judges:\n"
        "  - name: gw\n"
        "    model: openai/fake\n"
        f"    api_base: {fake_llm.api_base}\n"
        "    api_key_env: TRAJUDGE_TEST_SECRET_KEY\n"
        "    extra_headers: {api-key: TRAJUDGE_TEST_GATEWAY}\n"
        "    max_retries: 1\n"
        "    retry_backoff_s: 0.01\n"
    )
    fake_llm.default = "401-echo"
    caplog.set_level(logging.DEBUG)
    result = runner.invoke(app, ["judge", "--config", str(config)])
    assert result.exit_code == 0, result.output
    # the server did receive both secrets, so a leak was possible
    assert fake_llm.headers and fake_llm.headers[0]["Authorization"] == f"Bearer {key}"
    assert fake_llm.headers[0]["api-key"] == gateway
    store = Store(db)
    errors = store.judgments_frame("ds")["error"].tolist()
    store.close()
    assert len(errors) == 2 and all(isinstance(e, str) for e in errors)
    for error in errors:
        assert "Incorrect API key provided: [redacted $TRAJUDGE_TEST_SECRET_KEY]" in error
        assert "api-key header: [redacted $TRAJUDGE_TEST_GATEWAY]" in error
    written = _files_text(work)
    logged = caplog.text + "".join(r.getMessage() for r in caplog.records)
    for secret in (key, gateway, key[:20], key[-20:]):
        assert secret not in written
        assert secret not in logged
        assert secret not in result.output


def test_a_key_nobody_registered_is_caught_by_its_pattern_on_the_store_write(
    db_url: str,
) -> None:
    store = Store(db_url)
    store.import_dataset("ds", [_traj(0)])
    other = "sk-proj-" + secrets.token_hex(24)  # a key from another configuration
    bearer = secrets.token_urlsafe(24)
    store.add_judgment(
        "ds",
        {
            "trajectory_id": "t0", "judge": "j", "rubric_id": "r", "rubric_version": "v",
            "model": "m", "mode": "pointwise", "order": "ab", "sample": 0,
            "error": f"AuthenticationError: key {other} rejected; sent Authorization: Bearer "
            f"{bearer}",
        },
    )  # fmt: skip
    [error] = store.judgments_frame("ds")["error"].tolist()
    assert other not in error and bearer not in error
    assert error == "AuthenticationError: key [redacted] rejected; sent Authorization: [redacted]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-ant-api03-" + "a" * 30, "key [redacted]"),
        ("masked sk-abc1****************wxyz", "masked [redacted]"),
        ("Authorization: Bearer abc.def-ghi_jkl", "Authorization: [redacted]"),
        ('{"x-api-key": "0123456789abcdef"}', '{"x-api-key": "[redacted]"}'),
        ("https://host/v1?api_key=0123456789abcdef&x=1", "https://host/v1?api_key=[redacted]&x=1"),
        ("google AIza" + "B" * 35, "google [redacted]"),
        ("aws AKIAIOSFODNN7EXAMPLE", "aws [redacted]"),
        ("hf hf_" + "x" * 30, "hf [redacted]"),
        # ordinary text is left alone
        ("task-0123456789abcdefgh risk-assessment", "task-0123456789abcdefgh risk-assessment"),
        ("Error code: 401 - Incorrect API key", "Error code: 401 - Incorrect API key"),
        ("the agent asked for the api key politely", "the agent asked for the api key politely"),
    ],
)  # fmt: skip
def test_key_patterns(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_every_log_record_in_the_process_is_redacted(caplog: pytest.LogCaptureFixture) -> None:
    value = "zz" + secrets.token_hex(10)
    register_secret(value, "TRAJUDGE_TEST_LOG_KEY")
    install_log_redaction()
    caplog.set_level(logging.DEBUG)
    log = logging.getLogger("some.library.deep.down")  # not a logger trajudge knows
    log.debug("sending key=%s", value)
    try:
        raise RuntimeError(f"401 for {value}")
    except RuntimeError:
        log.exception("call failed")
    assert value not in caplog.text
    assert "sending key=[redacted $TRAJUDGE_TEST_LOG_KEY]" in caplog.text
    assert "RuntimeError: 401 for [redacted $TRAJUDGE_TEST_LOG_KEY]" in caplog.text


def test_short_values_are_not_treated_as_secrets() -> None:
    register_secret("1", "TRAJUDGE_TEST_TINY")  # would garble "401" everywhere
    assert redact("HTTP 401") == "HTTP 401"


def test_header_values_come_from_the_environment_only(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="not an environment variable name"):
        JudgeSpec(name="j", model="openai/x", extra_headers={"api-key": "sk-pasted-key-value"})
    with pytest.raises(ValueError, match="not an HTTP header name"):
        JudgeSpec(name="j", model="openai/x", extra_headers={"bad header": "ENV"})
    monkeypatch.delenv("TRAJUDGE_TEST_UNSET", raising=False)
    spec = JudgeSpec(name="j", model="openai/x", extra_headers={"api-key": "TRAJUDGE_TEST_UNSET"})
    with pytest.raises(InputError, match=r"extra_headers.api-key.*TRAJUDGE_TEST_UNSET is not set"):
        Judge(spec)


def test_header_names_are_in_the_cache_key_and_values_are_not(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ResponseCache(tmp_path / "cache.db")
    base = {"name": "j", "model": "openai/fake", "api_base": fake_llm.api_base}
    monkeypatch.setenv("TRAJUDGE_TEST_HDR", "value-one-1234")
    spec = JudgeSpec.model_validate({**base, "extra_headers": {"api-key": "TRAJUDGE_TEST_HDR"}})
    first = Judge(spec, cache=cache).judge(_traj(0)).judgments[0]
    assert not first.cache_hit and fake_llm.calls == 1
    monkeypatch.setenv("TRAJUDGE_TEST_HDR", "value-two-5678")  # a rotated key: same answer
    assert Judge(spec, cache=cache).judge(_traj(0)).judgments[0].cache_hit
    Judge(JudgeSpec.model_validate(base), cache=cache).judge(_traj(0))  # no header: new request
    assert fake_llm.calls == 2
    assert "value-one-1234" not in _files_text(tmp_path)


def _redact_every_pattern(text: str) -> str:
    """The reference: every pattern run on every text (what redact did before it skipped the
    patterns whose literals a text does not hold)."""
    from trajudge.store._redact import _PATTERNS

    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text


def test_skipping_patterns_by_their_literals_changes_no_redaction() -> None:
    import random

    pieces = [
        "sk-ant-api03-" + "a" * 30,
        "sk-abc1****************wxyz",
        "Authorization: Bearer abc.def-ghi_jkl",
        "AUTHORIZATION = basic QWxhZGRpbjpvcGVu",
        '{"x-api-key": "0123456789abcdef"}',
        "API-KEY: 'zyxwvutsrq'",
        "access_token=abcdefghijkl",
        "Client_Secret: s3cr3tvalue99",
        "password = hunter2hunter2",
        "api_key=0123456789abcdef",
        "bearer   abcdefghijklmnop",
        "AIza" + "B" * 35,
        "AKIAIOSFODNN7EXAMPLE",
        "ASIAIOSFODNN7EXAMPLE",
        "ghp_" + "x" * 30,
        "github_pat_" + "y" * 30,
        "glpat-" + "z" * 20,
        "gsk_" + "q" * 20,
        "pplx-" + "r" * 20,
        "xai-" + "s" * 20,
        "r8_" + "t" * 20,
        "hf_" + "u" * 30,
        # non-ASCII letters that (?i) matches to ASCII ones: never skipped
        "apı_key=0123456789abcdef",
        "ACCESſ_TOKEN=abcdefghijkl",
        "aPİ-key: abcdefghijkl",
        # ordinary text
        "the agent asked for the api key politely",
        "Error code: 401 - Incorrect API key",
        "task-0123456789abcdefgh risk-assessment",
        '{"reasoning": "fake reasoning", "score": 5}',
        "Τhe flight was booked — step [3] refunded €20.",
        "",
    ]
    rng = random.Random(7)
    texts = list(pieces)
    for _ in range(300):
        texts.append(" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))))
    for text in texts:
        assert redact(text) == _redact_every_pattern(text), text
