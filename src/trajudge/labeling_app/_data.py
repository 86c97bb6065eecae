"""Cached access to the store: the engine from ``st.cache_resource``, query results from
``st.cache_data`` with explicit arguments. Label rows are never cached: they change with
every click and each read is one indexed query.

The rubric and the annotator queues are shared read-only objects (``st.cache_resource``):
``st.cache_data`` would unpickle a fresh copy of a 100,000-item queue on every rerun.
"""

from __future__ import annotations

import streamlit as st

from trajudge.calibration.active._stop import StopRule
from trajudge.calibration.active._stored import active_summary, stored_design
from trajudge.judges import Rubric, load_rubric
from trajudge.labeling_app._config import AppConfig, Strategy
from trajudge.labeling_app.queue._pairs import (
    PairSet,
    build_pair_queue,
    labeling_pairs,
    pair_disagreement_scores,
)
from trajudge.labeling_app.queue._queue import (
    Queue,
    build_queue,
    disagreement_scores,
    escalation_scores,
    labeling_pool,
)
from trajudge.store import Store
from trajudge.trajectories import Trajectory


@st.cache_resource(show_spinner=False)
def get_store(db_url: str) -> Store:
    """One Store (and engine) per database URL for the whole server."""
    return Store(db_url)


@st.cache_resource(ttl=600, show_spinner=False)
def get_rubric(ref: str) -> Rubric:
    """The app's rubric (shared: never modified)."""
    return load_rubric(ref)


@st.cache_data(ttl=60, show_spinner=False)
def get_datasets(db_url: str) -> list[str]:
    return get_store(db_url).datasets()


@st.cache_data(ttl=300, show_spinner=False)
def get_count(db_url: str, dataset: str) -> int:
    return get_store(db_url).count_trajectories(dataset)


@st.cache_data(ttl=30, show_spinner=False)
def get_pool(db_url: str, dataset: str, rubric_id: str) -> tuple[str, ...]:
    """The annotators who share the non-overlap items, disabled accounts left out (refreshed
    every 30 s)."""
    store = get_store(db_url)
    return labeling_pool(store, store.label_annotators(dataset, rubric_id))


@st.cache_resource(ttl=600, show_spinner="Building your queue…", max_entries=64)
def get_queue(
    db_url: str,
    dataset: str,
    rubric_ref: str,
    annotator: str,
    strategy: Strategy,
    overlap: float,
    pool: tuple[str, ...],
    budget: int | None = None,
    reviewers: int = 1,
    learn: int | None = None,
    design: tuple[int, ...] = (),
) -> Queue:
    """The annotator's queue (shared by their sessions: never modified). ``active``: the
    items the dataset's frozen design drew (built with ``budget`` and ``learn`` the first
    time); ``design`` (the parts stored) only keys the cache, so a new part rebuilds it."""
    store = get_store(db_url)
    dis = None
    drawn = None
    if strategy == "disagreement":
        dis = disagreement_scores(store.judgments_frame(dataset), get_rubric(rubric_ref))
    elif strategy == "escalated":
        dis = escalation_scores(store, dataset)
    elif strategy == "active":
        del design  # only the cache key
        frozen = stored_design(store, dataset, get_rubric(rubric_ref), budget=budget, learn=learn)
        drawn = frozen.loc[frozen["drawn"].astype(bool), "trajectory_id"].tolist()
    return build_queue(
        store.trajectory_keys(dataset),
        annotator,
        strategy=strategy,
        overlap=overlap,
        pool=pool,
        disagreement=dis,
        drawn=drawn,
        reviewers=reviewers,
    )


@st.cache_data(ttl=300, show_spinner=False, max_entries=512)
def get_trajectory(db_url: str, dataset: str, trajectory_id: str) -> Trajectory | None:
    return get_store(db_url).trajectory(dataset, trajectory_id)


@st.cache_resource(ttl=300, show_spinner="Finding the pairs…", max_entries=16)
def get_pairs(db_url: str, dataset: str, rubric_id: str, max_pairs: int | None) -> PairSet:
    """The pairs to label under a pairwise rubric (shared: never modified; read again every
    5 minutes, so pairs a judge adds meanwhile come in)."""
    return labeling_pairs(get_store(db_url), dataset, rubric_id, max_pairs=max_pairs)


@st.cache_resource(ttl=600, show_spinner="Building your queue…", max_entries=64)
def get_pair_queue(
    db_url: str,
    dataset: str,
    rubric_id: str,
    max_pairs: int | None,
    annotator: str,
    strategy: Strategy,
    overlap: float,
    pool: tuple[str, ...],
    reviewers: int = 1,
) -> Queue:
    """The annotator's queue of pairs (shared by their sessions: never modified)."""
    store = get_store(db_url)
    dis = None
    if strategy in ("disagreement", "escalated"):
        dis = pair_disagreement_scores(store.judgments_frame(dataset), rubric_id)
    intents = dict(store.trajectory_keys(dataset))
    return build_pair_queue(
        get_pairs(db_url, dataset, rubric_id, max_pairs).pairs,
        intents,
        annotator,
        strategy=strategy,
        overlap=overlap,
        pool=pool,
        disagreement=dis,
        reviewers=reviewers,
    )


@st.cache_data(ttl=30, show_spinner=False)
def get_pair_pool(db_url: str, dataset: str, rubric_id: str) -> tuple[str, ...]:
    """The annotators who labeled pairs of the rubric, disabled accounts left out (refreshed
    every 30 s)."""
    store = get_store(db_url)
    return labeling_pool(store, store.pair_label_annotators(dataset, rubric_id))


@st.cache_data(ttl=60, show_spinner=False, max_entries=64)
def get_stop_lines(
    db_url: str,
    dataset: str,
    rubric_ref: str,
    labeled: int,
    stop_rule: tuple[str, float, float] | None = None,
) -> list[str]:
    """``--strategy active``: per judge, whether labelling may stop (``stop_rule``, default
    the app's ``--stop-when``: the statistic certified above its target by the confidence
    sequence, or about how many more labels). ``labeled`` (items anyone labeled) is in the
    key so that each new label counts again."""
    del labeled  # only the cache key
    statistic, target, level = AppConfig.from_env().stop_rule if stop_rule is None else stop_rule
    rule = StopRule(statistic, target, level)  # type: ignore[arg-type]  # checked by AppConfig
    summary = active_summary(get_store(db_url), dataset, get_rubric(rubric_ref), rule=rule)
    if summary is None:
        return []
    lines = []
    for judge, entry in summary["judges"].items():
        stop = entry.get("stop")
        text = stop["message"] if stop else "no drawn item labelled yet"
        lines.append(f"{judge}: {text}")
    return lines
