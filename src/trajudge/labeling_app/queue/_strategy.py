"""The label queue's strategy of a dataset and rubric: the lead chooses it in the app, every
app process of the store reads it before each item, and `trajudge label --strategy` is only
where it starts.

The choice is stored (``Store.set_label_strategy``, append-only: who, when, from what to
what) and the store itself refuses it from any account that is not an enabled lead, read in
the same transaction: a page that hid the widget from no one, or a session whose role was
taken away a moment ago, still changes nothing.

Under ``active`` the design is drawn when the strategy is chosen (so a dataset no judge
scored fails at the lead's click, not at an annotator's); a design already stored keeps its
budget and learning phase, since every label keeps the probability it was drawn with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trajudge.calibration.active._stored import learning_open, stored_design
from trajudge.judges import Rubric
from trajudge.labeling_app._config import STRATEGIES, AppConfig, Strategy
from trajudge.labeling_app.queue._queue import escalation_scores
from trajudge.store import Account, NotLead, Store


@dataclass(frozen=True)
class QueueChoice:
    """The strategy in force, its active design's budget and learning phase, and who chose it
    (None: the command line's ``--strategy``)."""

    strategy: Strategy
    budget: int | None = None
    learn: int | None = None
    chosen_by: str | None = None
    chosen_at: str | None = None


def queue_choice(store: Store, cfg: AppConfig, dataset: str, rubric_id: str) -> QueueChoice:
    """The strategy in force for ``dataset`` and ``rubric_id``: the lead's newest choice, else
    the app's ``--strategy`` (one indexed query: read before each item)."""
    row = store.label_strategy(dataset, rubric_id)
    if row is None or row["strategy"] not in STRATEGIES:
        return QueueChoice(cfg.strategy, cfg.budget, cfg.learn)
    strategy: Strategy = row["strategy"]
    return QueueChoice(strategy, row["budget"], row["learn"], row["name"], row["at"])


def strategies_for(rubric: Rubric) -> tuple[Strategy, ...]:
    """The strategies a rubric allows: a pairwise one has no active design (it draws single
    trajectories by a pass / fail verdict's uncertainty) and nothing escalated."""
    if rubric.mode == "pairwise":
        return ("random", "stratified", "disagreement")
    if rubric.scale.pass_threshold is None:
        return tuple(s for s in STRATEGIES if s != "active")
    return STRATEGIES


def choose_strategy(
    store: Store,
    cfg: AppConfig,
    dataset: str,
    rubric: Rubric,
    account: Account,
    strategy: str,
    *,
    budget: int | None = None,
    learn: int | None = None,
) -> dict[str, Any]:
    """Make ``strategy`` the queue's for ``dataset`` under ``rubric``, chosen by ``account``;
    returns the stored row. ValueError (nothing stored) for a strategy the rubric or the
    dataset cannot have; :class:`~trajudge.store.NotLead` (nothing stored) unless the account
    is an enabled lead in the store."""
    if strategy not in strategies_for(rubric):
        raise ValueError(f"{strategy!r} is not a strategy for rubric {rubric.id!r}")
    if budget is not None and budget < 1:
        raise ValueError(f"the budget must be at least 1, got {budget}")
    if learn is not None and learn < 0:
        raise ValueError(f"the learning phase must be at least 0 labels, got {learn}")
    if strategy == "escalated" and not escalation_scores(store, dataset):
        raise ValueError(f"dataset {dataset!r}: no aligned judge escalated any item")
    if strategy != "active":
        budget = learn = None
    lead = store.account(account.name)
    if lead is None or lead.disabled or lead.role != "lead":
        # the store checks again in the transaction that writes; this spares drawing a design
        raise NotLead(f"{account.name!r} is not an enabled lead: the strategy stays as it is")
    if strategy == "active" and store.label_draws(dataset, rubric.id).empty:
        stored_design(store, dataset, rubric, budget=budget, learn=learn)  # ValueError: none
    return store.set_label_strategy(
        dataset,
        rubric.id,
        strategy,
        name=account.name,
        started_with=cfg.strategy,
        budget=budget,
        learn=learn,
    )


def design_state(
    store: Store, dataset: str, rubric: Rubric, choice: QueueChoice
) -> tuple[int, ...]:
    """Under ``active``, the parts of the stored design (``Store.draw_phases``), the second
    part drawn first when the learning phase's labels are all in; ``()`` otherwise. It keys
    the cached queue, so the queue grows by the fitted draws for everyone at once."""
    if choice.strategy != "active":
        return ()
    phases = store.draw_phases(dataset, rubric.id)
    # the learning phase's few drawn items are checked first: reading the whole design (and
    # fitting) only once they are all answered, when phase 2 is drawn
    if phases == (1,) and not learning_open(store, dataset, rubric):
        stored_design(store, dataset, rubric)
        phases = store.draw_phases(dataset, rubric.id)
    return phases
