"""`trajudge label` and `trajudge labels export|import`, called in process."""

from __future__ import annotations

import csv
import json
import socket
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.labeling_app import AppConfig
from trajudge.store import Store
from trajudge.trajectories import Trajectory

runner = CliRunner()
DS = "d"


@pytest.fixture
def store(db_url: str) -> Store:
    s = Store(db_url)
    s.import_dataset(DS, [Trajectory(id=f"t{i}", task_id=f"k{i}") for i in range(3)])
    s.save_label(DS, "t0", "r", "ann", 4.0, note="n")
    s.save_label(DS, "t1", "r", "bob", 1.0, unsure=True)
    return s


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_export(store: Store, db_url: str, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "labels.bin"
    res = runner.invoke(
        app, ["labels", "export", DS, "--out", str(out), "--format", fmt, "--db", db_url]
    )
    assert res.exit_code == 0, res.output
    assert "wrote 2 labels" in res.output
    if fmt == "csv":
        frame = pd.read_csv(out)
    elif fmt == "jsonl":
        frame = pd.DataFrame([json.loads(line) for line in out.read_text().splitlines()])
    else:
        frame = pd.read_parquet(out)
    assert frame["annotator"].tolist() == ["ann", "bob"]
    assert frame["value"].tolist() == [4.0, 1.0]


def test_export_unknown_dataset_is_one_red_line(store: Store, db_url: str, tmp_path: Path) -> None:
    out = tmp_path / "x.csv"
    res = runner.invoke(app, ["labels", "export", "nope", "--out", str(out), "--db", db_url])
    assert res.exit_code == 2
    assert "no dataset 'nope'" in res.output and "Traceback" not in res.output
    assert not out.exists()


def test_import_good_and_bad(store: Store, db_url: str, tmp_path: Path) -> None:
    good = tmp_path / "in.csv"
    good.write_text("trajectory_id,rubric_id,who,value,note\nt2,r,zed,3,ok\nt0,r,ann,5,\n")
    args = ["labels", "import", str(good), "--dataset", DS, "--db", db_url]
    res = runner.invoke(app, [*args, "--annotator-column", "who"])
    assert res.exit_code == 0, res.output
    assert "1 added, 1 updated, 0 unchanged" in res.output
    frame = store.labels_frame(DS).set_index(["trajectory_id", "annotator"])
    assert frame.loc[("t2", "zed"), "value"] == 3.0
    assert frame.loc[("t0", "ann"), "value"] == 5.0  # edited, with history
    assert len(store.label_history(int(frame.loc[("t0", "ann"), "id"]))) == 1

    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"trajectory_id": "t1", "rubric_id": "r", "annotator": "q", "value": 2})
        + "\n"
        + json.dumps({"trajectory_id": "missing", "rubric_id": "r", "annotator": "q", "value": 2})
        + "\n"
    )
    res = runner.invoke(app, ["labels", "import", str(bad), "--dataset", DS, "--db", db_url])
    assert res.exit_code == 2
    line = " ".join(res.output.split())
    assert f"{bad}: line 2: trajectory_id: unknown trajectory id 'missing'" in line
    assert "q" not in set(store.labels_frame(DS)["annotator"])  # nothing written


def test_label_command_hands_config_to_the_server(
    store: Store, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[AppConfig, str, int]] = []

    def fake_serve(config: AppConfig, *, host: str, port: int, sso: object = None) -> int:
        calls.append((config, host, port))
        return 0

    monkeypatch.setattr("trajudge.labeling_app.serve", fake_serve)
    args = ["label", "--db", db_url, "--dataset", DS, "--strategy", "stratified"]
    res = runner.invoke(app, [*args, "--overlap", "0.5", "--show-judges", "--port", "8600"])
    assert res.exit_code == 0, res.output
    cfg, host, port = calls[0]
    assert (host, port) == ("127.0.0.1", 8600)
    assert cfg == AppConfig(db_url, DS, "trajectory_reasonableness", True, "stratified", 0.5)
    assert "warning" not in res.output
    res = runner.invoke(app, ["label", "--db", db_url, "--host", "0.0.0.0"])
    assert res.exit_code == 0
    assert "warning: binding to 0.0.0.0" in " ".join(res.output.split())
    res = runner.invoke(app, ["label", "--db", db_url, "--overlap", "2"])
    assert res.exit_code == 2 and len(calls) == 2
    # a pairwise rubric labels pairs; --max-pairs caps the pairs per task
    pairwise = ["label", "--db", db_url, "--rubric", "trajectory_preference"]
    res = runner.invoke(app, [*pairwise, "--max-pairs", "3"])
    assert res.exit_code == 0, res.output
    assert calls[2][0].rubric == "trajectory_preference" and calls[2][0].max_pairs == 3
    res = runner.invoke(app, [*pairwise, "--max-pairs", "0"])
    assert res.exit_code == 2 and len(calls) == 3


