"""Backend URLs and the pull's time window: parsed without a server."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from trajudge.backends import is_backend_url, parse_backend_url
from trajudge.backends._window import parse_when
from trajudge.core import InputError


def test_a_backend_url_splits_into_server_and_project_and_hides_credentials() -> None:
    url = parse_backend_url(
        "phoenix+https://me:p%40ss@example.org:6006/prefix/my%20project",
        kinds=("phoenix",),
        need_name=True,
    )
    assert url.base == "https://example.org:6006/prefix"
    assert url.name == "my project"
    assert (url.username, url.password) == ("me", "p@ss")
    assert url.shown == "phoenix+https://example.org:6006/prefix/my%20project"
    assert is_backend_url("phoenix+http://h:1/p") and not is_backend_url("runs/phoenix+x.json")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("phoenix+http://h:6006", "no project"),
        ("phoenix+http://:6006/p", "no host"),
        ("phoenix+http://h:port/p", "not a valid URL"),
        ("jaeger+http://h:1/p", "unknown backend"),
    ],
)
def test_a_bad_backend_url_is_one_line_naming_it(text: str, reason: str) -> None:
    with pytest.raises(InputError, match=reason) as exc:
        parse_backend_url(text, kinds=("phoenix",), need_name=True)
    assert "\n" not in str(exc.value)


def test_the_window_takes_dates_times_and_ages() -> None:
    now = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
    assert parse_when("2026-01-31", "--since") == "2026-01-31T00:00:00+00:00"
    assert parse_when("2026-01-31T08:00+02:00", "--since") == "2026-01-31T06:00:00+00:00"
    assert parse_when("12h", "--since", now=now) == "2026-03-10T00:00:00+00:00"
    assert parse_when("7d", "--since", now=now) == "2026-03-03T12:00:00+00:00"
    with pytest.raises(InputError, match="--until"):
        parse_when("last week", "--until")
