"""The inputs that are one document are read whole, so each is refused by its size first: a
YAML file (rubrics, specs, configs) over ``TRAJUDGE_MAX_YAML_BYTES``, an event file of an
OpenHands folder over ``TRAJUDGE_MAX_RECORD_BYTES``, an Inspect ``.json`` log or a ``--map``
file over ``TRAJUDGE_MAX_DOCUMENT_BYTES``. Each is a real ``trajudge`` process with its address
space capped, ending in one line and exit 2 with nothing imported."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from _capped import run_capped
from trajudge.store import Store
from trajudge.trajectories import Trajectory

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _nothing_imported(db: Path) -> bool:
    return not db.exists() or Store(f"sqlite:///{db}").datasets() == []


def test_a_yaml_file_over_64_mib_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'trajudge.db'}"
    Store(url).import_dataset("ds", [Trajectory(id="a", task_id="a", input="x")])
    spec = tmp_path / "specs.yaml"
    with spec.open("w", encoding="utf-8") as fh:  # 70 MiB of comments: valid YAML
        fh.write("defaults: {}\n")
        for _ in range(70):
            fh.write(("# " + "y" * 1021 + "\n") * 1024)
    size = spec.stat().st_size
    run = run_capped(["check", "ds", "--spec", str(spec), "--db", url], cwd=tmp_path)
    assert run.one_line_error() == (
        f"error: {spec}: bytes of a YAML file over the limit of {64 << 20:,} "
        f"(the file has {size:,} bytes); raise TRAJUDGE_MAX_YAML_BYTES to allow it"
    )
    assert run.max_rss_mb < 512


def test_an_openhands_event_file_over_the_record_limit_is_refused(tmp_path: Path) -> None:
    events = tmp_path / "events"
    shutil.copytree(FIXTURES / "openhands" / "events", events)
    files = sorted(events.glob("*.json"))
    biggest = max(f.stat().st_size for f in files)
    padded = files[3]
    text = padded.read_text(encoding="utf-8")
    padded.write_text(text + " " * (biggest + 10 - len(text)), encoding="utf-8")  # still JSON
    db = tmp_path / "x.db"
    run = run_capped(
        ["import", "events", "--format", "openhands", "--db", f"sqlite:///{db}"],
        cwd=tmp_path,
        env={**os.environ, "TRAJUDGE_MAX_RECORD_BYTES": str(biggest)},
    )
    assert run.one_line_error() == (
        f"error: {padded.relative_to(tmp_path)}: characters in one record over the limit of "
        f"{biggest:,} (the file has {biggest + 10:,} bytes); raise TRAJUDGE_MAX_RECORD_BYTES "
        "to allow it"
    )
    assert _nothing_imported(db)


def test_an_inspect_json_log_over_the_document_limit_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "scenario.json"
    shutil.copy(FIXTURES / "inspect" / "scenario.json", log)
    size = log.stat().st_size
    db = tmp_path / "x.db"
    run = run_capped(
        ["import", "scenario.json", "--format", "inspect", "--db", f"sqlite:///{db}"],
        cwd=tmp_path,
        env={**os.environ, "TRAJUDGE_MAX_DOCUMENT_BYTES": str(size - 1)},
    )
    assert run.one_line_error() == (
        f"error: scenario.json: bytes of a file read whole over the limit of {size - 1:,} "
        f"(the file has {size:,} bytes); raise TRAJUDGE_MAX_DOCUMENT_BYTES to allow it"
    )
    assert _nothing_imported(db)


def test_a_map_file_over_the_document_limit_is_refused(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"id": "a", "input": "x"}\n', encoding="utf-8")
    mapping = tmp_path / "map.csv"
    mapping.write_text("id,task_id\n" + "a,t\n" * 1000, encoding="utf-8")
    size = mapping.stat().st_size
    db = tmp_path / "x.db"
    run = run_capped(
        ["import", "runs.jsonl", "--map", "map.csv", "--db", f"sqlite:///{db}"],
        cwd=tmp_path,
        env={**os.environ, "TRAJUDGE_MAX_DOCUMENT_BYTES": "1000"},
    )
    assert run.one_line_error() == (
        f"error: map.csv: bytes of a file read whole over the limit of 1,000 "
        f"(the file has {size:,} bytes); raise TRAJUDGE_MAX_DOCUMENT_BYTES to allow it"
    )
    assert _nothing_imported(db)
