"""The main job: ``trajudge run CONFIG`` from import to the gated report, in one call.

Phases, in order, each resumable:

1. **import** the dataset named in ``trajudge.yaml`` (idempotent: unchanged trajectories are
   left alone), limited to the configured subset (``limits``) so every number in the report
   is about the same trajectories; with ``dataset.source`` (a Phoenix or MLflow URL), the
   traces new since the last pull instead, as ``trajudge import`` pulls them;
2. **rules**: every rule check, results stored;
3. **core layer** (when ``layers`` names core tasks, directly or as the core cases of an eval
   set, see :func:`core_task_ids`): the judges score the core tasks first; when the core set
   fails its gate (rule gates, then every judge), the run stops there with the reason (exit 1);
4. **judges**: every judge over the rest (gates first, cache, resume);
5. **labels**: a labels file named in the config is imported (all or nothing);
6. **align** (with an ``align:`` block): the judge is aligned with the labels on the dev
   tasks and measured on the holdout ones; the aligned judge is saved (a new version when
   anything changed) and the report shows it (:func:`trajudge.alignment.align_judge`), unless
   dev says the chosen method is worse than the judge or its threshold is degenerate: then the run
   says why and goes on, nothing saved;
7. **report**: calibration and reliability, written as Markdown, HTML and JSON; the exit code
   is the report's gate result;
8. **export** (with ``export:`` targets): the judgments, labels and calibration written back
   as ``trajudge export`` writes them (idempotent: a second run writes nothing twice).

Judges named in ``aligned_judges`` (saved earlier by ``trajudge align``) are scored in phase 4
like the others, and the report cuts their scores with their aligned rule.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from rich.console import Console
from rich.text import Text

from trajudge._terminal import judge_progress
from trajudge.alignment import align_judge, aligned_judges_by_name
from trajudge.config import TrajudgeConfig, dataset_name, load_config
from trajudge.core import InputError
from trajudge.evalset import core_gate, core_tasks, read_evalset, split_of
from trajudge.judges import (
    DEFAULT_CACHE_PATH,
    BatchSummary,
    Judge,
    ResponseCache,
    build_judges,
    make_engine,
    score_dataset,
)
from trajudge.report import Report, build_report, write_report
from trajudge.rules import check_stored_dataset, load_specs, resolve_specs
from trajudge.store import ImportSummary, Store
from trajudge.store.labels._label_files import LabelImportSummary, import_labels
from trajudge.trajectories import TaskSpec, Trajectory, read_trajectories

if TYPE_CHECKING:
    from trajudge.backends import PullSummary
    from trajudge.backends._export import ExportSummary


@dataclass
class RunSummary:
    """What ``trajudge run`` did, with the counts the summary line prints."""

    dataset: str
    trajectories: int = 0
    imported: ImportSummary | None = None
    pulled: PullSummary | None = None  # dataset.source: what the pull brought
    exported: list[ExportSummary] = field(default_factory=list)  # one per export: target
    gate_failures: int = 0
    judge_calls: int = 0  # calls that reached a model this run
    cache_hits: int = 0
    resumed: int = 0  # judgments already stored by an earlier (killed) run
    errors: int = 0
    no_reference: int = 0  # reference-mode items without a reference (not judged)
    dev_items: int = 0  # trajectories used only to tune thresholds
    cost_usd: float = 0.0
    labels: LabelImportSummary | None = None
    core: str | None = None  # the core layer's verdict line
    aligned: str | None = None  # the aligned judge saved by the align phase: "name vN"
    align_refused: str | None = None  # why the align phase saved nothing (dev said no)
    core_passed: bool = True
    report: Report | None = None
    paths: list[Path] = field(default_factory=list)
    phase_s: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        if not self.core_passed:
            return 1
        return 1 if self.report is not None and self.report.gate_failures else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "trajectories": self.trajectories,
            "gate_failures": self.gate_failures,
            "judge_calls": self.judge_calls,
            "cache_hits": self.cache_hits,
            "resumed": self.resumed,
            "errors": self.errors,
            "no_reference": self.no_reference,
            "dev_items": self.dev_items,
            "cost_usd": self.cost_usd,
            "core": self.core,
            "aligned": self.aligned,
            "align_refused": self.align_refused,
            "report": [str(p) for p in self.paths],
            "pulled": None if self.pulled is None else self.pulled.traces,
            "exported": {
                e.target: {"written": e.written, "unchanged": e.unchanged} for e in self.exported
            },
            "exit_code": self.exit_code,
            "phase_s": self.phase_s,
        }


def select_subset(trajectories: list[Trajectory], cfg: TrajudgeConfig) -> list[Trajectory]:
    """The configured subset: listed tasks, the first ``max_tasks`` tasks (file order), and
    trials below ``max_trials``."""
    lim = cfg.limits
    out = trajectories
    if lim.tasks is not None:
        wanted = set(lim.tasks)
        out = [t for t in out if t.task_id in wanted]
    if lim.max_tasks is not None:
        first = list(dict.fromkeys(t.task_id for t in out))[: lim.max_tasks]
        keep = set(first)
        out = [t for t in out if t.task_id in keep]
    if lim.max_trials is not None:
        out = [t for t in out if t.trial < lim.max_trials]
    return out


def config_report(store: Store, name: str, cfg: TrajudgeConfig, **given: Any) -> tuple[Report, int]:
    """The report of dataset ``name`` as ``trajudge run`` builds it from ``cfg`` (its
    ``report:`` section, ``gates``, the labels' source, ``rubric_dirs``, the dev split of
    ``report.dev_share``), and the number of dev trajectories left out. ``given`` are
    :func:`trajudge.report.build_report` arguments that replace the config's (the options of
    ``trajudge report -c``)."""
    rep = cfg.report
    dev: list[str] | None = None
    if rep.dev_share is not None:
        share = rep.dev_share
        dev = [
            tid
            for tid, task, _, _ in store.trajectory_heads(name)
            if split_of(task, share) == "dev"
        ]
    args: dict[str, Any] = {
        "label_source": cfg.labels.source if cfg.labels is not None else "human",
        "ks": rep.ks,
        "n_boot": rep.n_boot,
        "seed": rep.seed,
        "fail_under": rep.fail_under,
        "baseline": rep.baseline,
        "baseline_tolerance": rep.baseline_tolerance,
        "primary_source": rep.primary,
        "dev_items": dev,
        "rubric_dirs": cfg.rubric_dirs,
        "gates": cfg.gates,
        "stop_when": rep.stop_when,
    }
    args.update(given)
    if "rubric_dirs" in given:  # the config's folders, then the command line's
        args["rubric_dirs"] = [*cfg.rubric_dirs, *given["rubric_dirs"]]
    return build_report(store, name, **args), len(dev or [])


def _check_limits(store: Store, name: str, cfg: TrajudgeConfig, source: str, stored: int) -> None:
    """``limits`` must describe the stored dataset: every figure of the report is about it.

    A dataset imported earlier without (or with other) limits holds trajectories the limits
    leave out; judging a subset and reporting on the whole would mix the two, so the run is
    refused with the way out.
    """
    lim = cfg.limits
    if lim.tasks is None and lim.max_tasks is None and lim.max_trials is None:
        return
    chosen = len(select_subset(list(store.iter_trajectories(name)), cfg))
    if chosen != stored:
        raise InputError(
            source,
            field="limits",
            reason=f"the limits select {chosen} of the {stored} trajectories stored in dataset "
            f"{name!r}, and the report covers a whole dataset: give the subset a dataset.name "
            "of its own, or remove limits",
        )


@contextlib.contextmanager
def _phase(summary: RunSummary, name: str, console: Console | None) -> Iterator[None]:
    if console is not None:
        console.rule(Text(name, style="bold"))
    t0 = time.perf_counter()
    try:
        yield
    finally:
        summary.phase_s[name] = round(time.perf_counter() - t0, 3)


def _score(
    store: Store,
    dataset: str,
    judges: list[Judge],
    cfg: TrajudgeConfig,
    specs: dict[str, TaskSpec],
    defaults: TaskSpec | None,
    summary: RunSummary,
    console: Console | None,
    tasks: list[str] | None = None,
) -> BatchSummary:
    progress, update = judge_progress(console)
    with progress if progress is not None else contextlib.nullcontext():
        batch = score_dataset(
            store,
            dataset,
            judges,
            specs=specs,
            spec_defaults=defaults,
            progress=update,
            gates=cfg.gates,
            tasks=tasks,
            engine=make_engine(
                cfg.engine, store=store, dataset=dataset, judges=judges, address=cfg.address
            ),
        )
    summary.judge_calls += batch.judged + batch.errors - batch.cache_hits
    summary.cache_hits += batch.cache_hits
    summary.resumed += batch.resumed
    summary.errors += batch.errors
    summary.cost_usd += batch.cost_usd
    summary.gate_failures = max(summary.gate_failures, batch.gate_skipped)
    summary.no_reference = max(summary.no_reference, batch.no_reference)
    return batch


def core_task_ids(
    cfg: TrajudgeConfig, config_path: str | Path, *, dataset: str, present: set[str]
) -> list[str]:
    """The core set of a run: ``layers.core_tasks`` and the tasks of the core cases of the eval
    set at ``layers.evalset``, in that order, each once.

    Raises :class:`InputError` naming the config key (and the case) when a core task has no
    trajectory among ``present`` (the task ids of ``dataset``): a core set must not shrink
    silently.
    """
    if cfg.layers is None:
        return []
    named = {str(t): "layers.core_tasks" for t in cfg.layers.core_tasks}
    if cfg.layers.evalset is not None:
        for task, case in core_tasks(read_evalset(cfg.layers.evalset)).items():
            named.setdefault(task, f"layers.evalset ({cfg.layers.evalset}: case {case!r})")
    for task, where in named.items():
        if task not in present:
            raise InputError(
                str(config_path),
                field=where,
                reason=f"core task {task!r} has no trajectory in dataset {dataset!r}",
            )
    return list(named)


def core_results(
    store: Store,
    dataset: str,
    judges: list[Judge],
    tasks: list[str],
    gates: Collection[str] = ("gate",),
) -> pd.DataFrame:
    """One row per core trajectory: passed when its gates passed (``gates``: the severities
    that skipped the judges) and every judge's mean score (over orders and samples, of the
    judge's current configuration only) meets the rubric's pass threshold; None when a judge
    only errored on it."""
    rules = store.gate_results(dataset, gates)
    frame = store.judgments_frame(dataset)
    frame = frame[frame["config_sha256"].isin([j.config_sha256 for j in judges])]
    rows = []
    for t in store.trajectories(dataset):
        if t.task_id not in tasks:
            continue
        passed: bool | None = rules.get(t.id, True)
        for judge in judges if passed else []:
            mine = frame[(frame["judge"] == judge.name) & (frame["trajectory_id"] == t.id)]
            scores = mine[mine["error"].isna()]["score"].dropna()
            if scores.empty:
                passed = None
                break
            if not judge.rubric.scale.passed(float(scores.mean())):
                passed = False
                break
        rows.append({"case_id": t.id, "passed": passed})
    return pd.DataFrame(rows, columns=["case_id", "passed"])


def _align(
    store: Store,
    dataset: str,
    cfg: TrajudgeConfig,
    specs: dict[str, TaskSpec],
    defaults: TaskSpec | None,
    cache: ResponseCache | None,
    summary: RunSummary,
    console: Console | None,
    n_boot: int | None,
) -> None:
    """The align phase: :func:`align_judge` with the config's ``align:`` block."""
    assert cfg.align is not None
    spec = next((s for s in cfg.judges if s.name == cfg.align.judge), None)
    progress, update = judge_progress(console)
    with progress if progress is not None else contextlib.nullcontext():
        run = align_judge(
            store,
            dataset,
            cfg.align,
            spec=spec,
            label_source=cfg.labels.source if cfg.labels is not None else "human",
            rubric_dirs=[str(p) for p in cfg.rubric_dirs],
            specs=specs,
            spec_defaults=defaults,
            gates=cfg.gates,
            cache=cache,
            progress=update,
            ks=cfg.report.ks,
            n_boot=n_boot or cfg.report.n_boot,
            seed=cfg.report.seed,
        )
    if run.fewshot is not None:
        b = run.fewshot.batch
        summary.judge_calls += b.judged + b.errors - b.cache_hits
        summary.cache_hits += b.cache_hits
        summary.resumed += b.resumed
        summary.errors += b.errors
        summary.cost_usd += b.cost_usd
    if run.refusal is not None:  # the run goes on to the report: the judges are still judged
        summary.align_refused = run.refusal
        if console is not None:
            console.print(Text(f"align: {run.refusal}", style="bold red"), soft_wrap=True)
        return
    summary.aligned = f"{run.name} v{run.version}"
    if console is not None:
        console.print(
            f"aligned judge {run.name} version {run.version} ({run.record['rule']['method']}): "
            f"fitted on {run.result.n_dev_items} dev items, measured on "
            f"{run.result.n_holdout_items} holdout items",
            highlight=False,
            markup=False,
        )


