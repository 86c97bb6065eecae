"""Configuration hand-over, annotator names and the server command."""

from __future__ import annotations

import pytest

from trajudge.core import InputError
from trajudge.labeling_app import (
    AppConfig,
    is_loopback,
    streamlit_command,
    validate_annotator,
)


@pytest.mark.parametrize("name", ["ann", "Ann B.", "a_b-c.d 9", "x" * 64, "  padded  "])
def test_valid_names(name: str) -> None:
    assert validate_annotator(name) == name.strip()


@pytest.mark.parametrize(
    "name", ["", "   ", "x" * 65, "<script>", "a/b", "ann\nbob", "émile", "a;b", "[x](y)"]
)
def test_invalid_names(name: str) -> None:
    with pytest.raises(InputError, match="1-64 letters"):
        validate_annotator(name)


def test_config_round_trips_through_the_environment() -> None:
    cfg = AppConfig(
        db_url="sqlite:////tmp/x.db",
        dataset="d",
        rubric="r",
        show_judges=True,
        strategy="stratified",
        overlap=0.35,
    )
    assert AppConfig.from_env(cfg.to_env()) == cfg
    assert AppConfig.from_env({}).strategy == "random"
    with pytest.raises(InputError):
        AppConfig(db_url="x", overlap=1.5)
    with pytest.raises(InputError):
        AppConfig.from_env({"TRAJUDGE_LABEL_STRATEGY": "best"})
    pairs = AppConfig(db_url="x", rubric="trajectory_preference", max_pairs=3)
    assert AppConfig.from_env(pairs.to_env()) == pairs
    assert AppConfig.from_env({}).max_pairs is None
    with pytest.raises(InputError, match="max-pairs"):
        AppConfig(db_url="x", max_pairs=0)
    with pytest.raises(InputError, match="whole number"):
        AppConfig.from_env({"TRAJUDGE_LABEL_MAX_PAIRS": "two"})
    # the stop rule of --strategy active travels as [statistic, target, level]
    rule = AppConfig(db_url="x", stop_rule=("tnr", 0.7, 0.9))
    assert AppConfig.from_env(rule.to_env()).stop_rule == ("tnr", 0.7, 0.9)
    assert AppConfig.from_env({}).stop_rule == ("kappa", 0.6, 0.95)
    with pytest.raises(InputError, match=r"stop-when.*not one of"):
        AppConfig(db_url="x", stop_rule=("ac1", 0.7, 0.9))
    with pytest.raises(InputError, match=r"TRAJUDGE_LABEL_STOP_WHEN.*\[statistic, target, level\]"):
        AppConfig.from_env({"TRAJUDGE_LABEL_STOP_WHEN": "kappa>=0.6"})
    with pytest.raises(InputError, match="level must be in"):
        AppConfig.from_env({"TRAJUDGE_LABEL_STOP_WHEN": '["kappa", 0.6, 1.5]'})


def test_streamlit_command_is_headless_and_private() -> None:
    cmd = streamlit_command(host="127.0.0.1", port=9999)
    pairs = dict(zip(cmd[5::2], cmd[6::2], strict=True))
    # the app behind the Host check (an st.App file that streamlit run serves with uvicorn)
    assert cmd[2:4] == ["streamlit", "run"] and cmd[4].endswith("labeling_app/auth/_server_app.py")
    assert pairs["--server.address"] == "127.0.0.1"
    assert pairs["--server.port"] == "9999"
    assert pairs["--server.headless"] == "true"
    assert pairs["--browser.gatherUsageStats"] == "false"
    # no full garbage collection after every rerun (benchmarks/labeling_browser.py)
    assert pairs["--runner.postScriptGC"] == "false"
    # CORS and XSRF protection on the command line, which wins over a config.toml or an
    # environment variable that switches them off (tests/labeling_app/test_hosts.py)
    assert pairs["--server.enableCORS"] == "true"
    assert pairs["--server.enableXsrfProtection"] == "true"


@pytest.mark.parametrize(
    ("host", "loop"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
        ("example.org", False),
    ],
)
def test_is_loopback(host: str, loop: bool) -> None:
    assert is_loopback(host) is loop


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        ("127.0.0.1:8501", True),
        ("localhost", True),
        ("LOCALHOST:80", True),
        ("[::1]:8501", True),
        ("labels.example.org", True),
        ("rebind.example:8501", False),
        ("127.0.0.1.rebind.example", False),
        ("", False),
        ("[::1", False),
    ],
)
def test_host_headers(header: str, ok: bool) -> None:
    from trajudge.labeling_app.auth import host_allowed

    allowed = ("localhost", "127.0.0.1", "::1", "labels.example.org")
    assert host_allowed(header, allowed) is ok


def test_origin_headers() -> None:
    from trajudge.labeling_app.auth._hosts import origin_allowed

    allowed = ("127.0.0.1", "labels.example.org")
    assert origin_allowed("https://labels.example.org", allowed)
    assert origin_allowed("http://127.0.0.1:8501", allowed)
    for bad in ("null", "http://rebind.example:8501", "file://127.0.0.1", "127.0.0.1"):
        assert not origin_allowed(bad, allowed), bad
