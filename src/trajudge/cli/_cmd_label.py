"""`trajudge label` (the labeling app) and `trajudge labels export|import`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import typer

from trajudge.cli._app import (
    DEFAULT_DB,
    DbOption,
    app,
    console,
    err_console,
    existing_store_url,
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
    ctx: typer.Context,
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
            help="Deprecated (roles live in accounts now): gives this account the role "
            "adjudicator, as `trajudge annotators role NAME adjudicator` does.",
        ),
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="Host name the app answers to besides loopback and --host (repeatable): the "
            "name a reverse proxy forwards, e.g. labels.example.org.",
        ),
    ] = None,
    trusted_proxy: Annotated[
        list[str] | None,
        typer.Option(
            "--trusted-proxy",
            help="Address (or network, e.g. 10.0.0.0/8) of a reverse proxy in front of the "
            "app (repeatable): a request from it is taken to come from the address its "
            "X-Forwarded-For names (sign-in log, per-client throttle). Without it that header "
            "is ignored, from loopback too.",
        ),
    ] = None,
    session_hours: Annotated[
        float, typer.Option(min=0.01, max=720, help="Hours a sign-in lasts.")
    ] = 12.0,
    reviewers_per_item: Annotated[
        int,
        typer.Option(
            min=1,
            max=50,
            help="Annotators each item outside the overlap share goes to (default one).",
        ),
    ] = 1,
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
    stop_when: Annotated[
        str | None,
        typer.Option(
            "--stop-when",
            help="--strategy active: when labelling may stop, STATISTIC>=NUMBER[@LEVEL] with "
            "kappa, tpr, tnr or pass_rate (default kappa>=0.6@95%; the config's "
            "report.stop_when).",
        ),
    ] = None,
    learn: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="--strategy active: labels of the uniform learning phase that comes first; "
            "the judges' error rate by uncertainty is fitted on them and the rest drawn with "
            "it (default a quarter of the budget; 0: no learning phase).",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="trajudge.yaml: db, sso (single sign-on through an OpenID Connect provider) "
            "and report.stop_when.",
        ),
    ] = None,
) -> None:
    """Start the labeling app (Streamlit) on the store. With a pairwise rubric (e.g.
    --rubric trajectory_preference) it labels pairs of trials of the same task. With an sso:
    block in --config, people may sign in through the identity provider, each as the account
    of their verified e-mail (trajudge annotators add NAME --email E)."""
    from rich.markup import escape

    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.config import load_config
    from trajudge.judges import load_rubric
    from trajudge.labeling_app import AppConfig, escalation_scores, is_loopback, serve
    from trajudge.labeling_app._config import LOOPBACK_HOSTS, OLD_PASSWORD_ENVS
    from trajudge.report import parse_stop_rule
    from trajudge.store import Store

    cfg = load_config(config) if config is not None else None
    sso = cfg.sso if cfg is not None else None
    rule_text = stop_when or (cfg.report.stop_when if cfg is not None else "kappa>=0.6")
    rule = parse_stop_rule(rule_text, "--stop-when" if stop_when else "report.stop_when")

    def warn(text: str) -> None:
        err_console.print(
            f"[bold yellow]warning:[/] {escape(text)}", markup=True, highlight=False, soft_wrap=True
        )

    if not is_loopback(host):
        warn(
            f"binding to {host}: anyone who can reach this address reaches the sign-in page; "
            "serve it behind a reverse proxy with TLS (README: Running a labeling session for "
            "a team)."
        )
    for old in OLD_PASSWORD_ENVS:
        if os.environ.get(old):
            warn(f"{old} is no longer used: each person signs in with an account of their own.")
    hosts = [*LOOPBACK_HOSTS, *(allowed_host or ())]
    if host not in ("0.0.0.0", "::", ""):  # a wildcard is no name a browser sends
        hosts.append(host)
    if sso is not None and sso.redirect_uri is not None:
        # the browser comes back from the provider to this name: the Host check admits it
        hosts.append(str(urlsplit(sso.redirect_uri).hostname))
    app_config = AppConfig(
        db_url=existing_store_url(ctx, db, cfg.db if cfg is not None else None),
        dataset=dataset,
        rubric=rubric,
        show_judges=show_judges,
        strategy=strategy,
        overlap=overlap,
        max_pairs=max_pairs,
        budget=budget,
        learn=learn,
        session_hours=session_hours,
        allowed_hosts=tuple(hosts),
        reviewers=reviewers_per_item,
        stop_rule=(rule.statistic, rule.target, rule.level),
        trusted_proxies=tuple(trusted_proxy or ()),
    )
    if strategy == "active" and load_rubric(rubric).mode == "pairwise":
        raise fail(
            f"--strategy active: rubric {rubric!r} is pairwise; the active design draws single "
            "trajectories by a pass/fail verdict's uncertainty"
        )
    if strategy == "active":
        _freeze_active_design(app_config.db_url, dataset, rubric, budget, learn)
    if strategy == "escalated" and load_rubric(rubric).mode == "pairwise":
        # trajudge align fits on single trajectories, so what it escalates are trajectories:
        # no pair is ever escalated, and a pair queue "by escalation" would be another order
        raise fail(
            f"--strategy escalated: rubric {rubric!r} is pairwise, and aligned judges escalate "
            "single trajectories, not pairs (use --strategy disagreement to put the pairs the "
            "judges disagree on first)"
        )
    if strategy == "escalated" and dataset is not None:
        store = Store(app_config.db_url)
        try:
            if not escalation_scores(store, dataset):
                raise fail(
                    f"dataset {dataset!r}: no aligned judge escalated any item (run "
                    "trajudge align first)"
                )
        finally:
            store.close()
    if dataset is not None:
        _say_chosen_strategy(app_config.db_url, dataset, load_rubric(rubric).id, strategy)
    invite = _accounts(app_config.db_url, adjudicator or [], warn)
    shown = f"[{host}]" if ":" in host else host  # the address it listens on, as the README
    console.print(f"trajudge labels: http://{shown}:{port}  (Ctrl-C stops it)", highlight=False)
    if invite is not None:
        console.print(invite, highlight=False, soft_wrap=True)
    code = serve(app_config, host=host, port=port, sso=sso)
    if code not in (0, -2, -15):
        raise fail(f"the app stopped with exit code {code}", code=1)


def _say_chosen_strategy(db: str, dataset: str, rubric_id: str, strategy: str) -> None:
    """A lead's choice on the lead's page outlives a restart: say which order is in force when
    it is not the --strategy given."""
    # imported on use: `trajudge --help` loads no room
    from trajudge.store import Store

    store = Store(db)
    try:
        chosen = store.label_strategy(dataset, rubric_id)
    finally:
        store.close()
    if chosen is not None and chosen["strategy"] != strategy:
        console.print(
            f"queue order: {chosen['strategy']}, chosen by {chosen['name']} on the lead's page "
            f"at {str(chosen['at'])[:19]} UTC (--strategy {strategy} is only the starting value)",
            highlight=False,
        )


def _accounts(db: str, adjudicators: list[str], warn: Callable[[str], None]) -> str | None:
    """The deprecated --adjudicator names become account roles; a store without accounts
    gets a first lead: returns the line with its invite, printed once (the one-command
    start), or None."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.labeling_app.auth._manage import first_lead
    from trajudge.store import Store

    store = Store(db)
    try:
        for name in adjudicators:
            account = store.account(name.strip())
            if account is None:
                raise fail(
                    f"--adjudicator {name}: no such account; add it with trajudge annotators "
                    f"add {name} --role adjudicator"
                )
            role = account.role
            if role == "annotator":
                role = store.set_account_role(account.name, "adjudicator").role
            warn(
                f"--adjudicator is deprecated and goes in the next release: {account.name} "
                f"has the role {role} in the store (trajudge annotators role NAME ROLE)."
            )
        made = first_lead(store)
        if made is None:
            return None
        account, token = made
        return (
            f"no accounts yet: added {account.name} (lead); sign in with the name "
            f"{account.name} and the invite {token} (works once, for 7 days, then asks for a "
            "password); add others with trajudge annotators add NAME"
        )
    finally:
        store.close()


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


def _freeze_active_design(
    db: str, dataset: str | None, rubric: str, budget: int | None, learn: int | None
) -> None:
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
            design = stored_design(store, dataset, load_rubric(rubric), budget=budget, learn=learn)
        except ValueError as exc:
            raise fail(str(exc)) from None
    finally:
        store.close()
    drawn = int(design["drawn"].astype(bool).sum())
    if (design["phase"] == 1).any() and not (design["phase"] == 2).any():
        # the rest is drawn once the learning labels are in: say what is drawn so far
        console.print(
            f"active design: learning phase, {drawn} items drawn uniformly (probability "
            f"{design['probability'].iloc[0]:.3f}) from the first {len(design)} of "
            f"{json.loads(design['design'].iloc[0])['items']} items; the rest is drawn with "
            "probabilities fitted on their labels",
            highlight=False,
        )
        return
    console.print(
        f"active design: {drawn} of {len(design)} items drawn, probabilities "
        f"{design['probability'].min():.3f} to {design['probability'].max():.3f}",
        highlight=False,
    )
