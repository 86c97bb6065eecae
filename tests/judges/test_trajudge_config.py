"""trajudge.yaml: the config model, path resolution and errors naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajudge.config import load_config, parse_config
from trajudge.core import InputError
from trajudge.judges import JudgeSpec

FULL = """\
dataset:
  path: data/gpt-4o-airline.json
  format: tau_bench
  name: airline
specs:
  path: specs/airline.yaml
judges:
  - name: local
    model: local/gemma-3-270m
    rubric: trajectory_reasonableness
    max_tokens: 128
  - name: big
    model: ollama/llama3:8b
    rubric: rubrics/mine.yaml
    temperature: 0.3
    samples: 3
    swap: false
    api_base: http://127.0.0.1:11434
    api_key_env: OLLAMA_KEY
    timeout: 30
    concurrency: 2
    rpm: 60
gates: [gate, regression]
labels:
  path: labels.csv
  source: human
report:
  out: out/report
  formats: [md, html, json]
  ks: [1, 2, 4]
  fail_under: ["kappa>=0.6", "pass^1>=0.4"]
  baseline: baseline.json
  primary: local
  n_boot: 500
  seed: 7
layers:
  core_tasks: ["0"]
  min_pass_rate: 0.9
db: sqlite:///trajudge.db
limits:
  tasks: ["0", "1"]
  max_trials: 2
