"""``trajudge.yaml``: one file that says what to import, check, judge, label and report.

>>> cfg = parse_config({"dataset": {"path": "runs.json", "format": "tau_bench"},
...                     "judges": [{"name": "local", "model": "local/gemma-3-270m"}]},
...                    "/project/trajudge.yaml")
>>> str(cfg.dataset.path), cfg.judges[0].rubric
('/project/runs.json', 'trajectory_reasonableness')

Relative paths resolve against the folder of the config file. Errors are
:class:`~trajudge.trajectories.InputError` naming the file and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from trajudge.alignment import AlignOptions
from trajudge.core import InputError, pydantic_field
from trajudge.judges import JudgeSpec, check_engine
from trajudge.labeling_app.auth import SsoOptions
from trajudge.trajectories import read_yaml

Severity = Literal["gate", "diagnostic", "regression"]
ReportFormat = Literal["md", "html", "json"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatasetConfig(_Section):
    """Where the trajectories come from and the dataset name they are stored under: a file
    (``path``) or a tracing backend (``source``: ``phoenix+http://HOST:PORT/PROJECT`` or
    ``mlflow+http://HOST:PORT/EXPERIMENT``, pulled incrementally as ``trajudge import`` does;
    the dataset is then named after the project unless ``name`` says otherwise)."""

    path: Path | None = None
    source: str | None = None
    format: str | None = None  # e.g. jsonl, openai, otel, tau_bench, parquet; None = detect
    name: str | None = Field(default=None, min_length=1)
    # counts the file may hold more of than was read (``trajudge import --accept-loss``)
    accept_loss: list[str] = Field(default_factory=list)

    @field_validator("accept_loss")
    @classmethod
    def _known_losses(cls, value: list[str]) -> list[str]:
        # imported on use: the config of a command that reads no file loads no reader code
        from trajudge.trajectories._census import LOSSES

        for name in value:
            if name not in LOSSES:
                raise ValueError(f"unknown loss {name!r} (choose from {', '.join(LOSSES)})")
        return value

    @field_validator("source")
    @classmethod
    def _backend_source(cls, value: str | None) -> str | None:
        if value is not None:
            # imported on use: a config without a source loads no backend code
            from trajudge.backends import parse_backend_url

            try:
                parse_backend_url(value, kinds=("phoenix", "mlflow"), need_name=True)
            except InputError as exc:  # the message names the URL without its credentials
                raise ValueError(f"{exc.file}: {exc.reason}") from None
        return value

    @model_validator(mode="after")
    def _one_origin(self) -> DatasetConfig:
        if self.path is not None and self.source is not None:
            raise ValueError("give dataset.path or dataset.source, not both")
        if self.source is not None and self.format is not None:
            raise ValueError("dataset.format is for a file (dataset.path), not a backend source")
        return self


class SpecsConfig(_Section):
    """Task specs (YAML) that the rule checks read."""

    path: Path


class LabelsConfig(_Section):
    """Labels to import before the report, and their source name.

    ``source: human`` labels are people's; any other source (e.g. ``env_reward``) is a
    REFERENCE label source and the report says so. With ``only_dataset: true`` rows for
    trajectories outside the dataset (e.g. a demo subset) are left out, and the run says how
    many; otherwise such a row is an error.
    """

    path: Path | None = None
    source: str = "human"
    only_dataset: bool = False


class ReportConfig(_Section):
    """Report output: folder, formats, pass@k / pass^k k values, CI gates, a baseline.

    ``fail_under`` holds gate expressions checked by the report (e.g. ``"kappa>=0.6"``,
    ``"pass^1>=0.4"``); ``baseline_tolerance``: usage per trajectory (cost, tokens, turns,
    latency) above this ratio to ``baseline``'s fails the report; ``primary`` is the verdict
    source of unqualified ``pass^k`` gates;
    ``n_boot`` and ``seed`` drive every bootstrap interval. ``stop_when`` is when labelling
    may stop under ``--strategy active`` (``STATISTIC>=NUMBER[@LEVEL]``, e.g.
    ``"kappa>=0.7@95%"``): the Labels section's status, and the label page's under
    ``trajudge label -c``. ``dev_share`` splits tasks into
    dev and holdout (by a hash of the task id, so all trials of a task stay together): a
    judge's pass/fail threshold is tuned on the dev trajectories and every number is reported
    on the holdout ones.
    """

    out: Path = Path("trajudge-report")
    formats: list[ReportFormat] = Field(
        default_factory=lambda: list[ReportFormat](["md", "html", "json"])
    )
    ks: list[int] = Field(default_factory=lambda: [1, 2, 3, 4])
    fail_under: list[str] = Field(default_factory=list)
    baseline: Path | None = None
    baseline_tolerance: float = Field(default=1.5, gt=0)
    primary: str | None = None
    dev_share: float | None = Field(default=None, gt=0, lt=1)
    n_boot: int = Field(default=2000, ge=1)
    seed: int = 0
    stop_when: str = "kappa>=0.6"

    @field_validator("stop_when")
    @classmethod
    def _stop_rule(cls, value: str) -> str:
        # imported on use: reading a config loads no report code unless it has this key
        from trajudge.report._gates import parse_stop_rule

        try:
            parse_stop_rule(value, "report.stop_when")
        except InputError as exc:
            raise ValueError(exc.reason) from None
        return value

    @model_validator(mode="after")
    def _check_ks(self) -> ReportConfig:
        if not self.ks or min(self.ks) < 1:
            raise ValueError("ks must be positive integers")
        return self


class LimitsConfig(_Section):
    """Run on a subset (a demo): listed tasks, the first ``max_tasks`` tasks, trials below
    ``max_trials``."""

    tasks: list[str] | None = None
    max_tasks: int | None = Field(default=None, ge=1)
    max_trials: int | None = Field(default=None, ge=1)


class LayersConfig(_Section):
    """The core layer: a small set of tasks checked and judged first; the run stops there when
    fewer than ``min_pass_rate`` of their trajectories pass.

    The core tasks are ``core_tasks`` together with the task of every case marked core
    (``trajudge add-case --core``) in the eval set at ``evalset``: one core set, fed by either
    list or both.
    """

    core_tasks: list[str] = Field(default_factory=list)
    evalset: Path | None = None
    min_pass_rate: float = Field(default=1.0, ge=0, le=1)


class TrajudgeConfig(_Section):
    """The whole ``trajudge.yaml``. ``db`` is the store's SQLAlchemy URL (default: the CLI's);
    ``engine`` runs the judge calls (``local``, ``processes``, ``ray``, ``batch``: see
    ``trajudge.judges.ENGINES``)."""

    db: str | None = None
    dataset: DatasetConfig = Field(default_factory=DatasetConfig)
    specs: SpecsConfig | None = None
    judges: list[JudgeSpec] = Field(default_factory=list)
    rubric_dirs: list[Path] = Field(default_factory=list)
    gates: list[Severity] = Field(default_factory=lambda: list[Severity](["gate"]))
    labels: LabelsConfig | None = None
    report: ReportConfig = Field(default_factory=ReportConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    layers: LayersConfig | None = None
    cache: Path | None = None
    engine: str = "local"  # what runs the judge calls: one of trajudge.judges.ENGINES
    address: str | None = None  # the Ray cluster of ``engine: ray`` (auto, ray://host:10001)

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, engine: str) -> str:
        try:
            return check_engine(engine)
        except InputError as exc:
            raise ValueError(exc.reason) from None

    # trajudge align, run by trajudge run after the labels (see trajudge.alignment)
    align: AlignOptions | None = None
    # aligned judges saved earlier, by name: scored like the judges above, verdicts by rule
    aligned_judges: list[str] = Field(default_factory=list)
    # where the results are written back after the report (trajudge export's --to targets)
    export: list[str] = Field(default_factory=list)

    @field_validator("export")
    @classmethod
    def _known_targets(cls, targets: list[str]) -> list[str]:
        # imported on use: a config without export targets loads no backend code
        from trajudge.backends._export import check_target

        for i, target in enumerate(targets):
            try:
                check_target(target)
            except InputError as exc:
                raise ValueError(f"entry {i}: {exc.reason}") from None
        return targets

    # single sign-on for `trajudge label` (an OpenID Connect provider; see labeling_app.auth)
    sso: SsoOptions | None = None

    @field_validator("judges")
    @classmethod
    def _unique_judges(cls, judges: list[JudgeSpec]) -> list[JudgeSpec]:
        names = [j.name for j in judges]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ValueError(f"duplicate judge name {name!r} (entry {i})")
        return judges


def _resolve(cfg: TrajudgeConfig, base: Path) -> TrajudgeConfig:
    def fix(p: Path | None) -> Path | None:
        return None if p is None else (p if p.is_absolute() else base / p)

    if cfg.db and cfg.db.startswith("sqlite:///") and not cfg.db.startswith("sqlite:////"):
        rest = cfg.db.removeprefix("sqlite:///")
        if rest and not rest.startswith(":memory:"):
            cfg.db = f"sqlite:///{(base / rest).resolve()}"
    cfg.dataset.path = fix(cfg.dataset.path)
    if cfg.specs is not None:
        cfg.specs.path = fix(cfg.specs.path) or cfg.specs.path
    if cfg.labels is not None:
        cfg.labels.path = fix(cfg.labels.path)
    cfg.report.out = (fix(cfg.report.out) or cfg.report.out).resolve()
    cfg.report.baseline = fix(cfg.report.baseline)
    cfg.rubric_dirs = [fix(p) or p for p in cfg.rubric_dirs]
    if cfg.layers is not None:
        cfg.layers.evalset = fix(cfg.layers.evalset)
    cfg.cache = fix(cfg.cache)
    if cfg.sso is not None and cfg.sso.client_secret_file is not None:
        secret_file = fix(cfg.sso.client_secret_file)
        cfg.sso = cfg.sso.model_copy(update={"client_secret_file": secret_file})
    if cfg.align is not None:
        cfg.align.rubric_out = fix(cfg.align.rubric_out) or cfg.align.rubric_out
    for judge in cfg.judges:
        rubric = Path(judge.rubric)
        if rubric.suffix in (".yaml", ".yml") and not rubric.is_absolute():
            judge.rubric = str(base / rubric)
    return cfg


def parse_config(data: Any, source: str | Path) -> TrajudgeConfig:
    """Validate a config mapping; relative paths resolve against ``source``'s folder."""
    src = str(source)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError(src, reason="a trajudge config must be a YAML mapping")
    try:
        cfg = TrajudgeConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise InputError(src, field=pydantic_field(tuple(err["loc"])), reason=msg) from None
    return _resolve(cfg, Path(source).resolve().parent)


def load_config(path: str | Path) -> TrajudgeConfig:
    """Read and validate ``trajudge.yaml``."""
    p = Path(path)
    data = read_yaml(p)
    return parse_config(data, p)


def dataset_name(cfg: TrajudgeConfig) -> str:
    """The dataset a config names: ``dataset.name``, else the stem of ``dataset.path``."""
    if cfg.dataset.name:
        return cfg.dataset.name
    if cfg.dataset.path is not None:
        return cfg.dataset.path.stem
    if cfg.dataset.source is not None:
        # imported on use: as in DatasetConfig._backend_source
        from trajudge.backends import parse_backend_url

        url = parse_backend_url(cfg.dataset.source, kinds=("phoenix", "mlflow"), need_name=True)
        return url.name
    raise InputError(
        "trajudge.yaml", field="dataset", reason="give dataset.name, dataset.path or dataset.source"
    )
