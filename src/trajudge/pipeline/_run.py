"""``run_pipeline``: the phases in order (see :mod:`trajudge.pipeline`)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from trajudge.alignment import aligned_judges_by_name
from trajudge.config import dataset_name, load_config
from trajudge.core import InputError
from trajudge.evalset import core_gate
from trajudge.judges import (
    DEFAULT_CACHE_PATH,
    Judge,
    ResponseCache,
    build_judges,
)
from trajudge.pipeline._core import core_results, core_task_ids
from trajudge.pipeline._phases import _align, _export, _phase, _pull, _score
from trajudge.pipeline._report import config_report
from trajudge.pipeline._scope import _check_limits, select_subset
from trajudge.pipeline._summary import RunSummary
from trajudge.report import write_report
from trajudge.rules import check_stored_dataset, load_specs, resolve_specs
from trajudge.store import Store
from trajudge.store.labels._label_files import import_labels
from trajudge.trajectories import read_trajectories


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
