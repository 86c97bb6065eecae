"""`trajudge label` (the labeling app) and `trajudge labels export|import`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trajudge.cli._app import (
    DEFAULT_DB,
    DbOption,
    app,
    console,
    err_console,
    fail,
    handle_user_errors,
    require_store,
)
from trajudge.labeling_app import DEFAULT_RUBRIC, Strategy
from trajudge.store import LabelFormat

labels_app = typer.Typer(help="Export and import human labels.", no_args_is_help=True)
app.add_typer(labels_app, name="labels")


@app.command("label")
@handle_user_errors
def label_cmd(
    db: DbOption = DEFAULT_DB,
    dataset: Annotated[
        str | None, typer.Option(help="Dataset to label (default: chosen in the app).")
    ] = None,
    rubric: Annotated[str, typer.Option(help="Rubric id or YAML path.")] = DEFAULT_RUBRIC,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8501,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = (
        "127.0.0.1"
    ),
    show_judges: Annotated[
        bool, typer.Option("--show-judges", help="Show judge verdicts (default: blind).")
    ] = False,
    strategy: Annotated[
        Strategy,
        typer.Option(
            help="Queue order: random, stratified, disagreement, escalated (the items an "
            "aligned judge sent to people first: trajudge align), or active (items drawn "
            "with known probabilities where the judges are unsure; estimates weighted by "
            "them: trajudge report's Labels section)."
        ),
    ] = "random",
    overlap: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="Share of items every annotator labels."),
    ] = 0.2,
    adjudicator: Annotated[
        list[str] | None,
        typer.Option(
            "--adjudicator",
            help="Name that may review every item and adjudicate (repeatable); signs in with "
            "TRAJUDGE_LABEL_ADJUDICATOR_PASSWORD. Others review only items they labeled.",
        ),
    ] = None,
    max_pairs: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Pairwise rubric with no pairwise judge run yet: pairs per task to label (a "
            "seeded sample, as a judge's max_pairs; default every pair of trials).",
        ),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="--strategy active: expected number of labels of the design, fixed when it "
            "is first built (default 200, at most the judged items).",
        ),
    ] = None,
) -> None:
    """Start the labeling app (Streamlit) on the store. With a pairwise rubric (e.g.
    --rubric trajectory_preference) it labels pairs of trials of the same task."""
    from rich.markup import escape

    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.judges import load_rubric
    from trajudge.labeling_app import AppConfig, escalation_scores, is_loopback, serve
    from trajudge.store import Store

    if not is_loopback(host):
        err_console.print(
            f"[bold yellow]warning:[/] binding to {escape(host)}: anyone who can reach this "
            "address can open the app; set TRAJUDGE_LABEL_PASSWORD.",
            markup=True,
            highlight=False,
            soft_wrap=True,
        )
    config = AppConfig(
        db_url=require_store(db),
        dataset=dataset,
        rubric=rubric,
        show_judges=show_judges,
        strategy=strategy,
        overlap=overlap,
        adjudicators=tuple(adjudicator or ()),
        max_pairs=max_pairs,
        budget=budget,
    )
    if strategy == "active" and load_rubric(rubric).mode == "pairwise":
        raise fail(
            f"--strategy active: rubric {rubric!r} is pairwise; the active design draws single "
            "trajectories by a pass/fail verdict's uncertainty"
        )
    if strategy == "active":
        _freeze_active_design(db, dataset, rubric, budget)
    if strategy == "escalated" and load_rubric(rubric).mode == "pairwise":
        # trajudge align fits on single trajectories, so what it escalates are trajectories:
        # no pair is ever escalated, and a pair queue "by escalation" would be another order
        raise fail(
            f"--strategy escalated: rubric {rubric!r} is pairwise, and aligned judges escalate "
            "single trajectories, not pairs (use --strategy disagreement to put the pairs the "
            "judges disagree on first)"
        )
    if strategy == "escalated" and dataset is not None:
        store = Store(db)
        try:
            if not escalation_scores(store, dataset):
                raise fail(
                    f"dataset {dataset!r}: no aligned judge escalated any item (run "
                    "trajudge align first)"
                )
        finally:
            store.close()
    shown = f"[{host}]" if ":" in host else host  # the address it listens on, as the README
    console.print(f"trajudge labels: http://{shown}:{port}  (Ctrl-C stops it)", highlight=False)
    code = serve(config, host=host, port=port)
    if code not in (0, -2, -15):
        raise fail(f"the app stopped with exit code {code}", code=1)


@labels_app.command("export")
@handle_user_errors
def labels_export_cmd(
    dataset: Annotated[str, typer.Argument(help="Dataset name.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="File to write.")],
    fmt: Annotated[
        LabelFormat | None,
        typer.Option("--format", help="csv, jsonl or parquet (default: from the suffix)."),
    ] = None,
    rubric: Annotated[str | None, typer.Option(help="Only labels of this rubric id.")] = None,
    pairs: Annotated[
        bool,
        typer.Option("--pairs", help="Pair labels (pairwise rubrics) instead of item labels."),
    ] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Write a dataset's labels (or, with --pairs, its pair labels) to CSV, JSONL or Parquet
    (atomically)."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.store import Store, export_labels, export_pair_labels

    store = Store(require_store(db))
    if pairs:
        n = export_pair_labels(store, dataset, out, fmt=fmt, rubric_id=rubric)
        console.print(f"wrote {n} pair labels to {out}", highlight=False)
        return
    n = export_labels(store, dataset, out, fmt=fmt, rubric_id=rubric)
    console.print(f"wrote {n} labels to {out}", highlight=False)
    n_pairs = len(store.pair_labels_frame(dataset, rubric_id=rubric))
    if n_pairs:  # not lost from view: the other kind of label is one flag away
        console.print(f"({n_pairs} pair labels not written: export them with --pairs)")


@labels_app.command("import")
@handle_user_errors
def labels_import_cmd(
    file: Annotated[Path, typer.Argument(help="CSV, JSONL or Parquet file of labels.")],
    dataset: Annotated[str, typer.Option(help="Dataset the labels belong to.")],
    annotator_column: Annotated[
        str, typer.Option(help="Column holding the annotator's name.")
    ] = "annotator",
    source: Annotated[str, typer.Option(help="Label source recorded on every row.")] = "human",
    fmt: Annotated[
        LabelFormat | None,
        typer.Option("--format", help="csv, jsonl or parquet (default: from the suffix)."),
    ] = None,
    pairs: Annotated[
        bool,
        typer.Option("--pairs", help="A file of pair labels (as written by export --pairs)."),
    ] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Import labels (or, with --pairs, pair labels) made elsewhere: every row is checked
    first, then all are written."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.store import Store, import_labels, import_pair_labels

    load = import_pair_labels if pairs else import_labels
    s = load(
        Store(require_store(db)),
        file,
        dataset,
        annotator_column=annotator_column,
        source=source,
        fmt=fmt,
    )
    console.print(
        f"{s.dataset}: {s.added} added, {s.updated} updated, {s.unchanged} unchanged",
        highlight=False,
    )


def _freeze_active_design(db: str, dataset: str | None, rubric: str, budget: int | None) -> None:
    """Build and store the active design before the app starts (a bad dataset fails here, with
    exit code 2, not in the browser); the design is per dataset, so one must be named."""
    # imported on use: `trajudge --help` loads no room
    from trajudge.calibration.active._stored import stored_design
    from trajudge.judges import load_rubric
    from trajudge.store import Store

    if dataset is None:
        raise fail("--strategy active needs --dataset: the design is drawn for one dataset")
    store = Store(db)
    try:
        if dataset not in store.datasets():
            raise fail(f"no dataset {dataset!r} in {store.url}")
        try:
            design = stored_design(store, dataset, load_rubric(rubric), budget=budget)
        except ValueError as exc:
            raise fail(str(exc)) from None
    finally:
        store.close()
    drawn = int(design["drawn"].astype(bool).sum())
    console.print(
        f"active design: {drawn} of {len(design)} items drawn, probabilities "
        f"{design['probability'].min():.3f} to {design['probability'].max():.3f}",
        highlight=False,
    )
