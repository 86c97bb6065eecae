"""PostgreSQL only: the URL forms a team uses, where the password may live, and roles.

Everything else the store does runs on both backends through the ``db_url`` fixture; these
tests cover what SQLite has no notion of. The README's "A team store on PostgreSQL" section
describes the same forms and grants.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from _postgres import ROLE, ROLE_PASSWORD, PostgresServer
from trajudge.core import InputError
from trajudge.store import Store
from trajudge.trajectories import Trajectory

pytestmark = pytest.mark.postgres

# What the README tells a team to grant to the role the labeling app uses.
ANNOTATOR_GRANTS = """
GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO {role};
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role};
"""


@pytest.fixture
def database(postgres_server: PostgresServer) -> Iterator[tuple[PostgresServer, str]]:
    """A fresh database's name, dropped afterwards."""
    name = postgres_server.create_database()
    yield postgres_server, name
    postgres_server.drop_database(name)


def test_url_forms_open_one_store_and_messages_hide_the_password(
    database: tuple[PostgresServer, str],
) -> None:
    server, name = database
    full = server.url(name)  # postgresql+psycopg://trajudge:<password>@127.0.0.1:<port>/<db>
    store = Store(full)
    store.import_dataset("d", [Trajectory(id="a", task_id="k")])
    assert ROLE_PASSWORD not in store.url and f"{ROLE}:***@" in store.url
    # libpq's own forms (postgres:// as Heroku and others print it) reach the same database
    for scheme in ("postgresql://", "postgres://"):
        other = Store(scheme + full.split("://", 1)[1])
        assert other.sql_engine.dialect.driver == "psycopg"
        assert other.datasets() == ["d"]
        other.close()
    with pytest.raises(InputError) as err:
        store.require_dataset("nope")
    assert ROLE_PASSWORD not in str(err.value)
    wrong = full.replace(ROLE_PASSWORD, "not-the-password")
    with pytest.raises(
        InputError, match=r"cannot open the store: .*password authentication"
    ) as err:
        Store(wrong)
    assert "not-the-password" not in str(err.value) and "\n" not in str(err.value)
    store.close()


def test_password_from_a_pgpass_file_keeps_it_out_of_the_url(
    database: tuple[PostgresServer, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, name = database
    bare = f"postgresql+psycopg://{ROLE}@127.0.0.1:{server.port}/{name}"
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "absent"))
    with pytest.raises(InputError, match="cannot open the store"):
        Store(bare)  # no password anywhere: refused
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{server.port}:{name}:{ROLE}:{ROLE_PASSWORD}\n")
    pgpass.chmod(0o600)  # libpq ignores a pgpass file others can read
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    store = Store(bare)
    store.import_dataset("d", [Trajectory(id="a", task_id="k")])
    assert store.count_trajectories("d") == 1
    store.close()


def test_annotator_role_labels_with_the_readme_grants_only(
    database: tuple[PostgresServer, str],
) -> None:
    server, name = database
    role = f"annotator_{name}"
    server.admin(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-annotator'")
    as_annotator = f"postgresql+psycopg://{role}:pw-annotator@127.0.0.1:{server.port}/{name}"
    # before the owner opened the store the tables do not exist, and the annotator may not
    # create them (PostgreSQL 15+: only the database owner creates in schema public)
    with pytest.raises(InputError, match="cannot open the store: permission denied") as err:
        Store(as_annotator)
    assert "\n" not in str(err.value)
    owner = Store(server.url(name))
    owner.import_dataset("d", [Trajectory(id="a", task_id="k"), Trajectory(id="b", task_id="j")])
    server.admin(ANNOTATOR_GRANTS.format(role=role), dbname=name)
    annotator = Store(as_annotator)
    label_id = annotator.save_label("d", "a", "r", "ann", 1.0)
    assert annotator.save_label("d", "a", "r", "ann", 0.0, note="second look") == label_id
    annotator.save_label("d", "b", "r", "ann", None, skipped=True)
    assert [h["value"] for h in annotator.label_history(label_id)] == [1.0]
    assert annotator.label_counts("d", "r", annotator="ann") == {
        "labeled": 1,
        "skipped": 1,
        "items": 2,
    }
    assert owner.labels_frame("d")["value"].tolist()[0] == 0.0
    annotator.close()
    owner.close()


def test_missing_driver_or_a_malformed_url_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # a clone without trajudge[postgres]
    with pytest.raises(InputError, match=r"pip install 'trajudge\[postgres\]'") as err:
        Store("postgresql+psycopg://someone:secret@127.0.0.1:5432/team")
    assert "secret" not in str(err.value)
    with pytest.raises(InputError, match="cannot open the store"):
        Store("not a database url")