def _pull(
    store: Store, name: str, cfg: TrajudgeConfig, summary: RunSummary, console: Console | None
) -> None:
    """The import phase of a ``dataset.source``: what is new at the backend since the last
    pull (the cursor is the store's, shared with ``trajudge import``)."""
    # imported on use: a run from a file loads no backend (HTTP client) code
    from trajudge.backends._source import pull_lines, pull_source

    assert cfg.dataset.source is not None
    summary.pulled, shown = pull_source(
        store, cfg.dataset.source, name, accept_loss=cfg.dataset.accept_loss
    )
    if console is not None:
        for line in pull_lines(summary.pulled, shown):
            console.print(line, markup=False, highlight=False, soft_wrap=True)


def _export(
    store: Store,
    name: str,
    cfg: TrajudgeConfig,
    summary: RunSummary,
    console: Console | None,
    n_boot: int | None,
) -> None:
    """The export phase: ``trajudge export`` to every ``export:`` target, after the report."""
    # imported on use: a run without export targets loads no backend code
    from trajudge.backends._export import export
    from trajudge.backends._source import export_lines

    summary.exported = export(store, name, cfg.export, n_boot=n_boot or cfg.report.n_boot)
    if console is not None:
        lines, notes = export_lines(summary.exported)
        for line in lines:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        for note in notes:
            console.print(note, style="yellow", markup=False, highlight=False, soft_wrap=True)


