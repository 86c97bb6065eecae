"""The report of a run, built from the config's ``report:`` section."""

from __future__ import annotations

from typing import Any

from trajudge.config import TrajudgeConfig
from trajudge.evalset import split_of
from trajudge.report import Report, build_report
from trajudge.store import Store


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