"""


def test_full_config_loads_and_resolves_relative_paths(tmp_path: Path) -> None:
    cfg_dir = tmp_path / "proj"
    cfg_dir.mkdir()
    path = cfg_dir / "trajudge.yaml"
    path.write_text(FULL, encoding="utf-8")
    cfg = load_config(path)
    base = cfg_dir.resolve()
    assert cfg.dataset.path == base / "data/gpt-4o-airline.json"
    assert cfg.dataset.format == "tau_bench" and cfg.dataset.name == "airline"
    assert cfg.specs is not None and cfg.specs.path == base / "specs/airline.yaml"
    assert [j.name for j in cfg.judges] == ["local", "big"]
    big = cfg.judges[1]
    assert (big.model, big.samples, big.swap, big.rpm) == ("ollama/llama3:8b", 3, False, 60)
    assert big.rubric == str(base / "rubrics/mine.yaml")
    assert cfg.judges[0].rubric == "trajectory_reasonableness"  # an id, not a path
    assert cfg.gates == ["gate", "regression"]
    assert cfg.labels is not None and cfg.labels.path == base / "labels.csv"
    assert cfg.report.out == base / "out/report" and cfg.report.ks == [1, 2, 4]
    assert cfg.report.fail_under == ["kappa>=0.6", "pass^1>=0.4"]
    assert (cfg.report.primary, cfg.report.n_boot, cfg.report.seed) == ("local", 500, 7)
    assert cfg.layers is not None and cfg.layers.core_tasks == ["0"]
    # a relative sqlite path resolves against the config file, like every other path
    assert cfg.layers.min_pass_rate == 0.9
    assert cfg.db == f"sqlite:///{(base / 'trajudge.db').resolve()}"
    assert cfg.report.baseline == base / "baseline.json"
    assert cfg.limits.tasks == ["0", "1"] and cfg.limits.max_trials == 2


def test_empty_config_has_defaults(tmp_path: Path) -> None:
    path = tmp_path / "trajudge.yaml"
    path.write_text("", encoding="utf-8")
    cfg = load_config(path)
    assert cfg.judges == [] and cfg.gates == ["gate"] and cfg.report.ks == [1, 2, 3, 4]
    assert cfg.report.stop_when == "kappa>=0.6"


@pytest.mark.parametrize(
    ("text", "key", "reason"),
    [
        ("judges:\n  - {name: a, model: m, temperature: 5}\n", "judges[0].temperature", "less"),
        ("judges:\n  - {name: a, model: m, api_key: sk-123}\n", "judges[0].api_key", "Extra"),
        ("judges:\n  - {name: a}\n  - {name: a}\n", "judges", "duplicate judge name 'a'"),
        ("gates: [fatal]\n", "gates[0]", "Input should be"),
        ("report: {ks: [0]}\n", "report", "positive"),
        ("limits: {max_tasks: 0}\n", "limits.max_tasks", "greater"),
        ("dataset: {colour: red}\n", "dataset.colour", "Extra"),
        ("- a list\n", None, "YAML mapping"),
        ("dataset: {path: a.jsonl, source: 'phoenix+http://h:1/p'}\n", "dataset", "not both"),
        ("dataset: {source: 'phoenix+http://h:1/p', format: otel}\n", "dataset", "for a file"),
        ("dataset: {source: 'phoenix+http://u:pw@h:1'}\n", "dataset.source", "no project"),
        ("dataset: {source: 'zipkin+http://h:1/p'}\n", "dataset.source", "unknown backend"),
        ("export: ['otlp-file:e.jsonl', nowhere]\n", "export", "entry 1: unknown target"),
        ("export: ['otlp+http://']\n", "export", "entry 0: no host"),
        ("report: {stop_when: 'kappa>=1.5'}\n", "report.stop_when", "must be in [-1, 1]"),
        ("report: {stop_when: 'ac1>=0.5'}\n", "report.stop_when", "unknown statistic 'ac1'"),
    ],
)
def test_bad_config_names_file_key_and_reason(
    tmp_path: Path, text: str, key: str | None, reason: str
) -> None:
    path = tmp_path / "trajudge.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_config(path)
    assert info.value.file == str(path)
    assert info.value.field == key
    assert reason in info.value.reason
    assert "pw" not in str(info.value)  # a URL's credentials are never shown


def test_a_backend_source_names_the_dataset_after_its_project(tmp_path: Path) -> None:
    from trajudge.config import dataset_name

    cfg = parse_config(
        {"dataset": {"source": "phoenix+http://u:pw@127.0.0.1:6006/airline"},
         "export": ["otlp-file:evals.jsonl", "phoenix+http://127.0.0.1:6006"]},
        tmp_path / "trajudge.yaml",
    )  # fmt: skip
    assert dataset_name(cfg) == "airline" and cfg.dataset.path is None
    named = parse_config(
        {"dataset": {"source": "mlflow+http://127.0.0.1:5000/support", "name": "ci"}}, "t.yaml"
    )
    assert dataset_name(named) == "ci"


def test_missing_and_invalid_yaml(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("judges: [\n", encoding="utf-8")
    with pytest.raises(InputError, match="invalid YAML"):
        load_config(bad)


def test_the_embedded_model_has_its_own_measured_defaults() -> None:
    from trajudge.judges import LOCAL_DEFAULTS

    local = JudgeSpec(name="l", model="local/gemma-3-270m")
    hosted = JudgeSpec(name="h", model="openai/gpt-4o-mini")
    assert (local.timeout, local.max_tokens) == (1800.0, 160)  # benchmarks/local_judge_latency
    default = JudgeSpec(name="d")  # the default model is the embedded one
    assert default.model == "local/gemma-3-270m" and default.timeout == 1800.0
    assert LOCAL_DEFAULTS == {"timeout": 1800.0, "max_tokens": 160}
    assert (hosted.timeout, hosted.max_tokens) == (120.0, 512)
    # a value given wins, from Python or from trajudge.yaml
    assert JudgeSpec(name="l", model="local/gemma-3-270m", timeout=60).timeout == 60
    cfg = parse_config(
        {"judges": [{"name": "l", "model": "local/gemma-3-270m", "max_tokens": 300}]},
        "/p/trajudge.yaml",
    )
    assert (cfg.judges[0].max_tokens, cfg.judges[0].timeout) == (300, 1800.0)
    with pytest.raises(ValueError, match="api_base does not apply to 'local/gemma-3-270m'"):
        JudgeSpec(name="l", model="local/gemma-3-270m", api_base="http://127.0.0.1:8080/v1")


def test_the_sso_block_resolves_its_secret_file_and_holds_no_secret(tmp_path: Path) -> None:
    path = tmp_path / "team" / "trajudge.yaml"
    path.parent.mkdir()
    path.write_text(
        "sso:\n"
        "  server_metadata_url: https://idp.example.test/.well-known/openid-configuration\n"
        "  client_id: labels\n"
        "  client_secret_file: secrets/oidc\n"
        "  only: true\n"
    )
    cfg = load_config(path)
    assert cfg.sso is not None
    assert cfg.sso.client_secret_file == tmp_path / "team" / "secrets" / "oidc"
    assert cfg.sso.only is True
    assert parse_config({"db": "sqlite:///x.db"}, path).sso is None
    # e-mails map to the store's accounts (trajudge annotators add --email): a table of them
    # in the file could let a disabled account in
    with pytest.raises(InputError, match=r"sso\.accounts: Extra inputs are not permitted"):
        parse_config(
            {"sso": {"server_metadata_url": "https://i.test/x", "client_id": "c", "accounts": {}}},
            path,
        )
    # the secret itself has no key in the file: it would sit beside the config in plain text
    with pytest.raises(InputError, match=r"sso\.client_secret: Extra inputs are not permitted"):
        parse_config(
            {
                "sso": {
                    "server_metadata_url": "https://i.test/x",
                    "client_id": "c",
                    "client_secret": "s",
                }
            },
            path,
        )