def run_pipeline(
    config_path: str | Path,
    *,
    db: str | None = None,
    console: Console | None = None,
    n_boot: int | None = None,
) -> RunSummary:
    """Run the whole job described by ``trajudge.yaml``; see the module docstring."""
    cfg = load_config(config_path)
    name = dataset_name(cfg)
    store = Store(db or cfg.db or None)
    summary = RunSummary(dataset=name)
    cache: ResponseCache | None = None
    try:
        with _phase(summary, "import", console):
            if cfg.dataset.path is not None:
                result = read_trajectories(
                    cfg.dataset.path,
                    fmt=cfg.dataset.format or "auto",
                    accept_loss=cfg.dataset.accept_loss,
                )
                if console is not None:
                    for loss in result.losses:
                        line = f"accepted loss: {loss.line()}"
                        console.print(line, markup=False, highlight=False)
                chosen = select_subset(result.trajectories, cfg)
                if not chosen:
                    raise InputError(
                        str(config_path),
                        field="limits",
                        reason="the subset selects no trajectories",
                    )
                tasks = {t.task_id for t in chosen}
                specs = {k: v for k, v in result.specs.items() if k in tasks}
                summary.imported = store.import_dataset(
                    name,
                    chosen,
                    specs,
                    source=str(cfg.dataset.path),
                    source_sha256=result.sha256,
                    fmt=result.fmt,
                )
            elif cfg.dataset.source is not None:
                _pull(store, name, cfg, summary, console)
            store.require_dataset(name)
            summary.trajectories = store.count_trajectories(name)
            _check_limits(store, name, cfg, str(config_path), summary.trajectories)
            if console is not None and summary.imported is not None:
                i = summary.imported
                console.print(
                    f"{summary.trajectories} trajectories in {name!r} "
                    f"({i.added} added, {i.updated} updated, {i.unchanged} unchanged)"
                )
        spec_path = cfg.specs.path if cfg.specs is not None else None
        with _phase(summary, "rules", console):
            checked = check_stored_dataset(store, name, spec_path, keep_reports=False)
            summary.gate_failures = (
                checked.summary.gate_failures  # severity "gate": the stored gates_passed
                if set(cfg.gates) == {"gate"}
                else sum(not ok for ok in store.gate_results(name, cfg.gates).values())
            )
            if console is not None:
                console.print(
                    f"{checked.summary.trajectories} trajectories checked; "
                    f"{summary.gate_failures} failed a gate (their judge calls are skipped)"
                )
        spec_set = load_specs(spec_path) if spec_path is not None else None
        task_specs, defaults = resolve_specs(store.task_specs(name), spec_set)
        core = core_task_ids(cfg, config_path, dataset=name, present=store.task_ids(name))
        judges: list[Judge] = []
        if cfg.judges or cfg.aligned_judges or cfg.align is not None:
            cache = ResponseCache(cfg.cache or DEFAULT_CACHE_PATH)
            judges = build_judges(
                cfg.judges, rubric_dirs=[str(p) for p in cfg.rubric_dirs], cache=cache
            )
            judges += aligned_judges_by_name(store, cfg.aligned_judges, cache=cache)
        if core and cfg.layers is not None:
            with _phase(summary, "core layer", console):
                if console is not None:
                    console.print(f"core tasks: {', '.join(core)}")
                if judges:
                    _score(store, name, judges, cfg, task_specs, defaults, summary, console, core)
                ok, reason = core_gate(
                    core_results(store, name, judges, core, cfg.gates),
                    min_pass_rate=cfg.layers.min_pass_rate,
                )
                summary.core, summary.core_passed = reason, ok
                if console is not None:
                    console.print(reason)
            if not ok:
                return summary
        if judges:
            with _phase(summary, "judges", console):
                _score(store, name, judges, cfg, task_specs, defaults, summary, console)
        if cfg.labels is not None and cfg.labels.path is not None:
            with _phase(summary, "labels", console):
                summary.labels = import_labels(
                    store,
                    cfg.labels.path,
                    name,
                    source=cfg.labels.source,
                    only_dataset=cfg.labels.only_dataset,
                )
                if console is not None:
                    lab = summary.labels
                    console.print(
                        f"{lab.total} labels ({cfg.labels.source}) in {name!r}: {lab.added} "
                        f"added, {lab.updated} updated, {lab.unchanged} unchanged"
                        + (
                            f"; {lab.outside} rows for trajectories outside the dataset "
                            "were left out (labels.only_dataset)"
                            if lab.outside
                            else ""
                        )
                    )
        if cfg.align is not None:
            with _phase(summary, "align", console):
                _align(store, name, cfg, task_specs, defaults, cache, summary, console, n_boot)
        with _phase(summary, "report", console):
            extra = {} if n_boot is None else {"n_boot": n_boot}
            summary.report, summary.dev_items = config_report(store, name, cfg, **extra)
            rep = cfg.report
            summary.paths = write_report(summary.report, rep.out, rep.formats)
        if cfg.export:
            with _phase(summary, "export", console):
                _export(store, name, cfg, summary, console, n_boot)
        return summary
    finally:
        if cache is not None:
            cache.close()
        store.close()