def test_label_command_hands_the_stop_rule_to_the_app(
    store: Store, db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[AppConfig] = []

    def fake_serve(config: AppConfig, *, host: str, port: int, sso: object = None) -> int:
        calls.append(config)
        return 0

    monkeypatch.setattr("trajudge.labeling_app.serve", fake_serve)
    res = runner.invoke(app, ["label", "--db", db_url, "--stop-when", "tpr>=0.8@90%"])
    assert res.exit_code == 0, res.output
    assert calls[-1].stop_rule == ("tpr", 0.8, 0.9)
    # the app process reads it back from the environment the command writes
    assert AppConfig.from_env(calls[-1].to_env()).stop_rule == ("tpr", 0.8, 0.9)
    res = runner.invoke(app, ["label", "--db", db_url])
    assert calls[-1].stop_rule == ("kappa", 0.6, 0.95)
    config = tmp_path / "trajudge.yaml"
    config.write_text("report: {stop_when: 'pass_rate>=0.5@99%'}\n", encoding="utf-8")
    res = runner.invoke(app, ["label", "--db", db_url, "-c", str(config)])
    assert res.exit_code == 0, res.output
    assert calls[-1].stop_rule == ("pass_rate", 0.5, 0.99)
    res = runner.invoke(
        app, ["label", "--db", db_url, "-c", str(config), "--stop-when", "tnr>=0.7"]
    )
    assert calls[-1].stop_rule == ("tnr", 0.7, 0.95)  # the command line first
    n = len(calls)
    res = runner.invoke(app, ["label", "--db", db_url, "--stop-when", "kappa>=2"])
    assert res.exit_code == 2 and len(calls) == n
    line = " ".join(res.output.split())
    assert line == "error: --stop-when: 'kappa>=2': the target of kappa must be in [-1, 1]", line


def test_label_command_checks_before_starting(store: Store, db_url: str) -> None:
    res = runner.invoke(app, ["label", "--db", db_url, "--dataset", "nope"])
    assert res.exit_code == 2 and "no dataset 'nope'" in res.output
    res = runner.invoke(app, ["label", "--db", db_url, "--rubric", "no_such_rubric"])
    assert res.exit_code == 2 and "unknown rubric" in res.output


def test_label_command_makes_a_first_lead_and_maps_the_old_adjudicator_flag(
    store: Store, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[AppConfig] = []

    def fake_serve(config: AppConfig, *, host: str, port: int, sso: object = None) -> int:
        calls.append(config)
        return 0

    monkeypatch.setattr("trajudge.labeling_app.serve", fake_serve)
    monkeypatch.setenv("TRAJUDGE_LABEL_PASSWORD", "old-shared-password")
    args = ["label", "--db", db_url, "--dataset", DS]
    # a store without accounts: a lead with an invite, printed once, and the app starts
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "TRAJUDGE_LABEL_PASSWORD is no longer used" in res.output
    assert "old-shared-password" not in res.output
    token = res.output.split("the invite ")[1].split()[0]
    lead = store.account("lead")
    assert lead is not None and lead.role == "lead" and lead.secret_kind == "invite"
    assert token not in (lead.secret or "")
    # the second start makes no other account and prints no invite
    res = runner.invoke(app, args)
    assert res.exit_code == 0 and "invite" not in res.output
    assert [a.name for a in store.accounts()] == ["lead"]
    # --adjudicator NAME (deprecated): that account's role, or one line when there is none
    res = runner.invoke(app, [*args, "--adjudicator", "Ann B."])
    assert res.exit_code == 2 and "trajudge annotators add Ann B. --role adjudicator" in res.output
    assert runner.invoke(app, ["annotators", "add", "Ann B.", "--db", db_url]).exit_code == 0
    res = runner.invoke(app, [*args, "--adjudicator", "Ann B."])
    assert res.exit_code == 0 and "--adjudicator is deprecated" in res.output
    account = store.account("Ann B.")
    assert account is not None and account.role == "adjudicator"
    # the hosts the app answers to: loopback, the bound address and --allowed-host
    res = runner.invoke(
        app,
        [*args, "--host", "10.1.2.3", "--allowed-host", "Labels.Example.org",
         "--reviewers-per-item", "2"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert calls[-1].allowed_hosts == (
        "localhost",
        "127.0.0.1",
        "::1",
        "labels.example.org",
        "10.1.2.3",
    )
    assert calls[-1].reviewers == 2
    # X-Forwarded-For is believed from no one by default, and from each --trusted-proxy
    # (an address or a network) when given: the server's environment says so, over the user's
    assert calls[-1].trusted_proxies == ()
    assert calls[-1].to_env()["FORWARDED_ALLOW_IPS"] == ""
    res = runner.invoke(
        app, [*args, "--trusted-proxy", "127.0.0.1", "--trusted-proxy", "10.9.8.7/8"]
    )
    assert res.exit_code == 0, res.output
    assert calls[-1].to_env()["FORWARDED_ALLOW_IPS"] == "127.0.0.1,10.0.0.0/8"
    served = len(calls)
    for bad in ("*", "proxy.example.org", "10.0.0.0/33"):
        res = runner.invoke(app, [*args, "--trusted-proxy", bad])
        assert res.exit_code == 2, res.output
        assert "--trusted-proxy" in res.output and "not an IP address or network" in res.output
        errors = [ln for ln in res.output.splitlines() if not ln.startswith("warning:")]
        assert "Traceback" not in res.output and len(errors) == 1, res.output
    assert len(calls) == served  # refused before the app started


def test_label_command_reads_sso_from_the_config_and_needs_its_secret(
    store: Store, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "trajudge.yaml"
    config.write_text(
        "sso:\n"
        "  server_metadata_url: https://idp.example.test/.well-known/openid-configuration\n"
        "  client_id: labels\n"
        "  only: true\n"
    )
    args = ["label", "--db", db_url, "--dataset", DS, "--config", str(config)]
    monkeypatch.delenv("TRAJUDGE_OIDC_CLIENT_SECRET", raising=False)
    # the real server refuses to start without the client secret: one line, exit 2
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "set TRAJUDGE_OIDC_CLIENT_SECRET" in " ".join(res.output.split())
    assert "Traceback" not in res.output
    calls: list[object] = []

    def fake_serve(config: AppConfig, *, host: str, port: int, sso: object = None) -> int:
        calls.append(sso)
        return 0

    monkeypatch.setattr("trajudge.labeling_app.serve", fake_serve)
    res = runner.invoke(app, [*args, "--host", "0.0.0.0"])
    assert res.exit_code == 0, res.output
    sso = calls[0]
    assert getattr(sso, "client_id", None) == "labels"
    assert getattr(sso, "only", None) is True
    # the name the browser comes back to from the provider joins the Host list
    hosts: list[tuple[str, ...]] = []
    monkeypatch.setattr(
        "trajudge.labeling_app.serve",
        lambda config, **_: hosts.append(config.allowed_hosts) or 0,
    )
    config.write_text(
        config.read_text() + "  redirect_uri: https://labels.example.test/oauth2callback\n"
    )
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert hosts == [("localhost", "127.0.0.1", "::1", "labels.example.test")]
    config.write_text("sso:\n  client_id: labels\n")
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "sso.server_metadata_url" in res.output


def test_label_command_stops_when_the_provider_cannot_be_read(
    store: Store, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = tmp_path / "trajudge.yaml"
    config.write_text(
        "sso:\n"
        f"  server_metadata_url: http://127.0.0.1:{port}/.well-known/openid-configuration\n"
        "  client_id: labels\n"
    )
    secret = "a-client-secret-never-shown"
    monkeypatch.setenv("TRAJUDGE_OIDC_CLIENT_SECRET", secret)
    args = ["label", "--db", db_url, "--dataset", DS, "--config", str(config)]
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    line = " ".join(res.output.split())
    assert f"sso.server_metadata_url: http://127.0.0.1:{port}/" in line
    assert "cannot read it" in line and "Traceback" not in res.output
    assert secret not in res.output


def test_pair_labels_export_import_round_trip(store: Store, db_url: str, tmp_path: Path) -> None:
    store.save_pair_label(DS, "t0", "t1", "pref", "ann", "B", left_id="t1", note="n")
    store.save_pair_label(DS, "t0", "t2", "pref", "bob", "tie", left_id="t0")
    out = tmp_path / "pairs.jsonl"
    res = runner.invoke(app, ["labels", "export", DS, "--out", str(out), "--db", db_url])
    assert res.exit_code == 0, res.output
    # item labels only, and the pair labels pointed at rather than silently left out
    assert "wrote 2 labels" in res.output and "2 pair labels not written" in res.output
    args = ["labels", "export", DS, "--out", str(out), "--pairs", "--db", db_url]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "wrote 2 pair labels" in res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["other_id"], r["category"], r["left_id"]) for r in rows] == [
        ("t1", "B", "t1"),
        ("t2", "tie", "t0"),
    ]
    other = tmp_path / "other.db"
    Store(f"sqlite:///{other}").import_dataset(
        DS, [Trajectory(id=f"t{i}", task_id=f"k{i}") for i in range(3)]
    )
    args = ["labels", "import", str(out), "--dataset", DS, "--pairs"]
    res = runner.invoke(app, [*args, "--db", f"sqlite:///{other}"])
    assert res.exit_code == 0, res.output
    assert "2 added, 0 updated, 0 unchanged" in res.output
    copied = Store(f"sqlite:///{other}")
    got = [copied.pair_item_labels(DS, "t0", b, "pref")[0] for b in ("t1", "t2")]
    assert [(r["category"], r["left_id"], r["note"]) for r in got] == [
        ("B", "t1", "n"),
        ("tie", "t0", None),
    ]


def test_bad_pair_label_row_is_one_line_exit_2(store: Store, db_url: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "trajectory_id,other_id,rubric_id,annotator,category\nt0,t1,pref,q,A\nt0,t2,pref,q,better\n"
    )
    args = ["labels", "import", str(bad), "--dataset", DS, "--pairs", "--db", db_url]
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(" ".join(lines).split(f"{bad}:")) == 2  # one message
    line = " ".join(res.output.split())
    assert f"{bad}: line 3: category: 'better' is not A, B or tie" in line
    assert store.pair_labels_frame(DS).empty  # the good line 2 was not written either
    # the same file without --pairs: refused by name, nothing written
    res = runner.invoke(app, ["labels", "import", str(bad), "--dataset", DS, "--db", db_url])
    assert res.exit_code == 2
    assert "line 2: other_id: a pair label: import pair labels with --pairs" in " ".join(
        res.output.split()
    )


FORMULAS = ['=HYPERLINK("http://evil.example","click")', "+1-1", "-2+3", "@SUM(A1:A9)", "\tx"]


def test_csv_export_makes_formula_cells_inert_and_imports_them_back(
    db_url: str, tmp_path: Path
) -> None:
    """OWASP's CSV-injection advice: a cell a spreadsheet would run as a formula is written
    with a leading ', in the CLI export and the app's download (one encoder); the import of
    the file gives the notes back as they were."""
    s = Store(db_url)
    s.import_dataset(DS, [Trajectory(id=f"t{i}", task_id=f"k{i}") for i in range(5)])
    for i, note in enumerate(FORMULAS):
        s.save_label(DS, f"t{i}", "r", "ann", 2.0, note=note)
    out = tmp_path / "labels.csv"
    res = runner.invoke(app, ["labels", "export", DS, "--out", str(out), "--db", db_url])
    assert res.exit_code == 0, res.output
    with out.open(newline="", encoding="utf-8") as f:
        notes = [row["note"] for row in csv.DictReader(f)]
    assert notes == ["'" + n for n in FORMULAS]  # every one inert
    assert all(not n.startswith(("=", "+", "-", "@", "\t")) for n in notes)
    other = f"{db_url.removesuffix('.db')}-2.db" if db_url.startswith("sqlite") else None
    if other is None:
        pytest.skip("the round trip goes into a second SQLite store")
    Store(other).import_dataset(DS, [Trajectory(id=f"t{i}", task_id=f"k{i}") for i in range(5)])
    res = runner.invoke(app, ["labels", "import", str(out), "--dataset", DS, "--db", other])
    assert res.exit_code == 0, res.output
    back = Store(other).labels_frame(DS).sort_values("trajectory_id")["note"].tolist()
    assert back == [n.strip() for n in FORMULAS]  # the import strips cells, as for any note


def test_active_strategy_refuses_what_it_cannot_draw(
    store: Store, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--strategy active builds its design before the app starts: no dataset named, a
    pairwise rubric, or a dataset no judge scored fails there, one line, exit 2, and nothing
    is stored."""
    calls: list[AppConfig] = []
    monkeypatch.setattr("trajudge.labeling_app.serve", lambda c, **_: calls.append(c) or 0)
    active = ["label", "--db", db_url, "--strategy", "active"]
    cases = [
        ([], "--strategy active needs --dataset"),
        (["--dataset", DS, "--rubric", "trajectory_preference"], "is pairwise"),
        (["--dataset", DS], "no judge scored it under rubric 'trajectory_reasonableness'"),
        (["--dataset", DS, "--budget", "0"], "Invalid value for '--budget'"),
        (["--dataset", DS, "--learn", "-1"], "Invalid value for '--learn'"),
    ]  # fmt: skip
    for extra, message in cases:
        res = runner.invoke(app, [*active, *extra])
        assert res.exit_code == 2, res.output
        assert message in " ".join(res.output.split()), res.output
        assert "Traceback" not in res.output
    assert calls == []
    assert store.label_draws(DS, "trajectory_reasonableness").empty


def test_active_starts_with_its_learning_phase_and_a_leads_choice_outlives_a_restart(
    store: Store, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[AppConfig] = []
    monkeypatch.setattr("trajudge.labeling_app.serve", lambda c, **_: calls.append(c) or 0)
    rubric = "trajectory_reasonableness"
    for k, tid in enumerate(["t0", "t1", "t2"]):
        store.add_judgment(DS, {"trajectory_id": tid, "judge": "j", "rubric_id": rubric,
                                "rubric_version": "v", "model": "m", "mode": "pointwise",
                                "order": "ab", "sample": 0, "score": float(1 + 2 * k)})  # fmt: skip
    res = runner.invoke(
        app, ["label", "--db", db_url, "--dataset", DS, "--strategy", "active", "--budget", "3",
              "--learn", "1"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    # budget 3 of 3 items: every item drawn with probability 1, the first one ends phase 1
    assert " ".join(res.output.split()).startswith(
        "active design: learning phase, 1 items drawn uniformly (probability 1.000) from the "
        "first 1 of 3 items; the rest is drawn with probabilities fitted on their labels "
    )
    assert calls[-1].learn == 1 and calls[-1].budget == 3
    assert store.draw_phases(DS, rubric) == (1,)
    store.add_account("cho", "lead", secret="h", secret_kind="password")
    store.set_label_strategy(DS, rubric, "disagreement", name="cho", started_with="active")
    res = runner.invoke(app, ["label", "--db", db_url, "--dataset", DS])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert said.startswith("queue order: disagreement, chosen by cho on the lead's page at ")
    assert "UTC (--strategy random is only the starting value) trajudge labels:" in said
